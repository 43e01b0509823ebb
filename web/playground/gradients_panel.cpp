#include "web/playground/gradients_panel.h"

#include <algorithm>

#include "tessera/session.h"
#include "core/passes/autodiff.h"
#include "imgui.h"
#include "web/playground/widgets.h"

namespace tsr::playground {
namespace {

bool is_float_input(const ir::Graph& g, int32_t id) {
  const DType d = g.tensors[static_cast<size_t>(id)].dtype;
  return d == DType::kF32 || d == DType::kF64;
}

}  // namespace

Status compute_gradients(GradientsState& g, const ScriptState& s) {
  g.model.reset();
  g.names.clear();
  g.grads.clear();
  g.error.clear();
  Status st = [&]() -> Status {
    if (!s.converted.ok || !s.converted.model) return invalid_argument("run the script first (its converted graph is differentiated)");
    const ir::Graph& main = s.converted.model->main();
    if (g.loss < 0 || static_cast<size_t>(g.loss) >= main.outputs.size()) g.loss = 0;
    passes::GradientModelOptions o;
    o.loss = main.tensors[static_cast<size_t>(main.outputs.at(static_cast<size_t>(g.loss)))].name;
    for (int32_t id : main.inputs)
      if (is_float_input(main, id)) {
        const std::string& name = main.tensors[static_cast<size_t>(id)].name;
        if (g.wrt.empty() || std::find(g.wrt.begin(), g.wrt.end(), name) != g.wrt.end()) o.wrt.push_back(name);
      }
    if (o.wrt.empty()) return invalid_argument("no floating-point input to differentiate with respect to");
    TSR_ASSIGN_OR_RETURN(auto gm, passes::gradient_model(*s.converted.model, o));
    g.model = std::make_shared<ir::Model>(std::move(gm));
    std::vector<Tensor> feeds;
    for (int32_t id : g.model->main().inputs) {
      const std::string& name = g.model->main().tensors[static_cast<size_t>(id)].name;
      auto it = std::find_if(s.inputs.begin(), s.inputs.end(), [&](const InputSpec& in) { return in.name == name; });
      if (it == s.inputs.end()) return invalid_argument("graph input \"", name, "\" has no value in the inputs panel");
      feeds.push_back(it->tensor());
    }
    TSR_ASSIGN_OR_RETURN(auto session, Session::create(g.model));
    TSR_ASSIGN_OR_RETURN(auto outs, session->run(feeds));
    const size_t first = main.outputs.size();  // gradients follow the forward outputs
    for (size_t k = first; k < outs.size(); ++k) {
      g.names.push_back(g.model->main().tensors[static_cast<size_t>(g.model->main().outputs[k])].name);
      g.grads.push_back(std::move(outs[k]));
    }
    return ok_status();
  }();
  if (!st.ok()) g.error = st.message();
  return st;
}

void draw_gradients(GradientsState& g, ScriptState& s) {
  if (!s.converted.ok || !s.converted.model) {
    ImGui::TextDisabled("Run a script: its converted graph is differentiated here");
    return;
  }
  const ir::Graph& main = s.converted.model->main();
  ImGui::TextUnformatted("d(sum of");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  const auto out_name = [&](int k) { return main.tensors[static_cast<size_t>(main.outputs[static_cast<size_t>(k)])].name; };
  if (g.loss >= static_cast<int>(main.outputs.size())) g.loss = 0;
  if (ImGui::BeginCombo("##loss", out_name(g.loss).c_str())) {
    for (int k = 0; k < static_cast<int>(main.outputs.size()); ++k)
      if (ImGui::Selectable(out_name(k).c_str(), k == g.loss)) g.loss = k;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::TextUnformatted(") / d");
  for (int32_t id : main.inputs) {
    if (!is_float_input(main, id)) continue;
    const std::string& name = main.tensors[static_cast<size_t>(id)].name;
    bool on = g.wrt.empty() || std::find(g.wrt.begin(), g.wrt.end(), name) != g.wrt.end();
    ImGui::SameLine();
    if (ImGui::Checkbox(("##wrt_" + name).c_str(), &on)) {
      if (g.wrt.empty())
        for (int32_t other : main.inputs)
          if (is_float_input(main, other)) g.wrt.push_back(main.tensors[static_cast<size_t>(other)].name);
      if (on) g.wrt.push_back(name);
      else g.wrt.erase(std::remove(g.wrt.begin(), g.wrt.end(), name), g.wrt.end());
    }
    ImGui::SameLine();
    ImGui::TextUnformatted(name.c_str());
  }
  ImGui::SameLine();
  if (ImGui::Button("Compute gradients")) (void)compute_gradients(g, s);
  track("Compute gradients");
  if (!g.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "%s", g.error.c_str());
  for (size_t k = 0; k < g.grads.size(); ++k) {
    ImGui::PushID(static_cast<int>(k));
    ImGui::Text("%s  %s", g.names[k].c_str(), tensor_summary(g.grads[k]).c_str());
    ImGui::TextWrapped("%s", tensor_text(g.grads[k], 32).c_str());
    const Shape& sh = g.grads[k].shape();
    if (sh.size() == 2 && g.grads[k].numel() > 0)
      draw_heatmap(tensor_values(g.grads[k]), static_cast<int>(sh[0]), static_cast<int>(sh[1]),
                   ImVec2(24.0f * static_cast<float>(std::min<int64_t>(sh[1], 12)), 24.0f * static_cast<float>(std::min<int64_t>(sh[0], 12))));
    ImGui::PopID();
  }
  if (g.model && ImGui::CollapsingHeader("Gradient graph", ImGuiTreeNodeFlags_DefaultOpen)) draw_model_graph("grad_graph", *g.model, g.view);
}

void write_gradients_json(cli::JsonWriter& w, const GradientsState& g) {
  w.begin_object().key("error").value(g.error).key("outputs").begin_array();
  for (size_t k = 0; k < g.grads.size(); ++k) write_tensor_json(w, g.names[k], g.grads[k]);
  w.end_array().key("graph");
  if (g.model) write_graph_summary(w, *g.model);
  else w.null();
  w.end_object();
}

}  // namespace tsr::playground
