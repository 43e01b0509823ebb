// The Models panel's device switch: a model runs on the CPU (the playground's own wasm core, in
// this call) or on WebGPU through tessera-web's WebGPU layer (web/js/webgpu.mjs, driven by
// web/playground/device.mjs over this wasm's tessera-web C ABI: web/src/web_api.cpp's
// TensorLists, web_graph.cpp's graph, constants and per-node CPU fallback). WebGPU is
// asynchronous and the ImGui frame loop must not block, so a WebGPU run is a request that the
// page answers on a later frame (tsrp_device_done); the adapter probe likewise
// (tsrp_device_probed). Natively there is no WebGPU: the switch says so and stays on the CPU.
// Single-threaded (the UI thread), as the rest of the playground.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"
#include "tessera/model.h"
#include "tools/cli/json_writer.h"

namespace tsr::web {
struct WebModel;  // web/src/web_api.h: a model handle of tessera-web's C ABI
}

namespace tsr::playground {

enum class Device { kCpu, kWebGpu };

// "cpu" / "webgpu" (the state JSON's names).
const char* device_name(Device d);

struct DeviceSwitch {
  enum class Probe { kNotStarted, kProbing, kReady, kUnavailable };
  // Kept across models (open_model carries it over):
  Device selected = Device::kCpu;
  Probe probe = Probe::kNotStarted;
  std::string adapter;  // kReady: "vendor architecture (description)"; kUnavailable: the reason
  // Per model (reset_model()):
  // The model for webgpu.mjs (a second Session of it, whose model() the page reads), made on the
  // first WebGPU run and kept by an in-flight request until its answer.
  std::shared_ptr<web::WebModel> handle;
  int request = 0;                        // the WebGPU run in flight (0: none)
  int on_gpu = -1, total = 0, copies = 0; // the placement of the last WebGPU run (-1: none yet)
  std::string wasm_only;                  // why the model runs whole on wasm (control flow), or ""
  double cpu_ms = -1, gpu_ms = -1;        // the last run's time on each device (-1: none)
  int gpu_runs = 0;
  Device last = Device::kCpu;             // the device of the outputs shown
  // The last outputs of each device and the inputs generation they were computed on: when both
  // saw the same inputs the panel shows their relative L2 difference.
  std::vector<Tensor> cpu_out, gpu_out;
  uint64_t gen = 0, cpu_gen = 0, gpu_gen = 0;  // gen: the current inputs' generation

  void reset_model();
  bool pending() const { return request != 0; }
};

// The answer to a WebGPU run: `outputs` in the model's output order and the run's wall time on
// WebGPU (readback included); or an error naming what failed (outputs empty); or neither, when the
// model must run whole on the CPU (d.wasm_only says why: control flow) and the caller runs it there.
using WebGpuDone = std::function<void(std::vector<Tensor> outputs, double ms, const std::string& error)>;

// Starts the adapter probe once (the first time the switch is drawn): openWebGpu() in the page.
void probe_webgpu(DeviceSwitch& d);

// Sends `inputs` (the model's inputs in order) to the page to run `model` on WebGPU; `done` is
// called on a later frame, after d.request is cleared and d's placement is set. `d` must outlive
// the request (the App's ModelsState does); a request whose d.request was reset meanwhile (another
// model opened) is dropped. Errors (no WebGPU here, a request in flight, the model's session) are
// returned now, nothing sent.
Status start_webgpu_run(DeviceSwitch& d, const std::shared_ptr<ir::Model>& model, const std::vector<Tensor>& inputs,
                        WebGpuDone done);

// sqrt(sum (a - b)^2 / sum b^2) over all outputs' elements; -1 when shapes or counts differ.
double rel_l2(const std::vector<Tensor>& a, const std::vector<Tensor>& b);

// The switch: CPU / WebGPU radio buttons (WebGPU disabled while probing or unavailable), the
// adapter or why WebGPU is unavailable, the placement (nodes on WebGPU / total, copies) and the
// time of the last run on each device. Returns true when the selection changed.
bool draw_device_switch(DeviceSwitch& d);

// {"selected", "probe", "adapter", "pending", "on_gpu", "total", "copies", "wasm_only",
//  "cpu_ms", "gpu_ms", "gpu_runs", "last", "rel_l2"} (rel_l2: -1 unless both devices ran the same inputs).
void write_device_json(cli::JsonWriter& w, const DeviceSwitch& d);

}  // namespace tsr::playground
