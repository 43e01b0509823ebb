#include "web/playground/graph_view.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/tensor/dtype.h"
#include "imgui.h"

namespace tsr::playground {
namespace {

constexpr float kBoxW = 150, kBoxH = 38, kGapX = 22, kGapY = 34;
constexpr int kMaxDepth = 8;

std::string tensor_label(const ir::Graph& g, int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= g.tensors.size()) return "(omitted)";
  const ir::TensorInfo& t = g.tensors[static_cast<size_t>(id)];
  std::string s = t.name + ": " + std::string(dtype_name(t.dtype)) + " " + (t.has_shape ? shape_str(t.shape) : "[*]");
  if (t.constant.defined()) s += " (constant)";
  return s;
}

std::string attr_text(const ir::Attribute& a) {
  char buf[64];
  switch (a.kind) {
    case ir::AttrKind::kInt: return std::to_string(a.i);
    case ir::AttrKind::kFloat: std::snprintf(buf, sizeof buf, "%g", a.f); return buf;
    case ir::AttrKind::kString: return "\"" + a.s + "\"";
    case ir::AttrKind::kInts: return shape_str(a.ints);
    case ir::AttrKind::kFloats: {
      std::string s = "[";
      for (size_t k = 0; k < a.floats.size(); ++k) {
        std::snprintf(buf, sizeof buf, "%s%g", k ? ", " : "", a.floats[k]);
        s += buf;
      }
      return s + "]";
    }
    case ir::AttrKind::kStrings: return std::to_string(a.strings.size()) + " strings";
    case ir::AttrKind::kTensor: return "tensor " + std::string(dtype_name(a.t.dtype())) + " " + shape_str(a.t.shape());
    case ir::AttrKind::kGraph: return "graph " + std::to_string(a.i);
    case ir::AttrKind::kGraphs: return "graphs " + shape_str(a.ints);
  }
  return "?";
}

std::vector<int64_t> subgraphs_of(const ir::Node& n) {
  std::vector<int64_t> out;
  for (const ir::Attribute& a : n.attributes) {
    if (a.kind == ir::AttrKind::kGraph) out.push_back(a.i);
    if (a.kind == ir::AttrKind::kGraphs) out.insert(out.end(), a.ints.begin(), a.ints.end());
  }
  return out;
}

void node_tooltip(const ir::Graph& g, const ir::Node& n) {
  ImGui::BeginTooltip();
  ImGui::Text("%s%s%s", n.op.c_str(), n.name.empty() ? "" : "  ", n.name.c_str());
  for (const ir::Attribute& a : n.attributes) ImGui::BulletText("%s = %s", a.name.c_str(), attr_text(a).c_str());
  for (size_t k = 0; k < n.inputs.size(); ++k) ImGui::Text("in[%zu]  %s", k, tensor_label(g, n.inputs[k]).c_str());
  for (size_t k = 0; k < n.outputs.size(); ++k) ImGui::Text("out[%zu] %s", k, tensor_label(g, n.outputs[k]).c_str());
  ImGui::EndTooltip();
}

void draw_graph(const ir::Model& model, int64_t gi, GraphViewState& st, int depth);

// One graph's canvas: graph inputs in layer 0, each node one layer below its deepest producer.
void draw_graph(const ir::Model& model, int64_t gi, GraphViewState& st, int depth) {
  if (gi < 0 || static_cast<size_t>(gi) >= model.graphs.size() || depth > kMaxDepth) return;
  const ir::Graph& g = model.graphs[static_cast<size_t>(gi)];
  std::vector<int> producer(g.tensors.size(), -1);  // tensor -> box (inputs first, then nodes)
  std::vector<int> layer;
  std::vector<std::string> label;
  for (int32_t in : g.inputs) {
    producer[static_cast<size_t>(in)] = static_cast<int>(layer.size());
    layer.push_back(0);
    label.push_back(g.tensors[static_cast<size_t>(in)].name);
  }
  const size_t first_node = layer.size();
  for (const ir::Node& n : g.nodes) {
    int l = 1;
    for (int32_t in : n.inputs)
      if (in >= 0 && producer[static_cast<size_t>(in)] >= 0) l = std::max(l, layer[static_cast<size_t>(producer[static_cast<size_t>(in)])] + 1);
    for (int32_t out : n.outputs)
      if (out >= 0) producer[static_cast<size_t>(out)] = static_cast<int>(layer.size());
    layer.push_back(l);
    label.push_back(n.op);
  }
  const int layers = layer.empty() ? 1 : *std::max_element(layer.begin(), layer.end()) + 2;  // + outputs row
  std::vector<int> per_layer(static_cast<size_t>(layers), 0);
  std::vector<ImVec2> pos(layer.size());
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  for (size_t b = 0; b < layer.size(); ++b) {
    const int slot = per_layer[static_cast<size_t>(layer[b])]++;
    pos[b] = ImVec2(origin.x + 8 + static_cast<float>(slot) * (kBoxW + kGapX), origin.y + 8 + static_cast<float>(layer[b]) * (kBoxH + kGapY));
  }
  const int widest = std::max(*std::max_element(per_layer.begin(), per_layer.end()), static_cast<int>(g.outputs.size()));
  const ImVec2 size(16 + static_cast<float>(widest) * (kBoxW + kGapX), 16 + static_cast<float>(layers) * (kBoxH + kGapY));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 edge = ImGui::GetColorU32(ImVec4(0.6f, 0.6f, 0.7f, 1)), text = ImGui::GetColorU32(ImGuiCol_Text);
  auto bottom = [&](size_t b) { return ImVec2(pos[b].x + kBoxW / 2, pos[b].y + kBoxH); };
  auto top = [&](size_t b) { return ImVec2(pos[b].x + kBoxW / 2, pos[b].y); };
  auto curve = [&](ImVec2 a, ImVec2 c) {
    dl->AddBezierCubic(a, ImVec2(a.x, a.y + kGapY / 2), ImVec2(c.x, c.y - kGapY / 2), c, edge, 1.5f);
    dl->AddTriangleFilled(ImVec2(c.x - 4, c.y - 6), ImVec2(c.x + 4, c.y - 6), c, edge);
  };
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (int32_t in : g.nodes[k].inputs)
      if (in >= 0 && producer[static_cast<size_t>(in)] >= 0) curve(bottom(static_cast<size_t>(producer[static_cast<size_t>(in)])), top(first_node + k));
  // Graph outputs: small labels in the last row.
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const ImVec2 p(origin.x + 8 + static_cast<float>(k) * (kBoxW + kGapX), origin.y + 8 + static_cast<float>(layers - 1) * (kBoxH + kGapY));
    const int src = producer[static_cast<size_t>(g.outputs[k])];
    if (src >= 0) curve(bottom(static_cast<size_t>(src)), ImVec2(p.x + kBoxW / 2, p.y));
    dl->AddText(ImVec2(p.x + 4, p.y + 4), text, ("-> " + g.tensors[static_cast<size_t>(g.outputs[k])].name).c_str());
  }
  ImGui::PushID(static_cast<int>(gi));
  for (size_t b = 0; b < layer.size(); ++b) {
    const bool is_node = b >= first_node;
    const ir::Node* n = is_node ? &g.nodes[b - first_node] : nullptr;
    const bool has_body = n && !subgraphs_of(*n).empty();
    const std::string key = std::to_string(gi) + "/" + std::to_string(b - first_node);
    const bool open = has_body && st.expanded.count(key);
    ImGui::SetCursorScreenPos(pos[b]);
    ImGui::PushID(static_cast<int>(b));
    if (ImGui::InvisibleButton("box", ImVec2(kBoxW, kBoxH)) && has_body) {
      if (open) st.expanded.erase(key);
      else st.expanded.insert(key);
    }
    const bool hovered = ImGui::IsItemHovered();
    ImGui::PopID();
    const ImVec4 fill = !is_node ? ImVec4(0.20f, 0.35f, 0.25f, 1) : has_body ? ImVec4(0.45f, 0.30f, 0.10f, 1) : ImVec4(0.20f, 0.25f, 0.40f, 1);
    dl->AddRectFilled(pos[b], ImVec2(pos[b].x + kBoxW, pos[b].y + kBoxH), ImGui::GetColorU32(fill), is_node ? 4.0f : 12.0f);
    if (hovered) dl->AddRect(pos[b], ImVec2(pos[b].x + kBoxW, pos[b].y + kBoxH), ImGui::GetColorU32(ImVec4(1, 1, 1, 1)), 4.0f, 0, 2);
    std::string line1 = (has_body ? (open ? "[-] " : "[+] ") : "") + label[b];
    dl->AddText(ImVec2(pos[b].x + 6, pos[b].y + 3), text, line1.c_str());
    if (n && !n->outputs.empty() && n->outputs[0] >= 0) {
      const ir::TensorInfo& t = g.tensors[static_cast<size_t>(n->outputs[0])];
      const std::string line2 = t.has_shape ? shape_str(t.shape) : std::string(dtype_name(t.dtype));
      dl->AddText(ImVec2(pos[b].x + 6, pos[b].y + 19), ImGui::GetColorU32(ImGuiCol_TextDisabled), line2.c_str());
    } else if (!is_node) {
      dl->AddText(ImVec2(pos[b].x + 6, pos[b].y + 19), ImGui::GetColorU32(ImGuiCol_TextDisabled), "input");
    }
    if (hovered && n) node_tooltip(g, *n);
    if (hovered && !is_node) ImGui::SetTooltip("graph input %s", tensor_label(g, g.inputs[b]).c_str());
  }
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(size);
  // Opened bodies, indented below their graph.
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (!st.expanded.count(std::to_string(gi) + "/" + std::to_string(k))) continue;
    const ir::Node& n = g.nodes[k];
    ImGui::Indent(24);
    for (const ir::Attribute& a : n.attributes) {
      std::vector<int64_t> bodies = a.kind == ir::AttrKind::kGraph ? std::vector<int64_t>{a.i}
                                  : a.kind == ir::AttrKind::kGraphs ? a.ints : std::vector<int64_t>{};
      for (int64_t body : bodies) {
        ImGui::Separator();
        ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.4f, 1), "%s%s%s . %s  (graph %lld \"%s\")", n.op.c_str(), n.name.empty() ? "" : " ",
                           n.name.c_str(), a.name.c_str(), static_cast<long long>(body),
                           body >= 0 && static_cast<size_t>(body) < model.graphs.size() ? model.graphs[static_cast<size_t>(body)].name.c_str() : "?");
        draw_graph(model, body, st, depth + 1);
      }
    }
    ImGui::Unindent(24);
  }
  ImGui::PopID();
}

}  // namespace

void draw_model_graph(const char* id, const ir::Model& model, GraphViewState& state) {
  ImGui::PushID(id);
  int nodes = 0;
  for (const ir::Graph& g : model.graphs) nodes += static_cast<int>(g.nodes.size());
  ImGui::TextDisabled("%zu graph(s), %d node(s); click a [+] box to open its body", model.graphs.size(), nodes);
  draw_graph(model, 0, state, 0);
  ImGui::PopID();
}

std::map<std::string, int> op_counts(const ir::Graph& g) {
  std::map<std::string, int> counts;
  for (const ir::Node& n : g.nodes) ++counts[n.op];
  return counts;
}

void write_graph_summary(cli::JsonWriter& w, const ir::Model& model) {
  w.begin_array();
  for (size_t k = 0; k < model.graphs.size(); ++k) {
    const ir::Graph& g = model.graphs[k];
    w.begin_object().key("index").value(static_cast<int64_t>(k)).key("name").value(g.name);
    w.key("nodes").value(static_cast<int64_t>(g.nodes.size())).key("ops").begin_object();
    for (const auto& [op, n] : op_counts(g)) w.key(op).value(n);
    w.end_object().end_object();
  }
  w.end_array();
}

}  // namespace tsr::playground
