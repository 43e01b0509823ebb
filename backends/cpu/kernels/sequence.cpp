// CPU kernels for sequence and optional values (semantics: core/ops/families/sequence.cpp).
// Sequences are immutable lists of tensor handles: insert/erase build a new list that shares the
// element tensors, so no element data is copied.
#include <cstring>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;

// Reads a position input, normalizing negatives; `len_ok` is the largest valid index (len for
// insert, len - 1 otherwise).
Expected<int64_t> position(const KernelContext& ctx, size_t i, int64_t len, int64_t len_ok, int64_t def) {
  if (!ctx.input(i)) return def;
  int64_t p = ctx.input(i)->scalar_i64();
  if (p < 0) p += len;
  if (p < 0 || p > len_ok) return ctx.error("input[", i, "] (position) ", ctx.input(i)->scalar_i64(), " is out of range for a sequence of ", len);
  return p;
}

Status require_sequence(const KernelContext& ctx, size_t i) {
  if (!ctx.input(i)->is_sequence()) return ctx.error("input[", i, "]: a ", value_kind_name(ctx.input(i)->kind()), ", expected a sequence");
  return ok_status();
}

Status sequence_empty(KernelContext& ctx) {
  const auto d = static_cast<DType>(ctx.node().attr_int("dtype", static_cast<int64_t>(DType::kF32)));
  ctx.set_output(0, Tensor::sequence(d, {}));
  return ok_status();
}

Status sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> elems;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) elems.push_back(*ctx.input(i));
  ctx.set_output(0, Tensor::sequence(ctx.input(0)->dtype(), std::move(elems)));
  return ok_status();
}

Status sequence_insert(KernelContext& ctx) {
  TSR_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const Tensor& seq = *ctx.input(0);
  std::vector<Tensor> elems = seq.elements();
  const auto len = static_cast<int64_t>(elems.size());
  TSR_ASSIGN_OR_RETURN(int64_t p, position(ctx, 2, len, len, len));
  if (seq.dtype() != DType::kUndefined && ctx.input(1)->dtype() != seq.dtype())
    return ctx.error("input[1]: dtype ", dtype_name(ctx.input(1)->dtype()), ", the sequence holds ", dtype_name(seq.dtype()));
  elems.insert(elems.begin() + p, *ctx.input(1));
  ctx.set_output(0, Tensor::sequence(ctx.input(1)->dtype(), std::move(elems)));
  return ok_status();
}

Status sequence_at(KernelContext& ctx) {
  TSR_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const auto& elems = ctx.input(0)->elements();
  const auto len = static_cast<int64_t>(elems.size());
  TSR_ASSIGN_OR_RETURN(int64_t p, position(ctx, 1, len, len - 1, 0));
  ctx.set_output(0, elems[static_cast<size_t>(p)]);
  return ok_status();
}

Status sequence_erase(KernelContext& ctx) {
  TSR_RETURN_IF_ERROR(require_sequence(ctx, 0));
  std::vector<Tensor> elems = ctx.input(0)->elements();
  const auto len = static_cast<int64_t>(elems.size());
  TSR_ASSIGN_OR_RETURN(int64_t p, position(ctx, 1, len, len - 1, len - 1));
  elems.erase(elems.begin() + p);
  ctx.set_output(0, Tensor::sequence(ctx.input(0)->dtype(), std::move(elems)));
  return ok_status();
}

Status sequence_length(KernelContext& ctx) {
  TSR_RETURN_IF_ERROR(require_sequence(ctx, 0));
  ctx.set_output(0, Tensor::scalar<int64_t>(static_cast<int64_t>(ctx.input(0)->elements().size())));
  return ok_status();
}

// Copies rows [begin, begin+count) of axis `axis` of `src` (viewed as [outer, len, inner]).
Expected<Tensor> take_rows(const Tensor& src, int64_t axis, int64_t begin, int64_t count, bool keepdims) {
  Shape s = src.shape();
  const int64_t len = s[static_cast<size_t>(axis)];
  s[static_cast<size_t>(axis)] = count;
  if (!keepdims) s.erase(s.begin() + axis);
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::empty(src.dtype(), s));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= src.dim(d);
  for (int64_t d = axis + 1; d < src.rank(); ++d) inner *= src.dim(d);
  const size_t es = dtype_size(src.dtype());
  const auto* from = static_cast<const char*>(src.raw());
  auto* to = static_cast<char*>(out.raw_mut());
  const size_t chunk = static_cast<size_t>(count * inner) * es;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(to + static_cast<size_t>(o) * chunk, from + static_cast<size_t>((o * len + begin) * inner) * es, chunk);
  return out;
}

Status split_to_sequence(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  if (x.dtype() == DType::kString) return unsupported(ctx.place(), ": SplitToSequence of strings");
  auto ax = normalize_axis(ctx.node().attr_int("axis"), x.rank());
  if (!ax.ok()) return ax.status().with_context(ctx.place());
  const int64_t axis = *ax;
  const int64_t len = x.dim(axis);
  std::vector<int64_t> sizes;
  bool keepdims = true;
  if (!ctx.input(1)) {
    sizes.assign(static_cast<size_t>(len), 1);
    keepdims = ctx.node().attr_int("keepdims") != 0;
  } else if (ctx.input(1)->rank() == 0) {
    const int64_t n = ctx.input(1)->scalar_i64();
    if (n <= 0) return ctx.error("input[1] (split) must be positive, got ", n);
    for (int64_t b = 0; b < len; b += n) sizes.push_back(std::min(n, len - b));
  } else {
    sizes = ctx.input(1)->to_i64_vector();
    int64_t total = 0;
    for (int64_t v : sizes) {
      if (v < 0) return ctx.error("input[1] (split) has a negative size ", v);
      total += v;
    }
    if (total != len) return ctx.error("input[1] (split) sums to ", total, ", but axis ", axis, " has length ", len);
  }
  std::vector<Tensor> parts;
  int64_t begin = 0;
  for (int64_t n : sizes) {
    TSR_ASSIGN_OR_RETURN(Tensor part, take_rows(x, axis, begin, n, keepdims));
    parts.push_back(std::move(part));
    begin += n;
  }
  ctx.set_output(0, Tensor::sequence(x.dtype(), std::move(parts)));
  return ok_status();
}

Status concat_from_sequence(KernelContext& ctx) {
  TSR_RETURN_IF_ERROR(require_sequence(ctx, 0));
  const auto& elems = ctx.input(0)->elements();
  if (elems.empty()) return ctx.error("input[0]: cannot concatenate an empty sequence");
  const bool new_axis = ctx.node().attr_int("new_axis") != 0;
  const Tensor& first = elems[0];
  if (first.dtype() == DType::kString) return unsupported(ctx.place(), ": ConcatFromSequence of strings");
  auto ax = normalize_axis(ctx.node().attr_int("axis"), first.rank() + (new_axis ? 1 : 0));
  if (!ax.ok()) return ax.status().with_context(ctx.place());
  const int64_t axis = *ax;
  Shape out_shape = first.shape();
  if (new_axis) out_shape.insert(out_shape.begin() + axis, static_cast<int64_t>(elems.size()));
  else out_shape[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < elems.size(); ++i) {
    const Tensor& e = elems[i];
    bool ok = e.dtype() == first.dtype() && e.rank() == first.rank();
    for (int64_t d = 0; ok && d < e.rank(); ++d)
      if (d != axis || new_axis) ok = e.dim(d) == first.dim(d);
    if (!ok) return ctx.error("sequence element ", i, " ", dtype_name(e.dtype()), shape_str(e.shape()), " does not fit element 0 ", dtype_name(first.dtype()), shape_str(first.shape()));
    if (!new_axis) out_shape[static_cast<size_t>(axis)] += e.dim(axis);
  }
  TSR_ASSIGN_OR_RETURN(Tensor* out, ctx.alloc_output(0, first.dtype(), out_shape));
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out_shape[static_cast<size_t>(d)];
  auto* to = static_cast<char*>(out->raw_mut());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor& e : elems) {
      const size_t chunk = e.nbytes() / static_cast<size_t>(std::max<int64_t>(outer, 1));
      std::memcpy(to, static_cast<const char*>(e.raw()) + static_cast<size_t>(o) * chunk, chunk);
      to += chunk;
    }
  return ok_status();
}

Status optional(KernelContext& ctx) {
  if (ctx.input(0)) {
    ctx.set_output(0, *ctx.input(0));
    return ok_status();
  }
  const auto& t = ctx.output_type(0);
  ctx.set_output(0, Tensor::none(t.dtype, t.kind));
  return ok_status();
}

Status optional_has_element(KernelContext& ctx) {
  ctx.set_output(0, Tensor::scalar<bool>(ctx.input(0) && !ctx.input(0)->is_none()));
  return ok_status();
}

Status optional_get_element(KernelContext& ctx) {
  if (ctx.input(0)->is_none()) return ctx.error("input[0]: the optional is empty");
  ctx.set_output(0, *ctx.input(0));
  return ok_status();
}

}  // namespace

void register_sequence_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("SequenceEmpty") r.add_fn("SequenceEmpty", {}, sequence_empty);
  TSR_IF_SELECTED("SequenceConstruct") r.add_fn("SequenceConstruct", {}, sequence_construct);
  TSR_IF_SELECTED("SequenceInsert") r.add_fn("SequenceInsert", {}, sequence_insert);
  TSR_IF_SELECTED("SequenceAt") r.add_fn("SequenceAt", {}, sequence_at);
  TSR_IF_SELECTED("SequenceErase") r.add_fn("SequenceErase", {}, sequence_erase);
  TSR_IF_SELECTED("SequenceLength") r.add_fn("SequenceLength", {}, sequence_length);
  TSR_IF_SELECTED("SplitToSequence") r.add_fn("SplitToSequence", {}, split_to_sequence);
  TSR_IF_SELECTED("ConcatFromSequence") r.add_fn("ConcatFromSequence", {}, concat_from_sequence);
  TSR_IF_SELECTED("Optional") r.add_fn("Optional", {}, optional);
  TSR_IF_SELECTED("OptionalHasElement") r.add_fn("OptionalHasElement", {}, optional_has_element);
  TSR_IF_SELECTED("OptionalGetElement") r.add_fn("OptionalGetElement", {}, optional_get_element);
}

}  // namespace tsr::cpu
