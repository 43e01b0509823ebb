// The optimization driver and the index the passes share (see optimize.h).
#include "core/passes/optimize.h"

#include <algorithm>
#include <cmath>

#include "core/passes/infer_types.h"
#include "core/passes/optimize_internal.h"
#include "core/passes/verify_model.h"

namespace tsr::passes {

namespace opt {

GraphIndex::GraphIndex(ir::Graph& g)
    : g_(g),
      producer_(g.tensors.size(), -1),
      uses_(g.tensors.size(), 0),
      reader_sum_(g.tensors.size(), 0),
      dead_(g.nodes.size(), false),
      graph_output_(g.tensors.size(), false) {
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int32_t o : g.nodes[n].outputs)
      if (o >= 0) producer_[size_t(o)] = static_cast<int32_t>(n);
    for (int32_t i : g.nodes[n].inputs) {
      if (i < 0) continue;
      ++uses_[size_t(i)];
      reader_sum_[size_t(i)] += static_cast<int64_t>(n);
    }
  }
  for (int32_t o : g.outputs) {
    if (o < 0) continue;
    ++uses_[size_t(o)];
    graph_output_[size_t(o)] = true;
  }
}

bool GraphIndex::is_graph_output(int32_t id) const {
  if (id >= 0 && size_t(id) < graph_output_.size()) return graph_output_[size_t(id)];
  // A tensor added by a pass after the index was built.
  return std::find(g_.outputs.begin(), g_.outputs.end(), id) != g_.outputs.end();
}

int32_t GraphIndex::sole_consumer(int32_t id) const {
  if (uses(id) != 1 || is_graph_output(id)) return -1;
  const int64_t n = reader_sum_[size_t(id)];
  if (n < 0 || size_t(n) >= g_.nodes.size() || dead_[size_t(n)]) return -1;
  return static_cast<int32_t>(n);
}

const Tensor* GraphIndex::constant(int32_t id) const {
  if (id < 0 || size_t(id) >= g_.tensors.size()) return nullptr;
  const Tensor& t = g_.tensors[size_t(id)].constant;
  return t.defined() ? &t : nullptr;
}

void GraphIndex::replace_input(int32_t node, int32_t from, int32_t to) {
  for (int32_t& i : g_.nodes[size_t(node)].inputs) {
    if (i != from) continue;
    i = to;
    --uses_[size_t(from)];
    reader_sum_[size_t(from)] -= node;
    if (to >= 0 && size_t(to) < uses_.size()) {
      ++uses_[size_t(to)];
      reader_sum_[size_t(to)] += node;
    }
  }
}

int64_t GraphIndex::compact() {
  int64_t removed = 0;
  std::vector<ir::Node> kept;
  kept.reserve(g_.nodes.size());
  for (size_t n = 0; n < g_.nodes.size(); ++n) {
    if (dead_[n]) {
      ++removed;
      continue;
    }
    kept.push_back(std::move(g_.nodes[n]));
  }
  g_.nodes = std::move(kept);
  return removed;
}

Expected<int64_t> rewrite_nodes(ir::Model& model, int32_t graph_index, const NodeRewrite& rewrite) {
  GraphIndex ix(model.graphs[size_t(graph_index)]);
  int64_t rewrites = 0;
  for (size_t n = 0; n < ix.graph().nodes.size(); ++n) {
    if (ix.dead(static_cast<int32_t>(n))) continue;
    TSR_ASSIGN_OR_RETURN(const bool rewrote, rewrite(ix, static_cast<int32_t>(n)));
    rewrites += rewrote ? 1 : 0;
  }
  ix.compact();
  return rewrites;
}

bool is_scalar_constant(const GraphIndex& ix, int32_t id, double v) {
  const Tensor* c = ix.constant(id);
  if (!c || c->numel() != 1 || (c->dtype() != DType::kF32 && c->dtype() != DType::kF64)) return false;
  return std::fabs(c->scalar_f64(0) - v) <= 1e-6 * std::fabs(v);
}

const ir::Node* PatternMatcher::sole(int32_t id, const char* op) {
  const int32_t p = ix.producer(id);
  if (p < 0 || ix.dead(p) || g.nodes[size_t(p)].op != op || ix.uses(id) != 1 || ix.is_graph_output(id)) return nullptr;
  const ir::Node& nd = g.nodes[size_t(p)];
  if (nd.outputs.size() != 1) return nullptr;
  matched.push_back(p);
  return &nd;
}

int32_t PatternMatcher::other_than_scalar(const ir::Node* n, double v, bool commutative) {
  if (!n || n->inputs.size() != 2) return -1;
  if (is_scalar_constant(ix, n->inputs[1], v)) return n->inputs[0];
  if (commutative && is_scalar_constant(ix, n->inputs[0], v)) return n->inputs[1];
  return -1;
}

}  // namespace opt

namespace {

int64_t count_nodes(const ir::Model& m) {
  int64_t n = 0;
  for (const ir::Graph& g : m.graphs) n += static_cast<int64_t>(g.nodes.size());
  return n;
}

bool has_training_signature(const ir::Model& m) {
  for (const ir::Signature& s : m.signatures) {
    for (const std::string& b : s.bound_inputs)
      if (!b.empty()) return true;
    for (const std::string& u : s.updates)
      if (!u.empty()) return true;
  }
  return false;
}

}  // namespace

Status disable_pass(OptimizeOptions& o, std::string_view name) {
  const std::pair<const char*, bool*> flags[] = {
      {"fold_constants", &o.fold_constants}, {"quantize_fusion", &o.quantize_fusion}, {"fold_pad", &o.fold_pad}, {"pool_before_conv", &o.pool_before_conv}, {"fuse_attention", &o.fuse_attention},
      {"conv_bn", &o.conv_bn}, {"concat_affine", &o.concat_affine},               {"hardswish", &o.hardswish}, {"gelu", &o.gelu},
      {"layer_norm", &o.layer_norm},         {"matmul_add", &o.matmul_add},
      {"fold_matmul_transpose", &o.fold_matmul_transpose},
      {"skip_layer_norm", &o.skip_layer_norm}, {"fuse_residual", &o.fuse_residual},
      {"fuse_activation", &o.fuse_activation}, {"fuse_squeeze_excite", &o.fuse_squeeze_excite},
      {"fuse_separable", &o.fuse_separable},
      {"softmax_wrapper", &o.softmax_wrapper}, {"cse", &o.cse},
      {"fuse_elementwise", &o.fuse_elementwise}, {"quantize_lookup", &o.quantize_lookup},
      {"quantize_layout", &o.quantize_layout}, {"dce", &o.dce}};
  std::string names;
  for (const auto& [n, flag] : flags) {
    if (name == n) {
      *flag = false;
      return ok_status();
    }
    names += str_cat(names.empty() ? "" : ", ", n);
  }
  return invalid_argument("unknown optimization pass '", name, "' (passes: ", names, ")");
}

Expected<OptimizeReport> optimize(ir::Model& model, const OptimizeOptions& options) {
  OptimizeReport report;
  report.nodes_before = count_nodes(model);
  if (has_training_signature(model)) {
    report.skipped_training = true;
    report.nodes_after = report.nodes_before;
    return report;
  }
  struct Step {
    const char* name;
    bool on;
    opt::GraphPass pass;
  };
  // Constants first, so that the patterns below see folded values (constant pads, shapes);
  // folding BN before the activation fusion lets it see Conv -> act; CSE and DCE last clean up what
  // the rewrites left (the Shape node of a folded Softmax wrapper, duplicated weight readers);
  // elementwise fusion after CSE, so that merged duplicates fuse once.
  const Step steps[] = {
      {"dce", options.dce, &opt::eliminate_dead_code},
      // Before fold_constants, which would turn the DequantizeLinear of constant QDQ weights into
      // f32 constants.
      {"quantize_fusion", options.quantize_fusion, &opt::quantize_fusion},
      // Ranges of a constant length first (a decode step's position ids), so that what they feed
      // gets static shapes and the shape queries on it fold.
      {"fold_constants", options.fold_constants,
       [&](ir::Model& m, int32_t g) -> Expected<int64_t> {
         TSR_ASSIGN_OR_RETURN(const int64_t ranges, opt::offset_ranges(m, g));
         if (ranges > 0) TSR_RETURN_IF_ERROR(infer_types(m));
         TSR_ASSIGN_OR_RETURN(int64_t folded, opt::fold_constants(m, g, options.evaluate));
         // A Reshape whose target just folded gets its static shape only from the re-inference,
         // and the shape queries on what it feeds (the next transformer layer's) fold then.
         for (int64_t round = 0, more = folded; more > 0 && round < 16; ++round) {
           TSR_RETURN_IF_ERROR(infer_types(m));
           TSR_ASSIGN_OR_RETURN(more, opt::fold_constants(m, g, options.evaluate));
           folded += more;
         }
         return ranges + folded;
       }},
      {"fold_pad", options.fold_pad, &opt::fold_pad},
      {"pool_before_conv", options.pool_before_conv, &opt::pool_before_conv},
      {"fuse_attention", options.fuse_attention, &opt::fuse_attention},
      {"conv_bn", options.conv_bn, &opt::fold_conv_bn},
      {"concat_affine", options.concat_affine, &opt::concat_affine},
      {"hardswish", options.hardswish, &opt::recognize_hardswish},
      {"gelu", options.gelu, &opt::recognize_gelu},
      {"layer_norm", options.layer_norm, &opt::recognize_layer_norm},
      {"matmul_add", options.matmul_add, &opt::matmul_add_to_gemm},
      {"fold_matmul_transpose", options.fold_matmul_transpose, &opt::fold_matmul_transpose},
      {"skip_layer_norm", options.skip_layer_norm, &opt::fuse_skip_layer_norm},
      {"fuse_residual", options.fuse_residual, &opt::fuse_residual},
      {"fuse_activation", options.fuse_activation, &opt::fuse_activation},
      {"fuse_squeeze_excite", options.fuse_squeeze_excite, &opt::fuse_squeeze_excite},
      {"fuse_separable", options.fuse_separable, &opt::fuse_separable},
      {"softmax_wrapper", options.softmax_wrapper, &opt::fold_softmax_wrapper},
      {"cse", options.cse, &opt::eliminate_common_subexpressions},
      {"fuse_elementwise", options.fuse_elementwise, &opt::fuse_elementwise},
      // After fuse_elementwise: a chain fused there is tabulated by the kernel the unfused run uses.
      {"quantize_lookup", options.quantize_lookup,
       [&](ir::Model& m, int32_t g) { return opt::quantize_lookup(m, g, options.evaluate); }},
      {"dce", options.dce, &opt::eliminate_dead_code},
      // Last: the layout of the nodes the rewrites above made, counting only the readers dce left.
      {"quantize_layout", options.quantize_layout, &opt::quantize_layout},
  };
  for (const Step& s : steps) {
    if (!s.on) continue;
    int64_t total = 0;
    for (size_t g = 0; g < model.graphs.size(); ++g) {
      TSR_ASSIGN_OR_RETURN(int64_t n, s.pass(model, static_cast<int32_t>(g)));
      total += n;
    }
    // Folded shape queries make Reshape/Expand targets constant: infer again so that the passes
    // below see the static shapes they match on (opt_fold_constants.cpp).
    if (total > 0 && std::string_view(s.name) == "fold_constants") TSR_RETURN_IF_ERROR(infer_types(model));
    auto it = std::find_if(report.passes.begin(), report.passes.end(),
                           [&](const PassCount& p) { return p.pass == s.name; });
    if (it == report.passes.end()) report.passes.push_back({s.name, total});
    else it->rewrites += total;
  }
  // The rewritten model must pass the same checks as a loaded one; a failure here is a pass bug.
  Status v = verify_model(model);
  if (!v.ok()) return internal_error("optimize produced an invalid model: ", v.message());
  report.nodes_after = count_nodes(model);
  return report;
}

std::string describe(const OptimizeReport& report) {
  if (report.skipped_training)
    return str_cat("optimize: training model (train_step signature) left unchanged, ", report.nodes_before,
                   " nodes\n");
  std::string s = str_cat("optimize: ", report.nodes_before, " -> ", report.nodes_after, " nodes (all graphs)\n");
  for (const PassCount& p : report.passes) s += str_cat("  ", p.pass, ": ", p.rewrites, "\n");
  return s;
}

}  // namespace tsr::passes
