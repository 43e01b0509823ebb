#include "core/passes/infer_types.h"

#include <map>

#include "core/ir/topo.h"
#include "core/ops/op_def.h"

namespace tsr::passes {

Status check_ops_supported(const ir::Model& model) {
  const auto& reg = ops::OpRegistry::global();
  std::map<std::string, std::vector<std::string>> missing;
  for (size_t g = 0; g < model.graphs.size(); ++g) {
    const auto& graph = model.graphs[g];
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const auto& node = graph.nodes[n];
      if (!reg.find(node.op))
        missing[node.op].push_back(ir::node_place(static_cast<int32_t>(g), static_cast<int32_t>(n), node));
    }
  }
  if (missing.empty()) return ok_status();
  std::string msg = str_cat(missing.size(), " unsupported op", missing.size() == 1 ? "" : "s", ":");
  for (const auto& [op, places] : missing) {
    msg += str_cat("\n  ", op, " (", places.size(), "x, first at ", places.front(), ")");
  }
  return unsupported(msg);
}

namespace {

ops::ValueType type_of(const ir::TensorInfo& t) { return {t.dtype, t.has_shape, t.shape, t.kind}; }

Status merge(ir::TensorInfo& info, const ops::ValueType& inferred, const std::string& where) {
  if (inferred.kind == ValueKind::kSequence) info.kind = ValueKind::kSequence;
  if (inferred.dtype != DType::kUndefined) {
    if (info.dtype != DType::kUndefined && info.dtype != inferred.dtype)
      return invalid_model(where, ": declared dtype ", dtype_name(info.dtype), ", inferred ",
                           dtype_name(inferred.dtype));
    info.dtype = inferred.dtype;
  }
  if (!inferred.has_shape) return ok_status();
  if (!info.has_shape) {
    info.has_shape = true;
    info.shape = inferred.shape;
    return ok_status();
  }
  const ops::ValueType declared = type_of(info);
  if (info.shape.size() != inferred.shape.size())
    return invalid_model(where, ": declared ", declared.str(), ", inferred ", inferred.str(), " (rank mismatch)");
  for (size_t d = 0; d < info.shape.size(); ++d) {
    const int64_t a = info.shape[d], b = inferred.shape[d];
    if (a >= 0 && b >= 0 && a != b)
      return invalid_model(where, ": declared ", declared.str(), ", inferred ", inferred.str());
    if (a < 0 && b >= 0) info.shape[d] = b;
  }
  return ok_status();
}

}  // namespace

Status infer_types(ir::Model& model) {
  TSR_RETURN_IF_ERROR(check_ops_supported(model));
  const auto& reg = ops::OpRegistry::global();
  for (size_t gi = 0; gi < model.graphs.size(); ++gi) {
    auto& g = model.graphs[gi];
    const auto gidx = static_cast<int32_t>(gi);
    TSR_ASSIGN_OR_RETURN(std::vector<int32_t> order, ir::topological_order(g, gidx));
    for (int32_t n : order) {
      const ir::Node& node = g.nodes[static_cast<size_t>(n)];
      const std::string place = ir::node_place(gidx, n, node);
      const ops::OpDef* def = reg.find(node.op);
      TSR_RETURN_IF_ERROR(ops::check_node_against_def(*def, node, place));
      std::vector<ops::ValueType> in(node.inputs.size());
      std::vector<const Tensor*> vals(node.inputs.size(), nullptr);
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int32_t t = node.inputs[k];
        if (t < 0) continue;
        const auto& info = g.tensors[static_cast<size_t>(t)];
        in[k] = type_of(info);
        if (info.constant.defined()) vals[k] = &info.constant;
      }
      ops::InferContext ctx(node, place, std::move(in), std::move(vals), /*runtime=*/false);
      ctx.set_model(&model);
      TSR_RETURN_IF_ERROR(def->infer(ctx));
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        const int32_t t = node.outputs[k];
        if (t < 0) continue;
        TSR_RETURN_IF_ERROR(merge(g.tensors[static_cast<size_t>(t)], ctx.output(k), str_cat(place, ".output[", k, "]")));
      }
    }
  }
  return ok_status();
}

}  // namespace tsr::passes
