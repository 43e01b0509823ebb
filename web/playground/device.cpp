#include "web/playground/device.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "core/ir/graph.h"
#include "imgui.h"
#include "tessera/session.h"
#include "web/playground/widgets.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>

#include "web/src/web_api.h"

// The page's side (index.html's Module.tsrpDevice() resolves to web/playground/device.mjs).
// Calls reach it in order: each is a .then on the same module promise.
EM_JS(int, js_device_probe, (), {
  if (!Module.tsrpDevice) return 0;
  Module.tsrpDevice().then((d) => d.probe(Module)).catch((e) =>
    Module.ccall('tsrp_device_probed', null, ['number', 'string'], [0, 'web/playground/device.mjs did not load: ' + e.message]));
  return 1;
});
// device.mjs reads and frees `list` (a tsr::web::TensorList of the inputs), runs model handle `h`
// on WebGPU and answers with tsrp_device_done(request, ...).
EM_JS(void, js_device_run, (int request, void* h, void* list), {
  Module.tsrpDevice().then((d) => d.run(Module, request, h, list));
});
// Drops device.mjs's runner for handle `h` (its GPU buffers) before the handle is freed.
EM_JS(void, js_device_forget, (void* h), {
  if (Module.tsrpDevice) Module.tsrpDevice().then((d) => d.forget(h));
});
#endif

namespace tsr::playground {
namespace {

#ifdef __EMSCRIPTEN__
// A request in flight: the switch that sent it, the handle it runs (kept alive until the answer:
// the page calls into it per node), and where the answer goes.
struct InFlight {
  int id = 0;
  DeviceSwitch* d = nullptr;
  std::shared_ptr<web::WebModel> handle;
  WebGpuDone done;
};
std::vector<InFlight> g_in_flight;
DeviceSwitch* g_probing = nullptr;
int g_next_request = 1;
#endif

}  // namespace

const char* device_name(Device d) { return d == Device::kWebGpu ? "webgpu" : "cpu"; }

void DeviceSwitch::reset_model() {
  const Device keep = selected;
  const Probe probed = probe;
  std::string adapter_text = std::move(adapter);
  *this = DeviceSwitch{};
  selected = keep;
  probe = probed;
  adapter = std::move(adapter_text);
}

void probe_webgpu(DeviceSwitch& d) {
  if (d.probe != DeviceSwitch::Probe::kNotStarted) return;
#ifdef __EMSCRIPTEN__
  g_probing = &d;
  if (js_device_probe()) {
    d.probe = DeviceSwitch::Probe::kProbing;
    return;
  }
  d.adapter = "the page has no WebGPU bridge (Module.tsrpDevice, web/playground/index.html)";
#else
  d.adapter = "WebGPU exists only in the browser build of the playground";
#endif
  d.probe = DeviceSwitch::Probe::kUnavailable;
}

Status start_webgpu_run(DeviceSwitch& d, const std::shared_ptr<ir::Model>& model, const std::vector<Tensor>& inputs,
                        WebGpuDone done) {
  if (d.probe != DeviceSwitch::Probe::kReady) return unsupported("WebGPU is not available here: ", d.adapter);
  if (d.pending()) return invalid_argument("a run on WebGPU is still in flight");
#ifdef __EMSCRIPTEN__
  if (!d.handle) {
    TSR_ASSIGN_OR_RETURN(auto session, Session::create(model));
    d.handle = std::shared_ptr<web::WebModel>(new web::WebModel{std::move(session)}, [](web::WebModel* h) {
      js_device_forget(h);
      delete h;
    });
  }
  const ir::Graph& g = model->main();
  auto* list = new web::TensorList;  // device.mjs frees it once read
  for (size_t k = 0; k < inputs.size() && k < g.inputs.size(); ++k) {
    list->names.push_back(g.tensors[static_cast<size_t>(g.inputs[k])].name);
    list->tensors.push_back(inputs[k]);
  }
  d.request = g_next_request++;
  g_in_flight.push_back(InFlight{d.request, &d, d.handle, std::move(done)});
  js_device_run(d.request, d.handle.get(), list);
  return ok_status();
#else
  (void)model, (void)inputs, (void)done;
  return unsupported("WebGPU exists only in the browser build of the playground");
#endif
}

double rel_l2(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size() || a.empty()) return -1;
  double num = 0, den = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].shape() != b[k].shape()) return -1;
    const std::vector<double> x = tensor_values(a[k]), y = tensor_values(b[k]);
    if (x.size() != y.size()) return -1;
    for (size_t i = 0; i < x.size(); ++i) {
      num += (x[i] - y[i]) * (x[i] - y[i]);
      den += y[i] * y[i];
    }
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

bool draw_device_switch(DeviceSwitch& d) {
  using Probe = DeviceSwitch::Probe;
  probe_webgpu(d);
  const Device before = d.selected;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Device");
  ImGui::SameLine();
  ImGui::BeginDisabled(d.pending());
  if (ImGui::RadioButton("CPU (wasm)", d.selected == Device::kCpu)) d.selected = Device::kCpu;
  track("CPU (wasm)");
  ImGui::SameLine();
  ImGui::BeginDisabled(d.probe != Probe::kReady);
  if (ImGui::RadioButton("WebGPU", d.selected == Device::kWebGpu)) d.selected = Device::kWebGpu;
  track("WebGPU");
  ImGui::EndDisabled();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (d.probe == Probe::kReady) {
    ImGui::TextDisabled("adapter: %s", d.adapter.c_str());
  } else if (d.probe == Probe::kUnavailable) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.75f, 0.3f, 1));
    ImGui::TextWrapped("WebGPU unavailable: %s", d.adapter.c_str());
    ImGui::PopStyleColor();
    track("WebGPU unavailable");
  } else {
    ImGui::TextDisabled("WebGPU: looking for an adapter...");
  }
  if (d.pending()) ImGui::TextDisabled("running on WebGPU...");
  if (!d.wasm_only.empty())
    ImGui::TextDisabled("placement: the model runs whole on the CPU (%s)", d.wasm_only.c_str());
  else if (d.on_gpu >= 0)
    ImGui::Text("placement: %d / %d nodes on WebGPU, %d copies between the devices per run", d.on_gpu, d.total, d.copies);
  if (d.cpu_ms >= 0 || d.gpu_ms >= 0) {
    char cpu[48] = "-", gpu[96] = "-";
    if (d.cpu_ms >= 0) std::snprintf(cpu, sizeof cpu, "%.2f ms", d.cpu_ms);
    if (d.gpu_ms >= 0)
      std::snprintf(gpu, sizeof gpu, d.gpu_runs == 1 ? "%.2f ms (run %d: compiles the pipelines)" : "%.2f ms (run %d)", d.gpu_ms, d.gpu_runs);
    if (d.probe == Probe::kReady || d.gpu_ms >= 0) ImGui::Text("last run on each device:  CPU %s   WebGPU %s", cpu, gpu);
    if (d.cpu_gen == d.gen && d.gpu_gen == d.gen)
      ImGui::TextDisabled("WebGPU vs CPU on these inputs: rel-L2 %.2g", rel_l2(d.gpu_out, d.cpu_out));
  }
  return d.selected != before;
}

void write_device_json(cli::JsonWriter& w, const DeviceSwitch& d) {
  static const char* const kProbe[] = {"not_started", "probing", "ready", "unavailable"};
  w.begin_object().key("selected").value(device_name(d.selected)).key("probe").value(kProbe[static_cast<int>(d.probe)]);
  w.key("adapter").value(d.adapter).key("pending").value(d.pending());
  w.key("on_gpu").value(d.on_gpu).key("total").value(d.total).key("copies").value(d.copies).key("wasm_only").value(d.wasm_only);
  w.key("cpu_ms").value(d.cpu_ms).key("gpu_ms").value(d.gpu_ms).key("gpu_runs").value(d.gpu_runs).key("last").value(device_name(d.last));
  w.key("rel_l2").value(d.cpu_gen == d.gen && d.gpu_gen == d.gen ? rel_l2(d.gpu_out, d.cpu_out) : -1.0);
  w.end_object();
}

}  // namespace tsr::playground

#ifdef __EMSCRIPTEN__
// ---- the page's answers (web/playground/device.mjs) --------------------------------------
extern "C" {

// The adapter probe: ok = 1 with the adapter's description, or 0 with why WebGPU is unusable.
EMSCRIPTEN_KEEPALIVE void tsrp_device_probed(int ok, const char* text) {
  using Probe = tsr::playground::DeviceSwitch::Probe;
  if (!tsr::playground::g_probing) return;
  tsr::playground::g_probing->probe = ok ? Probe::kReady : Probe::kUnavailable;
  tsr::playground::g_probing->adapter = text;
}

// The answer to request `id`: `out` (a TensorList the page made with tsrw_list_*, taken here;
// null on failure) named by the model's outputs, the run's ms, the placement (nodes on WebGPU,
// nodes, copies), why the model runs whole on wasm ("" if it does not) and an error ("" if none).
EMSCRIPTEN_KEEPALIVE void tsrp_device_done(int id, tsr::web::TensorList* out, double ms, int on_gpu, int total, int copies,
                                           const char* wasm_only, const char* error) {
  using namespace tsr::playground;
  std::unique_ptr<tsr::web::TensorList> owned(out);
  auto it = g_in_flight.begin();
  while (it != g_in_flight.end() && it->id != id) ++it;
  if (it == g_in_flight.end()) return;
  InFlight f = std::move(*it);
  g_in_flight.erase(it);
  if (f.d->request != id) return;  // another model was opened meanwhile
  DeviceSwitch& d = *f.d;
  d.request = 0;
  d.on_gpu = on_gpu, d.total = total, d.copies = copies;
  d.wasm_only = wasm_only;
  std::string err = error;
  std::vector<tsr::Tensor> outputs;
  if (err.empty() && out) {
    // By name, in the model's output order (the page's object keys need not keep that order).
    const tsr::ir::Graph& g = d.handle->session->model().graph().main();
    for (int32_t vid : g.outputs) {
      const std::string& name = g.tensors[static_cast<size_t>(vid)].name;
      size_t k = 0;
      while (k < out->names.size() && out->names[k] != name) ++k;
      if (k == out->names.size()) {
        err = tsr::str_cat("the WebGPU run returned no output \"", name, "\"");
        outputs.clear();
        break;
      }
      outputs.push_back(out->tensors[k]);
    }
  }
  f.done(std::move(outputs), ms, err);
}

}  // extern "C"
#endif
