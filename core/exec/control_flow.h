// Control flow in the executor: If, Loop and Scan run child Plans (DESIGN.md §6).
//
// Each subgraph gets a child Plan prepared once, when the parent Plan is prepared; each
// invocation runs it in a fresh frame (its own value table). Loop-carried values move from one
// iteration to the next as tensor handles (no copies), and their shapes may change between
// iterations. Scan outputs are stacked once at the end. The subgraph input convention (explicit
// captures, `num_captures`) is documented in core/ops/families/control_flow.cpp.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/base/fast_math.h"
#include "core/base/limits.h"
#include "core/exec/backend.h"

namespace tsr::exec {

class DeviceBackend;  // core/exec/device.h

struct PlanOptions {
  // Maximum iterations of any one Loop/Scan invocation (a runaway loop fails with kResource
  // instead of hanging); 0 = unlimited.
  int64_t max_loop_iterations = kDefaultMaxLoopIterations;
  // A device backend to place nodes on besides the host backend; null = everything on the host.
  // Not owned; must outlive the Plans. Subgraph Plans inherit it.
  DeviceBackend* device = nullptr;
  // Placement cost rule (passes::PlacementOptions::min_device_elements).
  int64_t min_device_elements = 16;
  // Inter-op parallelism (host-only Plans): independent nodes of one dependency level run side
  // by side on the pool when at least two of them are large (Plan::run decides per level from
  // the actual input sizes); those nodes' kernels then run single-threaded inside their task.
  // SessionOptions::inter_op sets it (off by default).
  bool inter_op = false;
  // SessionOptions::fast_math, handed to every kernel factory (KernelInit::fast_math).
  FastMath fast_math = FastMath::kNone;
};

bool is_control_flow_op(std::string_view op);

// Creates the executor-side kernel of an If/Loop/Scan node of graph `graph_index`.
Expected<std::unique_ptr<Kernel>> create_control_flow_kernel(const ir::Model& model,
                                                             const KernelInit& init,
                                                             Backend& backend,
                                                             const PlanOptions& options);

// Stacks equally-shaped tensors along a new axis `axis` (0 <= axis <= rank). With no tensors,
// returns a tensor of `dtype` and shape `empty_shape` with 0 inserted at `axis` (dynamic dims of
// empty_shape become 0).
Expected<Tensor> stack_tensors(const std::vector<Tensor>& parts, int64_t axis, DType dtype,
                               const Shape& empty_shape);

}  // namespace tsr::exec
