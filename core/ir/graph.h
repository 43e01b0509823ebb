// The in-memory IR: Model → Graphs → Nodes and TensorInfos (DESIGN.md §3).
//
// Values are referred to by index into Graph::tensors ("tensor ids"); -1 in Node::inputs marks an
// omitted optional input. Every tensor is produced exactly once: by being a graph input, a
// constant (TensorInfo::constant defined) or one node output. A subgraph (the body of If, Loop,
// Scan) is another Graph in Model::graphs, named by index from a node attribute of kind kGraph;
// it reads outer values only through its own explicit inputs.
//
// These are plain value types: build them directly, with the builder, or by loading a .tsr file
// (core/io), then check them with passes::verify_model before executing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"

namespace tsr::ir {

enum class AttrKind : uint8_t {
  kInt = 1,
  kFloat = 2,
  kString = 3,
  kInts = 4,
  kFloats = 5,
  kStrings = 6,
  kTensor = 7,
  kGraph = 8,   // index into Model::graphs
  kGraphs = 9,  // list of indices into Model::graphs
};
std::string_view attr_kind_name(AttrKind k);

struct Attribute {
  std::string name;
  AttrKind kind = AttrKind::kInt;
  int64_t i = 0;          // kInt, kGraph
  double f = 0;           // kFloat
  std::string s;          // kString
  std::vector<int64_t> ints;    // kInts, kGraphs
  std::vector<double> floats;   // kFloats
  std::vector<std::string> strings;  // kStrings
  Tensor t;               // kTensor

  static Attribute make_int(std::string name, int64_t v);
  static Attribute make_float(std::string name, double v);
  static Attribute make_string(std::string name, std::string v);
  static Attribute make_ints(std::string name, std::vector<int64_t> v);
  static Attribute make_floats(std::string name, std::vector<double> v);
  static Attribute make_strings(std::string name, std::vector<std::string> v);
  static Attribute make_tensor(std::string name, Tensor v);
  static Attribute make_graph(std::string name, int64_t graph_index);
};

struct Node {
  std::string op;        // ONNX op type ("Conv") or a Tessera training op ("AdamUpdate")
  int32_t version = 0;   // opset version the node was written against (0 = latest)
  std::string name;      // optional, for messages
  std::vector<int32_t> inputs;   // tensor ids; -1 = omitted optional input
  std::vector<int32_t> outputs;  // tensor ids; -1 = omitted optional output
  std::vector<Attribute> attributes;

  const Attribute* attr(std::string_view name) const;
  // The attribute's value, or `def` when the node lacks it (or has it with another kind, which
  // ops::check_node_against_def rejects before any reader runs). A checked node carries every
  // attribute its OpDef gives a default (ops::fill_attribute_defaults), so readers pass `def` only
  // for attributes without one (strides: 1 per spatial axis); elsewhere the zero/empty `def`
  // stands in, never reached on a checked node.
  int64_t attr_int(std::string_view name, int64_t def = 0) const;
  double attr_float(std::string_view name, double def = 0) const;
  std::string attr_string(std::string_view name, const std::string& def = {}) const;
  // The same as a view of the attribute (valid while the node is): no copy, for run-time reads.
  std::string_view attr_string_view(std::string_view name, std::string_view def = {}) const;
  // Lists come back as small vectors: no heap allocation for up to 6 values (kernels and
  // inference read them at every run).
  Ints attr_ints(std::string_view name, Ints def = {}) const;
  SmallVector<double, 6> attr_floats(std::string_view name, SmallVector<double, 6> def = {}) const;
};

struct TensorInfo {
  std::string name;
  // kTensor for tensors (and optional tensors); kSequence for ONNX seq(tensor) values, whose
  // dtype/shape then describe the elements.
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;  // kUndefined = unknown (inferred later)
  // Known rank: shape holds one entry per dim, -1 for a dynamic dim. Unknown rank: has_shape false.
  bool has_shape = false;
  Shape shape;
  std::vector<std::string> dim_names;  // optional symbolic names, parallel to shape ("" = none)
  Tensor constant;                     // defined for constants (weights); shape/dtype match
};

struct Graph {
  std::string name;
  std::vector<TensorInfo> tensors;
  std::vector<Node> nodes;
  std::vector<int32_t> inputs;   // tensor ids, in signature order
  std::vector<int32_t> outputs;  // tensor ids, in signature order

  // Appends a tensor and returns its id.
  int32_t add_tensor(TensorInfo info);
  // Tensor id by name, or -1.
  int32_t find_tensor(std::string_view name) const;
};

// A named entry point. Graph inputs may be bound to model variables (weights, optimizer state)
// instead of being supplied by the caller, and graph outputs may update variables instead of
// being returned: how a train_step graph keeps its weights in the Session between calls.
struct Signature {
  std::string name;   // "infer", "train_step", ...
  int32_t graph = 0;  // index into Model::graphs
  // Empty, or parallel to the graph's inputs: a variable name, or "" for a caller-supplied input.
  std::vector<std::string> bound_inputs;
  // Empty, or parallel to the graph's outputs: the variable the output overwrites after a run,
  // or "" for an output returned to the caller.
  std::vector<std::string> updates;
};

// State that persists in a Session across runs (trained weights, optimizer moments, the step
// counter); saved in checkpoints.
struct Variable {
  std::string name;
  Tensor value;
};

struct Model {
  static constexpr uint32_t kFormatVersion = 1;
  uint32_t version = kFormatVersion;
  std::string producer;
  std::vector<Graph> graphs;  // graphs[0] is the main graph
  std::vector<Signature> signatures;
  std::vector<Variable> variables;  // unique names
  std::map<std::string, std::string> metadata;

  const Graph& main() const { return graphs.at(0); }
  Graph& main() { return graphs.at(0); }
};

// "graph[g].node[n] (Op "name")", the prefix of every message about a node.
std::string node_place(int32_t graph_index, int32_t node_index, const Node& node);

}  // namespace tsr::ir
