#include "web/playground/models_panel.h"

#include <chrono>
#include <cstring>

#include "core/base/rng.h"
#include "core/frontend/script/script.h"
#include "core/io/tsr_io.h"
#include "imgui.h"
#include "web/playground/examples.h"
#include "web/playground/widgets.h"
#if TSR_PLAYGROUND_ONNX
#include "tools/onnx/onnx_import.h"
#endif

namespace tsr::playground {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

Expected<Tensor> random_input(const ir::TensorInfo& info, SplitMix64& rng) {
  if (info.kind != ValueKind::kTensor) return unsupported("input \"", info.name, "\" is not a tensor");
  if (!info.has_shape) return invalid_argument("input \"", info.name, "\" has unknown rank");
  Shape shape = info.shape;
  for (int64_t& d : shape) d = d < 0 ? 1 : d;
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(info.dtype, shape));
  if (info.dtype == DType::kF32)
    for (int64_t i = 0; i < t.numel(); ++i) t.mut_data<float>()[i] = rng.uniform_pm1_f32();
  if (info.dtype == DType::kF64)
    for (int64_t i = 0; i < t.numel(); ++i) t.mut_data<double>()[i] = rng.uniform_pm1_f32();
  return t;
}

std::string describe(const ir::TensorInfo& t) {
  return t.name + "  " + std::string(dtype_name(t.dtype)) + " " + (t.has_shape ? shape_str(t.shape) : "[*]");
}

}  // namespace

void open_model(ModelsState& s, const std::string& name, const uint8_t* data, size_t size) {
  DeviceSwitch device = std::move(s.device);
  device.reset_model();
  s = ModelsState{};
  s.device = std::move(device);
  s.name = name;
  s.bytes = size;
  const auto t0 = Clock::now();
  Expected<ir::Model> m = invalid_argument("unreachable");
  const bool tsr_header = size >= 8 && std::memcmp(data + 4, "TSR1", 4) == 0;
  if (ends_with(name, ".onnx") || !tsr_header) {
#if TSR_PLAYGROUND_ONNX
    m = onnx_import::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), name);
#else
    m = unsupported(name, ": not a .tsr file, and this build has no ONNX importer");
#endif
  } else {
    auto owner = std::make_shared<std::vector<uint8_t>>(data, data + size);
    m = io::load_model_buffer(owner->data(), owner->size(), owner);
  }
  if (!m.ok()) {
    s.error = m.status().message();
    return;
  }
  s.model = std::make_shared<ir::Model>(std::move(m).value());
  auto session = Session::create(s.model);
  if (!session.ok()) {
    s.error = session.status().message();
    return;
  }
  s.session = std::move(session).value();
  s.load_ms = ms_since(t0);
}

namespace {

// Runs the model on s.inputs on the CPU, now.
Status execute_cpu(ModelsState& s) {
  const auto t0 = Clock::now();
  TSR_ASSIGN_OR_RETURN(s.outputs, s.session->run(s.inputs));
  s.run_ms = ms_since(t0);
  ++s.runs;
  DeviceSwitch& d = s.device;
  d.cpu_out = s.outputs;
  d.cpu_gen = d.gen;
  d.cpu_ms = s.run_ms;
  d.last = Device::kCpu;
  return ok_status();
}

// Runs the model on s.inputs on the selected device (WebGPU: sends the request).
Status execute(ModelsState& s) {
  if (!s.session) return invalid_argument("no model loaded");
  DeviceSwitch& d = s.device;
  if (d.selected == Device::kWebGpu) {
    const uint64_t gen = d.gen;
    return start_webgpu_run(d, s.model, s.inputs, [&s, gen](std::vector<Tensor> outputs, double ms, const std::string& error) {
      DeviceSwitch& dev = s.device;
      if (!error.empty()) {
        s.error = "WebGPU: " + error;
        return;
      }
      if (outputs.empty()) {  // control flow: the page runs such graphs whole on wasm, here the CPU path
        if (dev.gen == gen) {
          Status st = execute_cpu(s);
          if (!st.ok()) s.error = st.message();
        }
        return;
      }
      s.error.clear();
      s.outputs = outputs;
      s.run_ms = ms;
      ++s.runs;
      dev.gpu_out = std::move(outputs);
      dev.gpu_gen = gen;
      dev.gpu_ms = ms;
      ++dev.gpu_runs;
      dev.last = Device::kWebGpu;
    });
  }
  return execute_cpu(s);
}

// Runs the model on `first` (if given) and random values for the other inputs.
Status run_with(ModelsState& s, const Tensor* first) {
  if (!s.session) return invalid_argument("no model loaded");
  if (s.device.pending()) return invalid_argument("a run on WebGPU is still in flight");
  SplitMix64 rng{s.seed++};
  s.inputs.clear();
  for (int32_t id : s.model->main().inputs) {
    if (first && s.inputs.empty()) {
      s.inputs.push_back(*first);
      continue;
    }
    TSR_ASSIGN_OR_RETURN(Tensor t, random_input(s.model->main().tensors[static_cast<size_t>(id)], rng));
    s.inputs.push_back(std::move(t));
  }
  ++s.device.gen;
  return execute(s);
}

std::vector<std::string> output_names(const ModelsState& s) {
  std::vector<std::string> names;
  if (s.model)
    for (int32_t id : s.model->main().outputs) names.push_back(s.model->main().tensors[static_cast<size_t>(id)].name);
  return names;
}

}  // namespace

Status run_random(ModelsState& s) {
  s.image_name.clear();
  return run_with(s, nullptr);
}

Status run_again(ModelsState& s) {
  if (s.inputs.empty()) return run_random(s);
  if (s.device.pending()) return invalid_argument("a run on WebGPU is still in flight");
  return execute(s);
}

Status open_sample_model(ModelsState& s) {
  namespace sc = frontend::script;
  const Example* e = find_example("colour_classifier");
  Status st = [&]() -> Status {
    if (!e) return internal_error("the colour_classifier example is missing");
    sc::ScriptOptions so;
    so.entry = e->entry;
    so.mode = sc::Mode::kConvert;
    for (const InputSpec& in : e->inputs) so.inputs.emplace_back(in.name, in.tensor());
    TSR_ASSIGN_OR_RETURN(auto converted, sc::run_script("colour_classifier.py", e->source, so));
    TSR_ASSIGN_OR_RETURN(auto bytes, io::serialize_model(*converted.model));
    open_model(s, "sample_colour_classifier.tsr", bytes.data(), bytes.size());
    if (!s.error.empty()) return invalid_argument(s.error);
    s.labels = {"red", "green", "blue"};
    return ok_status();
  }();
  if (!st.ok()) s.error = st.message();
  return st;
}

Expected<ImageSize> model_image_size(const ModelsState& s) {
  if (!s.model) return invalid_argument("no model loaded: open one (or the sample) before an image");
  const ir::Graph& g = s.model->main();
  if (g.inputs.empty()) return invalid_argument("the model has no inputs");
  return image_size(g.tensors[static_cast<size_t>(g.inputs[0])], kSampleImageSide);
}

Status run_on_image(ModelsState& s, const std::string& name, const uint8_t* rgba, int width, int height) {
  Status st = [&]() -> Status {
    TSR_ASSIGN_OR_RETURN(ImageSize size, model_image_size(s));
    if (width != size.width || height != size.height)
      return invalid_argument(name, ": the image is ", width, "x", height, ", the model wants ", size.width, "x", size.height);
    const Tensor x = image_tensor(rgba, size);
    TSR_RETURN_IF_ERROR(run_with(s, &x));
    s.image_name = name;
    s.image = size;
    return ok_status();
  }();
  s.error = st.ok() ? "" : st.message();
  return st;
}

void draw_models(ModelsState& s) {
  if (ImGui::Button("Open...")) open_file_picker();
  track("Open...");
  ImGui::SameLine();
  const bool sample = ImGui::Button("Sample model");
  if (sample && open_sample_model(s).ok()) (void)run_random(s);
  track("Sample model");
  hover_tip("A colour classifier converted from examples/colour_classifier.py: drop an image on it", sample, s.sample_tip_off);
  ImGui::SameLine();
  ImGui::TextDisabled("or drop a .tsr / .onnx file, or an image for the model, on the page");
  if (!s.error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "%s: %s", s.name.c_str(), s.error.c_str());
  if (!s.model) return;
  const ir::Graph& g = s.model->main();
  ImGui::Text("%s  (%zu bytes, loaded in %.1f ms, %zu graph(s))", s.name.c_str(), s.bytes, s.load_ms, s.model->graphs.size());
  draw_device_switch(s.device);
  ImGui::BeginDisabled(s.device.pending());
  if (ImGui::Button("Run on random inputs")) {
    Status st = run_random(s);
    if (!st.ok()) s.error = st.message();
  }
  track("Run on random inputs");
  ImGui::SameLine();
  if (ImGui::Button("Run again")) {
    Status st = run_again(s);
    if (!st.ok()) s.error = st.message();
  }
  track("Run again");  // the same inputs on the selected device: switch, run again, compare
  ImGui::EndDisabled();
  if (s.runs > 0) {
    ImGui::SameLine();
    ImGui::Text("run %d on %s: %.2f ms", s.runs, s.device.last == Device::kWebGpu ? "WebGPU" : "CPU", s.run_ms);
  }
  if (ImGui::BeginTable("io", 2, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("inputs");
    for (int32_t id : g.inputs) ImGui::BulletText("%s", describe(g.tensors[static_cast<size_t>(id)]).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("outputs");
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      ImGui::BulletText("%s", describe(g.tensors[static_cast<size_t>(g.outputs[k])]).c_str());
      if (k < s.outputs.size()) ImGui::TextDisabled("  = %s: %s", tensor_summary(s.outputs[k]).c_str(), tensor_text(s.outputs[k], 8).c_str());
    }
    ImGui::EndTable();
  }
  if (!s.outputs.empty() && ImGui::CollapsingHeader("Outputs", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (s.image_name.empty()) ImGui::TextDisabled("on random inputs; drop an image to run on it");
    else ImGui::Text("on %s as f32 [1, %d, %d, %d] in 0..1", s.image_name.c_str(), s.image.channels, s.image.height, s.image.width);
    draw_image_outputs(output_names(s), s.outputs, s.labels);
  }
  if (ImGui::CollapsingHeader("Op histogram", ImGuiTreeNodeFlags_DefaultOpen)) {
    std::map<std::string, int> all;
    for (const ir::Graph& sub : s.model->graphs)
      for (const auto& [op, n] : op_counts(sub)) all[op] += n;
    int most = 1;
    for (const auto& [op, n] : all) most = std::max(most, n);
    for (const auto& [op, n] : all) {
      ImGui::ProgressBar(static_cast<float>(n) / static_cast<float>(most), ImVec2(160, 0), std::to_string(n).c_str());
      ImGui::SameLine();
      ImGui::TextUnformatted(op.c_str());
    }
  }
  if (ImGui::CollapsingHeader("Graph")) draw_model_graph("models_graph", *s.model, s.graph);
}

void write_models_json(cli::JsonWriter& w, const ModelsState& s) {
  w.begin_object().key("name").value(s.name).key("bytes").value(static_cast<int64_t>(s.bytes)).key("error").value(s.error);
  w.key("loaded").value(s.model != nullptr).key("load_ms").value(s.load_ms).key("run_ms").value(s.run_ms).key("runs").value(s.runs);
  w.key("inputs").begin_array();
  if (s.model)
    for (int32_t id : s.model->main().inputs) w.value(describe(s.model->main().tensors[static_cast<size_t>(id)]));
  w.end_array().key("outputs").begin_array();
  for (size_t k = 0; k < s.outputs.size(); ++k) write_tensor_json(w, s.model->main().tensors[static_cast<size_t>(s.model->main().outputs[k])].name, s.outputs[k]);
  w.end_array().key("image").value(s.image_name).key("device");
  write_device_json(w, s.device);
  w.key("top_k");
  if (s.outputs.empty()) w.begin_array().end_array();
  else write_top_k_json(w, s.outputs[0], s.labels);
  w.key("graph");
  if (s.model) write_graph_summary(w, *s.model);
  else w.null();
  w.end_object();
}

}  // namespace tsr::playground
