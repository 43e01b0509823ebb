#include "core/passes/infer_types.h"

#include <algorithm>
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


// Infers graphs depth first: a control-flow node first hands its input types to its subgraphs'
// inputs (OpDef::subgraph_inputs; only what the file left unknown is filled), infers them, then
// itself from their outputs. Loop-carried inputs get a speculative rank (the initial value's); it
// stays only if the body's matching output has that rank, otherwise the subgraphs are restored
// and inferred without it. Each graph is inferred once; each node's subgraphs are snapshotted at
// most once, so the pass stays linear in the model size times the nesting depth.
class TypeInference {
 public:
  explicit TypeInference(ir::Model& model) : model_(model), done_(model.graphs.size(), 0) {}

  Status run() {
    for (size_t gi = 0; gi < model_.graphs.size(); ++gi)
      if (!done_[gi]) TSR_RETURN_IF_ERROR(infer_graph(static_cast<int32_t>(gi)));
    return ok_status();
  }

 private:
  Status infer_graph(int32_t gidx) {
    done_[static_cast<size_t>(gidx)] = 1;
    TSR_ASSIGN_OR_RETURN(std::vector<int32_t> order, ir::topological_order(graph(gidx), gidx));
    for (int32_t n : order) TSR_RETURN_IF_ERROR(infer_node(gidx, n));
    return ok_status();
  }

  ir::Graph& graph(int32_t gi) { return model_.graphs[static_cast<size_t>(gi)]; }

  Status infer_node(int32_t gidx, int32_t n) {
    ir::Node& stored = graph(gidx).nodes[static_cast<size_t>(n)];
    const std::string place = ir::node_place(gidx, n, stored);
    const ops::OpDef* def = ops::OpRegistry::global().find(stored.op);
    TSR_RETURN_IF_ERROR(ops::check_node_against_def(*def, stored, place));
    // The one place a loaded, imported or rewritten model gets its attribute defaults.
    ops::fill_attribute_defaults(*def, stored);
    // Copied: inferring subgraphs below never touches this graph, but keep no reference across it.
    const ir::Node node = stored;
    std::vector<ops::ValueType> in(node.inputs.size());
    std::vector<const Tensor*> vals(node.inputs.size(), nullptr);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int32_t t = node.inputs[k];
      if (t < 0) continue;
      const auto& info = graph(gidx).tensors[static_cast<size_t>(t)];
      in[k] = type_of(info);
      if (info.constant.defined()) vals[k] = &info.constant;
    }
    ops::InferContext ctx(node, place, in, vals, /*runtime=*/false);
    ctx.set_model(&model_);
    if (def->subgraph_inputs) TSR_RETURN_IF_ERROR(infer_subgraphs(*def, ctx));
    TSR_RETURN_IF_ERROR(def->infer(ctx));
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const int32_t t = node.outputs[k];
      if (t < 0) continue;
      TSR_RETURN_IF_ERROR(merge(graph(gidx).tensors[static_cast<size_t>(t)], ctx.output(k), str_cat(place, ".output[", k, "]")));
    }
    return ok_status();
  }

  // The subgraph indices of the node's graph attributes named in `subs` that are not inferred yet.
  std::vector<std::pair<int32_t, const ops::SubgraphInputTypes*>> pending(
      const ir::Node& node, const std::vector<ops::SubgraphInputTypes>& subs) {
    std::vector<std::pair<int32_t, const ops::SubgraphInputTypes*>> out;
    for (const auto& s : subs) {
      const ir::Attribute* a = node.attr(s.attr);
      if (!a || a->kind != ir::AttrKind::kGraph || a->i < 0 || static_cast<size_t>(a->i) >= model_.graphs.size())
        continue;  // the op's inference reports it
      const auto gi = static_cast<int32_t>(a->i);
      if (!done_[static_cast<size_t>(gi)] && graph(gi).inputs.size() == s.types.size()) out.emplace_back(gi, &s);
    }
    return out;
  }

  // Fills the unknown parts of each subgraph input from `s` (speculative carried ranks only when
  // `speculate`).
  void refine_inputs(int32_t gi, const ops::SubgraphInputTypes& s, bool speculate) {
    ir::Graph& g = graph(gi);
    for (size_t k = 0; k < s.types.size(); ++k) {
      if (s.carried_from[k] >= 0 && !speculate) continue;
      ir::TensorInfo& info = g.tensors[static_cast<size_t>(g.inputs[k])];
      const ops::ValueType& t = s.types[k];
      if (info.dtype == DType::kUndefined) info.dtype = t.dtype;
      if (!info.has_shape && t.has_shape && t.kind == ValueKind::kTensor && info.kind == ValueKind::kTensor) {
        info.has_shape = true;
        info.shape = t.shape;
        info.dim_names.clear();
      }
    }
  }

  // Whether every speculated carried input's body output has the speculated rank.
  bool speculation_holds(int32_t gi, const ops::SubgraphInputTypes& s) {
    const ir::Graph& g = graph(gi);
    for (size_t k = 0; k < s.types.size(); ++k) {
      const int from = s.carried_from[k];
      if (from < 0 || !s.types[k].has_shape) continue;
      if (static_cast<size_t>(from) >= g.outputs.size()) return false;
      const ir::TensorInfo& o = g.tensors[static_cast<size_t>(g.outputs[static_cast<size_t>(from)])];
      if (!o.has_shape || o.shape.size() != s.types[k].shape.size()) return false;
    }
    return true;
  }

  // Every graph reachable from `gi` through graph attributes (gi included).
  void reachable(int32_t gi, std::vector<int32_t>* out) {
    out->push_back(gi);
    for (const ir::Node& n : graph(gi).nodes)
      for (const ir::Attribute& a : n.attributes)
        if (a.kind == ir::AttrKind::kGraph && a.i >= 0 && static_cast<size_t>(a.i) < model_.graphs.size() &&
            std::find(out->begin(), out->end(), static_cast<int32_t>(a.i)) == out->end())
          reachable(static_cast<int32_t>(a.i), out);
  }

  Status infer_subgraphs(const ops::OpDef& def, const ops::InferContext& ctx) {
    std::vector<ops::SubgraphInputTypes> subs;
    TSR_RETURN_IF_ERROR(def.subgraph_inputs(ctx, &subs));
    const auto pending_subs = pending(ctx.node(), subs);
    if (pending_subs.empty()) return ok_status();
    bool carried = false;
    for (const auto& [gi, s] : pending_subs)
      for (int from : s->carried_from) carried |= from >= 0;
    // Snapshot what the speculation may change: the subgraphs and everything nested in them.
    std::vector<int32_t> graphs;
    std::vector<std::vector<ir::TensorInfo>> saved;
    if (carried) {
      for (const auto& [gi, s] : pending_subs)
        if (std::find(graphs.begin(), graphs.end(), gi) == graphs.end()) reachable(gi, &graphs);
      for (int32_t g : graphs) saved.push_back(graph(g).tensors);
    }
    Status st = ok_status();
    for (const auto& [gi, s] : pending_subs) {
      refine_inputs(gi, *s, /*speculate=*/true);
      st = infer_graph(gi);
      if (!st.ok() || !speculation_holds(gi, *s)) break;
    }
    if (!carried) return st;
    bool holds = st.ok();
    for (const auto& [gi, s] : pending_subs) holds = holds && done_[static_cast<size_t>(gi)] && speculation_holds(gi, *s);
    if (holds) return ok_status();
    // The body changes a carried value's rank (or failed under the guess): infer it as declared.
    for (size_t i = 0; i < graphs.size(); ++i) {
      graph(graphs[i]).tensors = std::move(saved[i]);
      done_[static_cast<size_t>(graphs[i])] = 0;
    }
    for (const auto& [gi, s] : pending_subs) {
      refine_inputs(gi, *s, /*speculate=*/false);
      if (!done_[static_cast<size_t>(gi)]) TSR_RETURN_IF_ERROR(infer_graph(gi));
    }
    return ok_status();
  }

  ir::Model& model_;
  std::vector<char> done_;
};

}  // namespace

Status infer_types(ir::Model& model) {
  TSR_RETURN_IF_ERROR(check_ops_supported(model));
  return TypeInference(model).run();
}

}  // namespace tsr::passes
