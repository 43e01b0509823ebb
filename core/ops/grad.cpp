#include "core/ops/grad.h"

#include <algorithm>
#include <type_traits>

namespace tsr::ops {

GradContext::GradContext(Emitter& emitter, const ir::Node& node, std::string place, std::vector<Value> inputs,
                         std::vector<Value> outputs, std::vector<Value> grad_outputs, std::vector<bool> wants)
    : emitter_(emitter),
      node_(node),
      place_(std::move(place)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      grad_outputs_(std::move(grad_outputs)),
      wants_(std::move(wants)) {
  grads_.resize(inputs_.size());
}

Value GradContext::grad_output_or_zeros(size_t i) {
  const Value g = grad_output(i);
  return g.valid() ? g : zeros_like(emitter_, output(i));
}

void GradContext::set_grad(size_t i, Value g) {
  if (wants(i)) grads_[i] = g;
}

namespace {
// A tensor of `shape` (scalar or [1]) holding v converted to `dtype`.
Tensor filled(DType dtype, const Shape& shape, double v) {
  Tensor t;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half>) t = Tensor::from<Half>(shape, {Half{f32_to_f16(static_cast<float>(v))}});
    else if constexpr (std::is_same_v<T, BFloat16>)
      t = Tensor::from<BFloat16>(shape, {BFloat16{f32_to_bf16(static_cast<float>(v))}});
    else t = Tensor::from<T>(shape, {static_cast<T>(v)});
  });
  return t;
}
}  // namespace

Value scalar(Emitter& e, DType dtype, double v) { return e.constant(filled(dtype, {}, v)); }

Value shape_of(Emitter& e, Value v) { return e.emit("Shape", {v}); }

Value fill_shape(Emitter& e, Value shape, DType dtype, double fill) {
  return e.emit("ConstantOfShape", {shape}, {ir::Attribute::make_tensor("value", filled(dtype, {1}, fill))});
}

Value fill_like(Emitter& e, Value v, double fill) { return fill_shape(e, shape_of(e, v), e.type(v).dtype, fill); }

Value sum_to(Emitter& e, Value g, Value like) {
  const ValueType tg = e.type(g), tl = e.type(like);
  if (tg.fully_known() && tl.fully_known() && tg.shape == tl.shape) return g;
  return e.emit("SumTo", {g, shape_of(e, like)});
}

Value dims_of(Emitter& e, Value v, int64_t start, int64_t end) {
  const ValueType t = e.type(v);
  if (t.has_shape) {
    const auto r = static_cast<int64_t>(t.shape.size());
    const int64_t b = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
    const int64_t f = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
    std::vector<int64_t> dims;
    bool known = true;
    for (int64_t i = b; i < f; ++i) {
      known &= t.shape[static_cast<size_t>(i)] >= 0;
      dims.push_back(t.shape[static_cast<size_t>(i)]);
    }
    if (known) return ints_const(e, dims);
  }
  std::vector<ir::Attribute> attrs;
  if (start != 0) attrs.push_back(ir::Attribute::make_int("start", start));
  if (end != std::numeric_limits<int64_t>::max()) attrs.push_back(ir::Attribute::make_int("end", end));
  return e.emit("Shape", {v}, std::move(attrs));
}

std::optional<std::vector<int64_t>> known_ints(Emitter& e, Value v) {
  if (!v.valid()) return std::nullopt;
  const Tensor* t = e.known_value(v);
  if (!t) return std::nullopt;
  return t->to_i64_vector();
}

Value add_n(Emitter& e, const std::vector<Value>& terms) {
  if (terms.size() == 1) return terms[0];
  if (terms.size() == 2) return e.emit("Add", {terms[0], terms[1]});
  return e.emit("Sum", terms);
}

Value ints_const(Emitter& e, const std::vector<int64_t>& v) {
  return e.constant(Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v));
}

Value cast(Emitter& e, Value v, DType to) {
  if (e.type(v).dtype == to) return v;
  return e.emit("Cast", {v}, {ir::Attribute::make_int("to", static_cast<int64_t>(to))});
}

std::vector<ir::Attribute> copy_attrs(const ir::Node& node, std::initializer_list<std::string_view> names) {
  std::vector<ir::Attribute> out;
  for (std::string_view n : names)
    if (const ir::Attribute* a = node.attr(n)) out.push_back(*a);
  return out;
}

Expected<int64_t> static_axis(Emitter& e, Value v, int64_t axis) {
  const ValueType t = e.type(v);
  if (!t.has_shape) return unsupported("the rank must be known");
  const auto r = static_cast<int64_t>(t.shape.size());
  if (axis < -r || axis >= std::max<int64_t>(r, 1)) return invalid_argument("axis ", axis, " out of range for rank ", r);
  return axis < 0 ? axis + r : axis;
}

Status missing_rules_error(const std::map<std::string, std::vector<std::string>>& missing, std::string_view noun) {
  size_t count = 0;
  std::string list;
  for (const auto& [op, places] : missing)
    for (const std::string& p : places) {
      list += str_cat("\n  ", p);
      ++count;
    }
  return unsupported(count, " ", noun, count == 1 ? " has" : "s have", " no gradient rule (", missing.size(), " op",
                     missing.size() == 1 ? "" : "s", "):", list);
}

}  // namespace tsr::ops
