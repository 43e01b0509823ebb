// Matrix algebra beyond MatMul/Gemm: Einsum (opset 12), Det (opset 11), EyeLike (opset 9).
//   Einsum: equation "ij,jk->ik" (explicit) or "ij,jk" (implicit: output = labels used once, in
//     alphabetical order); "..." stands for broadcast leading dims; a label repeated in one
//     operand takes a diagonal.
//   Det: [*, M, M] -> [*].   EyeLike: 2-D shape of the input, ones on diagonal k.
// Sources: https://onnx.ai/onnx/operators/onnx__Einsum.html (numpy.einsum semantics), __Det, __EyeLike.
#include <algorithm>
#include <map>

#include "core/ops/einsum.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

// Parsed equation. Ellipsis dims are labels 'A'.. in the order of the broadcast dims (einsum
// equations only use lowercase/uppercase letters; we reserve chars < 32 for ellipsis dims).
struct Equation {
  std::vector<std::string> inputs;  // one label string per operand, '.' expanded later
  std::string output;
  bool explicit_output = false;
};

Expected<Equation> parse_equation(const std::string& eq_in) {
  std::string eq;
  for (char c : eq_in)
    if (c != ' ') eq += c;
  Equation e;
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  e.explicit_output = arrow != std::string::npos;
  if (e.explicit_output) e.output = eq.substr(arrow + 2);
  size_t start = 0;
  for (;;) {
    const auto comma = lhs.find(',', start);
    e.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const auto& t : e.inputs) {
    for (size_t i = 0; i < t.size(); ++i)
      if (!std::isalpha(static_cast<unsigned char>(t[i])) && !(t[i] == '.' && t.compare(i, 3, "...") == 0 && (i += 2, true)))
        return invalid_model("einsum equation \"", eq_in, "\": unexpected '", t[i], "'");
  }
  return e;
}

// Replaces "..." in `term` by `n` ellipsis labels (chars 1..n) aligned to the right.
std::string expand(const std::string& term, int64_t n, int64_t max_n) {
  const auto pos = term.find("...");
  if (pos == std::string::npos) return term;
  std::string dots;
  for (int64_t i = max_n - n; i < max_n; ++i) dots += static_cast<char>(1 + i);
  return term.substr(0, pos) + dots + term.substr(pos + 3);
}

}  // namespace

Status einsum_labels(const std::string& equation, const std::vector<int64_t>& ranks, std::vector<std::string>* in_labels,
                     std::string* out_labels) {
  TSR_ASSIGN_OR_RETURN(Equation e, parse_equation(equation));
  if (e.inputs.size() != ranks.size())
    return invalid_model("einsum equation \"", equation, "\" has ", e.inputs.size(), " operands, the node has ", ranks.size(), " inputs");
  int64_t max_dots = 0;
  std::vector<int64_t> dots(ranks.size(), 0);
  for (size_t k = 0; k < ranks.size(); ++k) {
    const bool has = e.inputs[k].find("...") != std::string::npos;
    const auto letters = static_cast<int64_t>(e.inputs[k].size()) - (has ? 3 : 0);
    if ((!has && letters != ranks[k]) || (has && letters > ranks[k]))
      return invalid_model("einsum operand ", k, " \"", e.inputs[k], "\" does not match its rank ", ranks[k]);
    dots[k] = has ? ranks[k] - letters : 0;
    max_dots = std::max(max_dots, dots[k]);
  }
  in_labels->clear();
  for (size_t k = 0; k < ranks.size(); ++k) in_labels->push_back(expand(e.inputs[k], dots[k], max_dots));
  if (e.explicit_output) {
    *out_labels = expand(e.output, max_dots, max_dots);
  } else {
    std::map<char, int> count;
    for (const auto& t : *in_labels)
      for (char c : t) ++count[c];
    out_labels->clear();
    for (int64_t i = 0; i < max_dots; ++i) *out_labels += static_cast<char>(1 + i);
    for (const auto& [c, n] : count)
      if (n == 1 && c > 31) *out_labels += c;
  }
  for (char c : *out_labels) {
    bool found = false;
    for (const auto& t : *in_labels) found = found || t.find(c) != std::string::npos;
    if (!found) return invalid_model("einsum output label '", c, "' appears in no operand");
  }
  return ok_status();
}

namespace {

Status infer_einsum(InferContext& ctx) {
  const std::string eq = ctx.node().attr_string("equation");
  for (size_t i = 1; i < ctx.num_inputs(); ++i) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input(i).has_shape) {
      ctx.set_output_unknown_shape(0, ctx.input(0).dtype);
      return ok_status();
    }
    ranks.push_back(static_cast<int64_t>(ctx.input(i).shape.size()));
  }
  std::vector<std::string> in;
  std::string out;
  Status s = einsum_labels(eq, ranks, &in, &out);
  if (!s.ok()) return ctx.ir_error(s.message());
  std::map<char, int64_t> size;
  for (size_t k = 0; k < in.size(); ++k)
    for (size_t d = 0; d < in[k].size(); ++d) {
      const int64_t v = ctx.input(k).shape[d];
      auto it = size.find(in[k][d]);
      if (it == size.end() || it->second == 1 || it->second < 0) size[in[k][d]] = v;
      else if (v >= 0 && v != 1 && v != it->second)
        return ctx.arg_error("einsum label '", in[k][d] < 32 ? '.' : in[k][d], "' has size ", it->second, " and ", v);
    }
  Shape shape;
  for (char c : out) shape.push_back(size[c]);
  ctx.set_output(0, ctx.input(0).dtype, shape);
  return ok_status();
}

Status infer_det(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 2, 64));
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  const int64_t m = x.shape[x.shape.size() - 1], n = x.shape[x.shape.size() - 2];
  if (m >= 0 && n >= 0 && m != n) return ctx.arg_error("input[0]: shape ", shape_str(x.shape), ", the last two dims must be square");
  ctx.set_output(0, x.dtype, Shape(x.shape.begin(), x.shape.end() - 2));
  return ok_status();
}

Status infer_eye_like(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 2, 2));
  DType d = ctx.input(0).dtype;
  if (ctx.node().attr("dtype")) {
    const int64_t v = ctx.node().attr_int("dtype", 1);
    if (!dtype_valid(static_cast<int>(v)) || static_cast<DType>(v) == DType::kString)
      return ctx.ir_error("attribute 'dtype' = ", v, " is not a numeric dtype");
    d = static_cast<DType>(v);
  }
  ctx.output(0) = ValueType{d, ctx.input(0).has_shape, ctx.input(0).shape};
  return ok_status();
}

}  // namespace

void register_matrix_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Einsum") r.add(OpDef{"Einsum", "", 12, 1, -1, 1, 1, {{"equation", AttrKind::kString, true}}, infer_einsum,
              "Einstein summation over labeled axes (numpy.einsum)"});
  TSR_IF_SELECTED("Det") r.add(OpDef{"Det", "", 11, 1, 1, 1, 1, {}, infer_det, "Determinant of square matrices [*, M, M] -> [*]"});
  TSR_IF_SELECTED("EyeLike") r.add(OpDef{"EyeLike", "", 9, 1, 1, 1, 1, {{"dtype", AttrKind::kInt}, int_attr("k", 0)}, infer_eye_like,
              "Ones on diagonal k of a 2-D tensor shaped like the input"});
}

}  // namespace tsr::ops
