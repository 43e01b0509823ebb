// Control-flow ops: If, Loop, Scan (ONNX opset-16 semantics, DESIGN.md §6).
//
// Subgraph convention (Tessera, differs from ONNX only in making captures explicit): a subgraph
// reads outer values only through its own inputs. The importer appends every outer value a
// subgraph captures as an extra node input *after* the ONNX inputs and as an extra subgraph input
// *after* the ONNX subgraph inputs, in the same order for every subgraph of the node, and records
// their count in the `num_captures` attribute (If: all inputs after `cond` are captures).
//   If:   inputs (cond, captures...);                       branches: (captures...) -> (outputs...)
//   Loop: inputs (M?, cond?, v_initial[N]..., captures[C]...); body: (iter_num, cond, v[N]...,
//         captures...) -> (cond, v[N]..., scan[K]...); outputs (v_final[N]..., scan_stacked[K]...)
//   Scan: inputs (state[N]..., scan_in[M]..., captures[C]...); body: (state..., slice[M]...,
//         captures...) -> (state..., scan_elem[K]...); outputs (state_final..., scan_out[K]...)
//         With `batched` = 1 (how the importer encodes ONNX Scan-8) states, scan inputs and all
//         outputs carry a leading batch dim and each batch element is scanned on its own.
// The executor runs these ops itself (core/exec/control_flow.cpp); this file gives their types.
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Expected<const ir::Graph*> subgraph(const InferContext& ctx, std::string_view attr) {
  const ir::Attribute* a = ctx.node().attr(attr);
  if (!a || a->kind != AttrKind::kGraph) return ctx.ir_error("missing graph attribute '", attr, "'");
  if (!ctx.model()) return ctx.ir_error("subgraph types need the model");
  if (a->i < 0 || static_cast<size_t>(a->i) >= ctx.model()->graphs.size())
    return ctx.ir_error("attribute '", attr, "': graph index ", a->i, " out of range");
  return &ctx.model()->graphs[static_cast<size_t>(a->i)];
}

ValueType declared(const ir::Graph& g, int32_t tensor) {
  const auto& t = g.tensors[static_cast<size_t>(tensor)];
  return {t.dtype, t.has_shape, t.shape, t.kind};
}

// Checks that subgraph input `k` accepts a value of type `v` (dtype and rank when both known).
Status check_sub_input(const InferContext& ctx, std::string_view attr, const ir::Graph& g, size_t k,
                       const ValueType& v) {
  const ValueType d = declared(g, g.inputs[k]);
  if (d.dtype != DType::kUndefined && v.dtype != DType::kUndefined && d.dtype != v.dtype)
    return ctx.ir_error(attr, " input[", k, "] \"", g.tensors[static_cast<size_t>(g.inputs[k])].name,
                        "\": dtype ", dtype_name(d.dtype), ", but the node passes ", dtype_name(v.dtype));
  if (d.has_shape && v.has_shape && d.shape.size() != v.shape.size())
    return ctx.ir_error(attr, " input[", k, "] \"", g.tensors[static_cast<size_t>(g.inputs[k])].name,
                        "\": rank ", d.shape.size(), ", but the node passes rank ", v.shape.size());
  return ok_status();
}

// Merges two possible types of one output (If branches): dims that differ become dynamic.
ValueType join(const ValueType& a, const ValueType& b) {
  ValueType r = a;
  if (!a.has_shape || !b.has_shape || a.shape.size() != b.shape.size()) {
    r.has_shape = false;
    r.shape.clear();
    return r;
  }
  for (size_t d = 0; d < r.shape.size(); ++d)
    if (a.shape[d] != b.shape[d]) r.shape[d] = -1;
  return r;
}

Status infer_if(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kBool}));
  TSR_ASSIGN_OR_RETURN(const ir::Graph* then_g, subgraph(ctx, "then_branch"));
  TSR_ASSIGN_OR_RETURN(const ir::Graph* else_g, subgraph(ctx, "else_branch"));
  const size_t captures = ctx.num_inputs() - 1;
  for (const auto& [g, attr] : {std::pair{then_g, "then_branch"}, std::pair{else_g, "else_branch"}}) {
    if (g->inputs.size() != captures)
      return ctx.ir_error(attr, " takes ", g->inputs.size(), " inputs, but the node passes ", captures);
    if (g->outputs.size() != ctx.num_outputs())
      return ctx.ir_error(attr, " has ", g->outputs.size(), " outputs, the node ", ctx.num_outputs());
    for (size_t k = 0; k < captures; ++k) TSR_RETURN_IF_ERROR(check_sub_input(ctx, attr, *g, k, ctx.input(k + 1)));
  }
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    const ValueType a = declared(*then_g, then_g->outputs[k]);
    const ValueType b = declared(*else_g, else_g->outputs[k]);
    if (a.dtype != DType::kUndefined && b.dtype != DType::kUndefined && a.dtype != b.dtype)
      return ctx.ir_error("output[", k, "]: then_branch gives ", dtype_name(a.dtype), ", else_branch ",
                          dtype_name(b.dtype));
    ValueType j = join(a, b);
    if (j.dtype == DType::kUndefined) j.dtype = b.dtype;
    ctx.output(k) = j;
  }
  return ok_status();
}

Status infer_loop(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph(ctx, "body"));
  const auto captures = static_cast<size_t>(ctx.node().attr_int("num_captures"));
  if (ctx.num_inputs() < 2 + captures) return ctx.ir_error("needs inputs (M, cond, v_initial..., captures...)");
  const size_t n = ctx.num_inputs() - 2 - captures;
  if (body->inputs.size() != 2 + n + captures)
    return ctx.ir_error("body takes ", body->inputs.size(), " inputs, expected ", 2 + n + captures,
                        " (iter_num, cond, ", n, " loop-carried, ", captures, " captured)");
  if (body->outputs.size() < 1 + n)
    return ctx.ir_error("body has ", body->outputs.size(), " outputs, expected at least ", 1 + n);
  const size_t k_scan = body->outputs.size() - 1 - n;
  if (ctx.num_outputs() != n + k_scan)
    return ctx.ir_error(ctx.num_outputs(), " outputs, expected ", n + k_scan, " (", n, " loop-carried, ", k_scan, " scan)");
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kBool}));
  for (size_t k = 0; k < n + captures; ++k)
    TSR_RETURN_IF_ERROR(check_sub_input(ctx, "body", *body, 2 + k, ctx.input(2 + k)));
  for (size_t k = 0; k < n; ++k) {
    // Loop-carried values may change shape between iterations: keep the dtype, and the shape
    // only where the initial value and the body agree.
    ctx.output(k) = join(ctx.input(2 + k), declared(*body, body->outputs[1 + k]));
    if (ctx.output(k).dtype == DType::kUndefined) ctx.output(k).dtype = declared(*body, body->outputs[1 + k]).dtype;
  }
  for (size_t k = 0; k < k_scan; ++k) {
    ValueType e = declared(*body, body->outputs[1 + n + k]);
    if (e.has_shape) e.shape.insert(e.shape.begin(), -1);
    ctx.output(n + k) = e;
  }
  return ok_status();
}

Status infer_scan(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph(ctx, "body"));
  const auto captures = static_cast<size_t>(ctx.node().attr_int("num_captures"));
  const int64_t m_attr = ctx.node().attr_int("num_scan_inputs");
  if (m_attr < 1) return ctx.ir_error("attribute 'num_scan_inputs' must be >= 1");
  const auto m = static_cast<size_t>(m_attr);
  if (ctx.num_inputs() < m + captures) return ctx.ir_error("fewer inputs than num_scan_inputs + num_captures");
  const size_t n = ctx.num_inputs() - m - captures;
  if (body->inputs.size() != n + m + captures)
    return ctx.ir_error("body takes ", body->inputs.size(), " inputs, expected ", n + m + captures);
  if (body->outputs.size() < n || ctx.num_outputs() != body->outputs.size())
    return ctx.ir_error("body has ", body->outputs.size(), " outputs, the node ", ctx.num_outputs());
  const size_t k_scan = body->outputs.size() - n;
  const auto in_axes = ctx.node().attr_ints("scan_input_axes", Ints(m, 0));
  const auto out_axes = ctx.node().attr_ints("scan_output_axes", Ints(k_scan, 0));
  if (in_axes.size() != m) return ctx.ir_error("scan_input_axes has ", in_axes.size(), " entries, expected ", m);
  if (out_axes.size() != k_scan) return ctx.ir_error("scan_output_axes has ", out_axes.size(), " entries, expected ", k_scan);
  const bool batched = ctx.node().attr_int("batched") != 0;
  // Without the batch dim, a batched node's states look like the body's.
  auto unbatched = [&](ValueType t) {
    if (batched && t.has_shape && !t.shape.empty()) t.shape.erase(t.shape.begin());
    return t;
  };
  for (size_t k = 0; k < n; ++k) TSR_RETURN_IF_ERROR(check_sub_input(ctx, "body", *body, k, unbatched(ctx.input(k))));
  for (size_t k = 0; k < captures; ++k)
    TSR_RETURN_IF_ERROR(check_sub_input(ctx, "body", *body, n + m + k, ctx.input(n + m + k)));
  const int64_t batch = batched && ctx.input(0).has_shape && !ctx.input(0).shape.empty() ? ctx.input(0).shape[0] : -1;
  for (size_t k = 0; k < n; ++k) {
    ValueType t = join(unbatched(ctx.input(k)), declared(*body, body->outputs[k]));
    if (batched && t.has_shape) t.shape.insert(t.shape.begin(), batch);
    ctx.output(k) = t;
  }
  for (size_t k = 0; k < k_scan; ++k) {
    ValueType e = declared(*body, body->outputs[n + k]);
    if (e.has_shape) {
      const auto r = static_cast<int64_t>(e.shape.size()) + 1;
      TSR_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(out_axes[k], r));
      e.shape.insert(e.shape.begin() + ax, -1);
      if (batched) e.shape.insert(e.shape.begin(), batch);
    }
    ctx.output(n + k) = e;
  }
  return ok_status();
}

// SequenceMap: body(input_sequence[i], additional[i] or additional...) for each i; outputs are
// sequences of the body's outputs.
Status infer_sequence_map(InferContext& ctx) {
  TSR_ASSIGN_OR_RETURN(const ir::Graph* body, subgraph(ctx, "body"));
  if (body->inputs.size() != ctx.num_inputs())
    return ctx.ir_error("body takes ", body->inputs.size(), " inputs, the node passes ", ctx.num_inputs());
  if (body->outputs.size() != ctx.num_outputs())
    return ctx.ir_error("body has ", body->outputs.size(), " outputs, the node ", ctx.num_outputs());
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    ValueType e = declared(*body, body->outputs[k]);
    e.kind = ValueKind::kSequence;
    ctx.output(k) = e;
  }
  return ok_status();
}

// ---- Subgraph input types (OpDef::subgraph_inputs) -------------------------------------------

// A loop-carried value's speculative type: the initial value's dtype and rank, every dim dynamic.
ValueType carried_type(const ValueType& initial) {
  ValueType t = initial;
  for (int64_t& d : t.shape) d = -1;
  return t;
}

Status if_subgraph_inputs(const InferContext& ctx, std::vector<SubgraphInputTypes>* out) {
  for (const char* attr : {"then_branch", "else_branch"}) {
    SubgraphInputTypes s{attr, {}, {}};
    for (size_t k = 1; k < ctx.num_inputs(); ++k) s.types.push_back(ctx.input(k));  // captures
    s.carried_from.assign(s.types.size(), -1);
    out->push_back(std::move(s));
  }
  return ok_status();
}

Status loop_subgraph_inputs(const InferContext& ctx, std::vector<SubgraphInputTypes>* out) {
  if (ctx.num_inputs() < 2) return ok_status();  // infer_loop reports it
  const auto captures = static_cast<size_t>(ctx.node().attr_int("num_captures"));
  if (ctx.num_inputs() < 2 + captures) return ok_status();
  const size_t n = ctx.num_inputs() - 2 - captures;
  SubgraphInputTypes s{"body", {ValueType::make(DType::kI64, {}), ValueType::make(DType::kBool, {})}, {-1, -1}};
  for (size_t k = 0; k < n; ++k) {
    s.types.push_back(carried_type(ctx.input(2 + k)));
    s.carried_from.push_back(static_cast<int>(1 + k));  // body output 0 is the condition
  }
  for (size_t k = 0; k < captures; ++k) {
    s.types.push_back(ctx.input(2 + n + k));
    s.carried_from.push_back(-1);
  }
  out->push_back(std::move(s));
  return ok_status();
}

Status scan_subgraph_inputs(const InferContext& ctx, std::vector<SubgraphInputTypes>* out) {
  const int64_t m_attr = ctx.node().attr_int("num_scan_inputs");
  const auto captures = static_cast<size_t>(ctx.node().attr_int("num_captures"));
  if (ctx.node().attr_int("batched") != 0 || m_attr < 1 ||
      ctx.num_inputs() < static_cast<size_t>(m_attr) + captures)
    return ok_status();  // batched Scan-8 states carry a batch dim: leave its body as declared
  const auto m = static_cast<size_t>(m_attr);
  const size_t n = ctx.num_inputs() - m - captures;
  const auto axes = ctx.node().attr_ints("scan_input_axes", Ints(m, 0));
  SubgraphInputTypes s{"body", {}, {}};
  for (size_t k = 0; k < n; ++k) {
    s.types.push_back(carried_type(ctx.input(k)));
    s.carried_from.push_back(static_cast<int>(k));
  }
  for (size_t k = 0; k < m; ++k) {
    ValueType slice = ctx.input(n + k);
    const int64_t r = static_cast<int64_t>(slice.shape.size());
    const int64_t axis = k < axes.size() ? axes[k] : 0;
    if (slice.has_shape && axis >= -r && axis < r) slice.shape.erase(slice.shape.begin() + (axis < 0 ? axis + r : axis));
    else slice = ValueType{slice.dtype, false, {}, slice.kind};
    s.types.push_back(slice);
    s.carried_from.push_back(-1);
  }
  for (size_t k = 0; k < captures; ++k) {
    s.types.push_back(ctx.input(n + m + k));
    s.carried_from.push_back(-1);
  }
  out->push_back(std::move(s));
  return ok_status();
}

}  // namespace

void register_control_flow_ops(OpRegistry& reg) {
  // Branches and bodies pass any value kind through (sequences, optionals).
  AnyValueKindAdder r(reg);
  auto add = [&](OpDef def, SubgraphInputsFn sub) {
    def.control_flow = true;
    def.subgraph_inputs = sub;
    r.add(std::move(def));
  };
  TSR_IF_SELECTED("SequenceMap") add(OpDef{"SequenceMap", "", 17, 1, -1, 1, -1, {{"body", AttrKind::kGraph, true}}, infer_sequence_map,
            "Applies body to each element of a sequence (and of sequence-valued additional inputs)"},
      nullptr);
  TSR_IF_SELECTED("If") add(OpDef{"If", "", 16, 1, -1, 1, -1,
            {{"then_branch", AttrKind::kGraph, true}, {"else_branch", AttrKind::kGraph, true}},
            infer_if, "Runs then_branch or else_branch by a boolean scalar condition"},
      if_subgraph_inputs);
  TSR_IF_SELECTED("Loop") add(OpDef{"Loop", "", 16, 0, -1, 0, -1,
            {{"body", AttrKind::kGraph, true}, int_attr("num_captures", 0)},
            infer_loop, "Runs body while i < M and cond, carrying values and stacking scan outputs"},
      loop_subgraph_inputs);
  TSR_IF_SELECTED("Scan") add(OpDef{"Scan", "", 16, 1, -1, 1, -1,
            {{"body", AttrKind::kGraph, true}, {"num_scan_inputs", AttrKind::kInt, true},
             {"scan_input_axes", AttrKind::kInts}, {"scan_input_directions", AttrKind::kInts},
             {"scan_output_axes", AttrKind::kInts}, {"scan_output_directions", AttrKind::kInts},
             int_attr("num_captures", 0), int_attr("batched", 0)},
            infer_scan, "Iterates body over slices of the scan inputs, carrying state"},
      scan_subgraph_inputs);
}

}  // namespace tsr::ops
