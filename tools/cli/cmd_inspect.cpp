// `tessera inspect MODEL [--json]`: what a model contains, as text or JSON.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/exec/optimized_model.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/json_writer.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {
namespace {

// One kGraph / kGraphs reference: node `node` of graph `parent` owns graph `child`.
struct SubgraphRef {
  int32_t parent;
  int32_t node;
  std::string attr;
  int32_t child;
};

struct Summary {
  std::vector<SubgraphRef> refs;
  std::vector<std::pair<std::string, size_t>> op_counts;  // by count desc, then name
  size_t nodes = 0;
  size_t constants = 0;
  uint64_t param_count = 0;
  uint64_t param_bytes = 0;
};

Summary summarize(const ir::Model& m) {
  Summary s;
  std::map<std::string, size_t> hist;
  for (size_t g = 0; g < m.graphs.size(); ++g) {
    const auto& graph = m.graphs[g];
    s.nodes += graph.nodes.size();
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      const auto& node = graph.nodes[n];
      ++hist[node.op];
      for (const auto& a : node.attributes) {
        if (a.kind == ir::AttrKind::kGraph)
          s.refs.push_back({int32_t(g), int32_t(n), a.name, int32_t(a.i)});
        else if (a.kind == ir::AttrKind::kGraphs)
          for (int64_t c : a.ints) s.refs.push_back({int32_t(g), int32_t(n), a.name, int32_t(c)});
      }
    }
    for (const auto& t : graph.tensors)
      if (t.constant.defined()) {
        ++s.constants;
        s.param_count += static_cast<uint64_t>(t.constant.numel());
        s.param_bytes += t.constant.nbytes();
      }
  }
  s.op_counts.assign(hist.begin(), hist.end());
  std::stable_sort(s.op_counts.begin(), s.op_counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return s;
}

// "[1, 3, H, ?]": symbolic names where the dim is dynamic and named; "[*]" for unknown rank.
std::string dims_str(const ir::TensorInfo& t) {
  if (!t.has_shape) return "[*]";
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ", ";
    const bool named = i < t.dim_names.size() && !t.dim_names[i].empty();
    if (t.shape[i] >= 0) s += std::to_string(t.shape[i]);
    else s += named ? t.dim_names[i] : "?";
  }
  return s + "]";
}

std::string bytes_str(uint64_t b) {
  if (b >= (uint64_t{1} << 20)) return str_cat(static_cast<double>(b) / (1 << 20), " MiB");
  if (b >= 1024) return str_cat(static_cast<double>(b) / 1024, " KiB");
  return str_cat(b, " B");
}

void print_tree(const ir::Model& m, const Summary& s, int32_t g, int depth, std::set<int32_t>& seen) {
  const auto& graph = m.graphs[size_t(g)];
  const std::string indent(size_t(2 + 2 * depth), ' ');
  std::cout << indent << "graph[" << g << "] \"" << graph.name << "\": " << graph.nodes.size() << " nodes, "
            << graph.tensors.size() << " tensors, " << graph.inputs.size() << " inputs, " << graph.outputs.size()
            << " outputs\n";
  if (!seen.insert(g).second || depth > 64) return;  // verified models are acyclic; stay safe anyway
  for (const auto& r : s.refs) {
    if (r.parent != g) continue;
    const auto& node = graph.nodes[size_t(r.node)];
    std::cout << indent << "  node[" << r.node << "] (" << node.op << " \"" << node.name << "\")." << r.attr << ":\n";
    if (r.child >= 0 && size_t(r.child) < m.graphs.size()) print_tree(m, s, r.child, depth + 2, seen);
  }
}

void print_values(const ir::Graph& g, const std::vector<int32_t>& ids) {
  for (size_t k = 0; k < ids.size(); ++k) {
    const auto& t = g.tensors[size_t(ids[k])];
    std::cout << "  [" << k << "] " << t.name << ": ";
    if (t.kind == ValueKind::kTensor) std::cout << dtype_name(t.dtype) << " " << dims_str(t) << "\n";
    else std::cout << value_kind_name(t.kind) << "(" << dtype_name(t.dtype) << " " << dims_str(t) << ")\n";
  }
}

int print_text(const std::string& path, const ir::Model& m, const Summary& s, const passes::OptimizeReport* opt) {
  std::cout << "model: " << path << "\n"
            << "producer: " << (m.producer.empty() ? "(none)" : m.producer) << "\n"
            << "format version: " << m.version << "\n"
            << "graphs: " << m.graphs.size() << " (" << s.nodes << " nodes in all)\n";
  // What `tessera run` (which optimizes by default) and `tessera optimize` make of it.
  if (opt) std::cout << passes::describe(*opt);
  std::set<int32_t> seen;
  print_tree(m, s, 0, 0, seen);
  for (size_t g = 1; g < m.graphs.size(); ++g)
    if (!seen.count(int32_t(g))) {
      std::cout << "  (unreferenced)\n";
      print_tree(m, s, int32_t(g), 1, seen);
    }
  const auto& main = m.main();
  std::cout << "inputs:\n";
  print_values(main, main.inputs);
  std::cout << "outputs:\n";
  print_values(main, main.outputs);
  std::cout << "ops: " << s.op_counts.size() << " distinct\n";
  for (const auto& [op, n] : s.op_counts) std::cout << "  " << op << ": " << n << "\n";
  std::cout << "parameters: " << s.param_count << " in " << s.constants << " constants (" << bytes_str(s.param_bytes)
            << ")\n";
  std::cout << "signatures:" << (m.signatures.empty() ? " (none)" : "") << "\n";
  for (const auto& sig : m.signatures) std::cout << "  " << sig.name << " -> graph[" << sig.graph << "]\n";
  std::cout << "metadata:" << (m.metadata.empty() ? " (none)" : "") << "\n";
  for (const auto& [k, v] : m.metadata) std::cout << "  " << k << ": " << v << "\n";
  return kExitOk;
}

void json_values(JsonWriter& w, const ir::Graph& g, const std::vector<int32_t>& ids) {
  w.begin_array();
  for (size_t k = 0; k < ids.size(); ++k) {
    const auto& t = g.tensors[size_t(ids[k])];
    w.begin_object().key("index").value(k).key("name").value(t.name).key("dtype").value(dtype_name(t.dtype));
    w.key("kind").value(value_kind_name(t.kind));
    w.key("shape");
    if (t.has_shape) w.value(t.shape); else w.null();
    w.key("dim_names").begin_array();
    for (size_t i = 0; i < t.shape.size(); ++i) w.value(i < t.dim_names.size() ? t.dim_names[i] : std::string());
    w.end_array().end_object();
  }
  w.end_array();
}

int print_json(const std::string& path, const ir::Model& m, const Summary& s, const passes::OptimizeReport* opt) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.key("model").value(path).key("producer").value(m.producer).key("format_version").value(uint64_t(m.version));
  if (opt) {
    w.key("optimized").begin_object().key("nodes_before").value(opt->nodes_before);
    w.key("nodes_after").value(opt->nodes_after).key("passes").begin_object();
    for (const auto& p : opt->passes) w.key(p.pass).value(p.rewrites);
    w.end_object().end_object();
  }
  w.key("graphs").begin_array();
  for (size_t g = 0; g < m.graphs.size(); ++g) {
    const auto& graph = m.graphs[g];
    w.begin_object().key("index").value(g).key("name").value(graph.name);
    w.key("nodes").value(graph.nodes.size()).key("tensors").value(graph.tensors.size());
    w.key("inputs").begin_array();
    for (int32_t id : graph.inputs) w.value(graph.tensors[size_t(id)].name);
    w.end_array().key("outputs").begin_array();
    for (int32_t id : graph.outputs) w.value(graph.tensors[size_t(id)].name);
    w.end_array().key("subgraphs").begin_array();
    for (const auto& r : s.refs) {
      if (r.parent != int32_t(g)) continue;
      const auto& node = graph.nodes[size_t(r.node)];
      w.begin_object().key("node").value(int64_t(r.node)).key("op").value(node.op).key("node_name").value(node.name);
      w.key("attribute").value(r.attr).key("graph").value(int64_t(r.child)).end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  w.key("inputs");
  json_values(w, m.main(), m.main().inputs);
  w.key("outputs");
  json_values(w, m.main(), m.main().outputs);
  w.key("ops").begin_object();
  for (const auto& [op, n] : s.op_counts) w.key(op).value(n);
  w.end_object();
  w.key("node_count").value(s.nodes);
  w.key("parameters").begin_object().key("count").value(s.param_count).key("bytes").value(s.param_bytes);
  w.key("constants").value(s.constants).end_object();
  w.key("signatures").begin_array();
  for (const auto& sig : m.signatures)
    w.begin_object().key("name").value(sig.name).key("graph").value(int64_t(sig.graph)).end_object();
  w.end_array();
  w.key("metadata").begin_object();
  for (const auto& [k, v] : m.metadata) w.key(k).value(v);
  w.end_object();
  w.end_object().finish();
  return kExitOk;
}

}  // namespace

int inspect_command(const InspectOptions& o) {
  auto model = load_model(o.model);
  if (!model.ok()) return report_error(model.status());
  const ir::Model& m = model->graph();
  if (m.graphs.empty()) return report_error(invalid_model(o.model, ": the model has no graph"));
  if (!o.placement.empty()) return inspect_placement(m, o.placement, o.json);
  const Summary s = summarize(m);
  // Node counts before/after optimization; a model the optimizer rejects is still described.
  passes::OptimizeReport report;
  auto optimized = optimized_model(m, {}, &report);
  if (!optimized.ok()) std::cerr << "tessera: warning: optimize: " << optimized.status().message() << "\n";
  const passes::OptimizeReport* opt = optimized.ok() ? &report : nullptr;
  return o.json ? print_json(o.model, m, s, opt) : print_text(o.model, m, s, opt);
}

Subcommand register_inspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand("inspect", "Describe a .tsr model: graphs, ops, inputs, outputs, parameters");
  sub->add_option("model", o->model, "Model file (.tsr; or .onnx with the importer)")->required();
  sub->add_flag("--json", o->json, "Print JSON instead of text");
  sub->add_option("--placement", o->placement,
                  "Print each node's device when placed on DEVICE (cuda, vulkan, null) and the copies");
  return {sub, [o] { return inspect_command(*o); }};
}

}  // namespace tsr::cli
