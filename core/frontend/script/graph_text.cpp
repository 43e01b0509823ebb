// --print-graph: a readable listing of a model, one line per node:
//   %y = MatMul(%X, %W1)            attributes in braces, subgraphs indented under their node.
#include <functional>

#include "core/frontend/script/script.h"

namespace tsr::frontend::script {
namespace {

std::string attr_text(const ir::Attribute& a) {
  switch (a.kind) {
    case ir::AttrKind::kInt: return str_cat(a.i);
    case ir::AttrKind::kFloat: return str_cat(a.f);
    case ir::AttrKind::kString: return str_cat('"', a.s, '"');
    case ir::AttrKind::kInts: {
      std::string s = "[";
      for (size_t k = 0; k < a.ints.size(); ++k) s += str_cat(k ? ", " : "", a.ints[k]);
      return s + "]";
    }
    case ir::AttrKind::kFloats: {
      std::string s = "[";
      for (size_t k = 0; k < a.floats.size(); ++k) s += str_cat(k ? ", " : "", a.floats[k]);
      return s + "]";
    }
    case ir::AttrKind::kStrings: return str_cat("<", a.strings.size(), " strings>");
    case ir::AttrKind::kTensor: return str_cat("<tensor ", ops::ValueType::of(a.t).str(), ">");
    case ir::AttrKind::kGraph: return str_cat("graph[", a.i, "]");
    case ir::AttrKind::kGraphs: return str_cat("<", a.ints.size(), " graphs>");
  }
  return "?";
}

std::string type_text(const ir::TensorInfo& t) {
  return ops::ValueType{t.dtype, t.has_shape, t.shape, t.kind}.str();
}

}  // namespace

std::string graph_text(const ir::Model& model) {
  std::string out;
  std::function<void(int32_t, const std::string&)> print = [&](int32_t gi, const std::string& indent) {
    const ir::Graph& g = model.graphs[static_cast<size_t>(gi)];
    auto name = [&](int32_t id) { return id < 0 ? std::string("_") : "%" + g.tensors[static_cast<size_t>(id)].name; };
    out += str_cat(indent, "graph ", g.name, "(");
    for (size_t k = 0; k < g.inputs.size(); ++k)
      out += str_cat(k ? ", " : "", name(g.inputs[k]), ": ", type_text(g.tensors[static_cast<size_t>(g.inputs[k])]));
    out += ") {\n";
    for (size_t id = 0; id < g.tensors.size(); ++id) {
      const ir::TensorInfo& t = g.tensors[id];
      if (!t.constant.defined()) continue;
      out += str_cat(indent, "  ", name(static_cast<int32_t>(id)), " = constant ", type_text(t));
      if (t.constant.numel() <= 8 && t.constant.dtype() != DType::kString && t.constant.kind() == ValueKind::kTensor) {
        out += " [";
        for (int64_t k = 0; k < t.constant.numel(); ++k) out += str_cat(k ? ", " : "", t.constant.scalar_f64(k));
        out += "]";
      }
      out += "\n";
    }
    for (const ir::Node& n : g.nodes) {
      out += indent + "  ";
      for (size_t k = 0; k < n.outputs.size(); ++k) out += str_cat(k ? ", " : "", name(n.outputs[k]));
      out += str_cat(" = ", n.op, "(");
      for (size_t k = 0; k < n.inputs.size(); ++k) out += str_cat(k ? ", " : "", name(n.inputs[k]));
      out += ")";
      std::string attrs;
      for (const ir::Attribute& a : n.attributes) attrs += str_cat(attrs.empty() ? "" : ", ", a.name, "=", attr_text(a));
      if (!attrs.empty()) out += " {" + attrs + "}";
      if (!n.outputs.empty() && n.outputs[0] >= 0) out += "  : " + type_text(g.tensors[static_cast<size_t>(n.outputs[0])]);
      out += "\n";
      for (const ir::Attribute& a : n.attributes)
        if (a.kind == ir::AttrKind::kGraph) {
          out += str_cat(indent, "    ", a.name, ":\n");
          print(static_cast<int32_t>(a.i), indent + "      ");
        }
    }
    out += indent + "  return ";
    for (size_t k = 0; k < g.outputs.size(); ++k) out += str_cat(k ? ", " : "", name(g.outputs[k]));
    out += "\n" + indent + "}\n";
  };
  if (!model.graphs.empty()) print(0, "");
  return out;
}

}  // namespace tsr::frontend::script
