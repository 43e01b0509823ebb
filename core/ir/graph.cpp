#include "core/ir/graph.h"

namespace tsr::ir {

std::string_view attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
    case AttrKind::kStrings: return "strings";
    case AttrKind::kTensor: return "tensor";
    case AttrKind::kGraph: return "graph";
    case AttrKind::kGraphs: return "graphs";
  }
  return "unknown";
}

Attribute Attribute::make_int(std::string name, int64_t v) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kInt; a.i = v; return a;
}
Attribute Attribute::make_float(std::string name, double v) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kFloat; a.f = v; return a;
}
Attribute Attribute::make_string(std::string name, std::string v) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kString; a.s = std::move(v); return a;
}
Attribute Attribute::make_ints(std::string name, std::vector<int64_t> v) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kInts; a.ints = std::move(v); return a;
}
Attribute Attribute::make_floats(std::string name, std::vector<double> v) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kFloats; a.floats = std::move(v); return a;
}
Attribute Attribute::make_strings(std::string name, std::vector<std::string> v) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kStrings; a.strings = std::move(v); return a;
}
Attribute Attribute::make_tensor(std::string name, Tensor v) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kTensor; a.t = std::move(v); return a;
}
Attribute Attribute::make_graph(std::string name, int64_t g) {
  Attribute a; a.name = std::move(name); a.kind = AttrKind::kGraph; a.i = g; return a;
}

const Attribute* Node::attr(std::string_view n) const {
  for (const auto& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}
int64_t Node::attr_int(std::string_view n, int64_t def) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::kInt ? a->i : def;
}
double Node::attr_float(std::string_view n, double def) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::kFloat ? a->f : def;
}
std::string Node::attr_string(std::string_view n, const std::string& def) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::kString ? a->s : def;
}
std::string_view Node::attr_string_view(std::string_view n, std::string_view def) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::kString ? std::string_view(a->s) : def;
}
Ints Node::attr_ints(std::string_view n, Ints def) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::kInts ? Ints(a->ints.begin(), a->ints.end()) : def;
}
SmallVector<double, 6> Node::attr_floats(std::string_view n, SmallVector<double, 6> def) const {
  const Attribute* a = attr(n);
  return a && a->kind == AttrKind::kFloats ? SmallVector<double, 6>(a->floats.begin(), a->floats.end()) : def;
}

int32_t Graph::add_tensor(TensorInfo info) {
  tensors.push_back(std::move(info));
  return static_cast<int32_t>(tensors.size() - 1);
}

int32_t Graph::find_tensor(std::string_view n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int32_t>(i);
  return -1;
}

std::string node_place(int32_t g, int32_t n, const Node& node) {
  return str_cat("graph[", g, "].node[", n, "] (", node.op, " \"", node.name, "\")");
}

}  // namespace tsr::ir
