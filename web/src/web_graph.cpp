// The wasm's C ABI for a device layer in JS (web/js/webgpu.mjs): the model's main graph as JSON,
// its constants, and one node evaluated on the CPU kernels (the per-node fallback). Contract as
// web_api.h (handles owned by the caller; null and the last error on failure).
#include <emscripten/emscripten.h>

#include <memory>
#include <sstream>
#include <string>

#include "core/exec/optimized_model.h"
#include "core/passes/infer_types.h"
#include "web/src/web_api.h"

namespace tsr::web {
namespace {

void json_num(std::ostream& os, double v) {
  if (v != v || v - v != 0) os << "null";  // NaN / inf have no JSON spelling
  else os << v;
}

void json_attr(std::ostream& os, const ir::Attribute& a) {
  switch (a.kind) {
    case ir::AttrKind::kInt: os << a.i; break;
    case ir::AttrKind::kFloat: json_num(os, a.f); break;
    case ir::AttrKind::kString: json_str(os, a.s); break;
    case ir::AttrKind::kInts:
      os << '[';
      for (size_t k = 0; k < a.ints.size(); ++k) os << (k ? "," : "") << a.ints[k];
      os << ']';
      break;
    case ir::AttrKind::kFloats:
      os << '[';
      for (size_t k = 0; k < a.floats.size(); ++k) {
        os << (k ? "," : "");
        json_num(os, a.floats[k]);
      }
      os << ']';
      break;
    case ir::AttrKind::kStrings:
      os << '[';
      for (size_t k = 0; k < a.strings.size(); ++k) {
        os << (k ? "," : "");
        json_str(os, a.strings[k]);
      }
      os << ']';
      break;
    case ir::AttrKind::kTensor:
      // A small numeric tensor (ConstantOfShape's value): {"dtype", "shape", "values"}; else null.
      if (a.t.defined() && a.t.kind() == ValueKind::kTensor && a.t.dtype() != DType::kString && a.t.numel() <= 64) {
        os << "{\"dtype\":" << static_cast<int>(a.t.dtype()) << ",\"shape\":[";
        for (int64_t d = 0; d < a.t.rank(); ++d) os << (d ? "," : "") << a.t.dim(d);
        os << "],\"values\":[";
        for (int64_t k = 0; k < a.t.numel(); ++k) {
          os << (k ? "," : "");
          json_num(os, a.t.scalar_f64(k));
        }
        os << "]}";
      } else {
        os << "null";
      }
      break;
    case ir::AttrKind::kGraph: os << "{\"graph\":" << a.i << '}'; break;
    case ir::AttrKind::kGraphs:
      os << "{\"graphs\":[";
      for (size_t k = 0; k < a.ints.size(); ++k) os << (k ? "," : "") << a.ints[k];
      os << "]}";
      break;
    default: os << "null";
  }
}

void json_ids(std::ostream& os, const std::vector<int32_t>& ids) {
  os << '[';
  for (size_t k = 0; k < ids.size(); ++k) os << (k ? "," : "") << ids[k];
  os << ']';
}

// One graph's fields: "inputs", "outputs", "values", "nodes" (tsrw_model_graph's format).
void json_graph(std::ostream& os, const ir::Graph& g) {
  os << "\"inputs\":";
  json_ids(os, g.inputs);
  os << ",\"outputs\":";
  json_ids(os, g.outputs);
  os << ",\"values\":[";
  for (size_t k = 0; k < g.tensors.size(); ++k) {
    const auto& t = g.tensors[k];
    os << (k ? "," : "") << "{\"name\":";
    json_str(os, t.name);
    os << ",\"dtype\":" << static_cast<int>(t.kind == ValueKind::kTensor ? t.dtype : DType::kUndefined);
    os << ",\"shape\":";
    if (t.has_shape) {
      os << '[';
      for (size_t d = 0; d < t.shape.size(); ++d) os << (d ? "," : "") << t.shape[d];
      os << ']';
    } else {
      os << "null";
    }
    os << ",\"constant\":" << (t.constant.defined() ? "true" : "false") << '}';
  }
  os << "],\"nodes\":[";
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const auto& n = g.nodes[k];
    os << (k ? "," : "") << "{\"op\":";
    json_str(os, n.op);
    os << ",\"version\":" << n.version << ",\"name\":";
    json_str(os, n.name);
    os << ",\"inputs\":";
    json_ids(os, n.inputs);
    os << ",\"outputs\":";
    json_ids(os, n.outputs);
    os << ",\"attrs\":{";
    for (size_t a = 0; a < n.attributes.size(); ++a) {
      os << (a ? "," : "");
      json_str(os, n.attributes[a].name);
      os << ':';
      json_attr(os, n.attributes[a]);
    }
    os << "}}";
  }
  os << ']';
}

// Graph `graph` of m's model as loaded, or null and the error (kInvalidArgument).
const ir::Graph* graph_of(WebModel* m, int graph) {
  const auto& graphs = m->session->model().graph().graphs;
  if (graph < 0 || static_cast<size_t>(graph) >= graphs.size()) {
    set_error(invalid_argument("graph ", graph, ": the model has ", graphs.size(), " graphs"));
    return nullptr;
  }
  return &graphs[static_cast<size_t>(graph)];
}

}  // namespace
}  // namespace tsr::web

using tsr::web::Bytes;
using tsr::web::TensorList;
using tsr::web::WebModel;
using tsr::web::set_error;

extern "C" {

// The model's graphs as loaded (before the session's optimizations), types inferred: the main
// graph's fields at the top level and every subgraph (If/Loop/Scan bodies) in "graphs", indexed
// as Model::graphs ("graphs"[0] is null: the main graph is the object itself):
// {"wasmOnly": reason|null, "inputs": [value ids], "outputs": [value ids],
//  "values": [{name, dtype (a DType value), shape (null | dims, -1 dynamic), constant: bool}],
//  "nodes": [{op, version, name, inputs: [value id | -1], outputs: [value id | -1],
//             attrs: {name: number | string | [..] | {dtype, shape, values} (a numeric tensor of
//                     at most 64 elements) | {graph: index} | {graphs: [indices]} | null (other
//                     tensors)}}],
//  "graphs": [null, {inputs, outputs, values, nodes}, ...]}.
// A subgraph reads outer values only through its inputs, passed as the node's extra inputs
// (core/ops/families/control_flow.cpp: If's are (cond, captures...), its branches' (captures...)).
// wasmOnly names why the model must run whole on wasm: control flow other than If, Loop and Scan
// (SequenceMap, a batched ONNX Scan-8 in any graph) or main-graph inputs bound to variables.
EMSCRIPTEN_KEEPALIVE Bytes* tsrw_model_graph(WebModel* m) {
  auto typed = std::make_shared<tsr::ir::Model>(m->session->model().graph());  // constants share storage
  tsr::Status st = tsr::passes::infer_types(*typed);
  if (!st.ok()) return set_error(st);
  std::string wasm_only;
  for (const auto& g : typed->graphs)
    for (const auto& n : g.nodes)
      for (const auto& a : n.attributes)
        if (wasm_only.empty() && n.op != "If" && n.op != "Loop" && (n.op != "Scan" || n.attr_int("batched") != 0) &&
            (a.kind == tsr::ir::AttrKind::kGraph || a.kind == tsr::ir::AttrKind::kGraphs))
          wasm_only = tsr::str_cat("control flow (", n.op, n.op == "Scan" ? ", batched: ONNX Scan-8" : "", ")");
  for (const auto& sig : typed->signatures)
    for (const auto& b : sig.bound_inputs)
      if (wasm_only.empty() && sig.graph == 0 && !b.empty()) wasm_only = "inputs bound to variables";
  std::ostringstream os;
  os.precision(17);
  os << "{\"wasmOnly\":";
  if (wasm_only.empty()) os << "null";
  else tsr::web::json_str(os, wasm_only);
  os << ',';
  tsr::web::json_graph(os, typed->main());
  os << ",\"graphs\":[null";
  for (size_t k = 1; k < typed->graphs.size(); ++k) {
    os << ",{";
    tsr::web::json_graph(os, typed->graphs[k]);
    os << '}';
  }
  os << "]}";
  const std::string s = os.str();
  return new Bytes{std::vector<uint8_t>(s.begin(), s.end())};
}

// Constant value `id` of graph `graph` (0: the main graph) as a one-entry list (its storage
// shared, not copied); kInvalidArgument when there is no such graph or `id` is not a constant.
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_graph_constant(WebModel* m, int graph, int id) {
  const tsr::ir::Graph* g = tsr::web::graph_of(m, graph);
  if (!g) return nullptr;
  if (id < 0 || static_cast<size_t>(id) >= g->tensors.size() || !g->tensors[static_cast<size_t>(id)].constant.defined())
    return set_error(tsr::invalid_argument("value ", id, " of graph ", graph, " is not a constant"));
  const auto& t = g->tensors[static_cast<size_t>(id)];
  return new TensorList{{t.name}, {t.constant}};
}

// tsrw_graph_constant of the main graph (kept for callers of the first ABI).
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_model_constant(WebModel* m, int id) { return tsrw_graph_constant(m, 0, id); }

// Runs node `index` of graph `graph` (0: the main graph; a subgraph's nodes as they appear in
// tsrw_model_graph's "graphs") alone on the CPU kernels (tsr::evaluate_node): `in` holds the
// node's present inputs, each named by its input position ("0", "2", ...; positions not in the
// list are omitted). Returns the outputs named by position, omitted ones left out. Errors name
// the node (kInvalidArgument for a bad graph, index or input name; kInvalidModel for a node with
// subgraphs, which the caller runs itself; what the kernel returns).
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_graph_node_eval(WebModel* m, int graph, int index, TensorList* in) {
  const tsr::ir::Graph* g = tsr::web::graph_of(m, graph);
  if (!g) return nullptr;
  if (index < 0 || static_cast<size_t>(index) >= g->nodes.size())
    return set_error(tsr::invalid_argument("node ", index, ": graph ", graph, " has ", g->nodes.size(), " nodes"));
  const tsr::ir::Node& node = g->nodes[static_cast<size_t>(index)];
  std::vector<const tsr::Tensor*> inputs(node.inputs.size(), nullptr);
  for (size_t j = 0; j < in->names.size(); ++j) {
    const std::string& name = in->names[j];
    size_t k = 0;
    bool digits = !name.empty() && name.size() < 6;
    for (char c : name) digits = digits && c >= '0' && c <= '9';
    if (digits) k = std::stoul(name);
    if (!digits || k >= inputs.size())
      return set_error(tsr::invalid_argument(tsr::ir::node_place(graph, index, node), ": no input position \"", name, "\""));
    inputs[k] = &in->tensors[j];
  }
  auto out = tsr::evaluate_node(node, inputs);
  if (!out.ok()) return set_error(out.status().with_context(tsr::ir::node_place(graph, index, node)));
  auto* list = new TensorList;
  for (size_t k = 0; k < out->size(); ++k) {
    if (node.outputs[k] < 0) continue;
    list->names.push_back(std::to_string(k));
    list->tensors.push_back(std::move((*out)[k]));
  }
  return list;
}

// tsrw_graph_node_eval of the main graph (kept for callers of the first ABI).
EMSCRIPTEN_KEEPALIVE TensorList* tsrw_node_eval(WebModel* m, int index, TensorList* in) {
  return tsrw_graph_node_eval(m, 0, index, in);
}

}  // extern "C"
