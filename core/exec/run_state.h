// The scratch of one Plan run (internal to core/exec: plan.cpp, plan_builder.cpp,
// plan_recorder.cpp, plan_signature.cpp). Kept out of plan.h so that the Plan's users see only
// its interface.
//
// Everything a run writes lives in a RunState, leased from the Plan's pool for the run's duration
// (core/exec/scratch_pool.h); the vectors keep the capacity earlier runs grew, so steady-state
// runs allocate nothing for their scratch.
#pragma once

#include <vector>

#include "core/exec/device.h"
#include "core/exec/kernel.h"
#include "core/exec/scratch_arena.h"
#include "core/exec/signature_plan.h"
#include "core/ops/op_def.h"
#include "core/tensor/tensor.h"

namespace tsr::exec {

// One run's scratch: the value table and one step's arguments (sized on first use, then reused).
struct RunState {
  std::vector<Tensor> values;
  std::vector<ops::ValueType> in_types;
  std::vector<ops::ValueType> out_types;
  std::vector<const Tensor*> in_values;
  std::vector<Tensor> outs;
  std::vector<DeviceTensor> device_values;
  std::vector<const DeviceTensor*> din_values;
  std::vector<DeviceTensor> douts;
  ScratchArena scratch;
  Tensor arena;                  // the memory plans' arena of this run slot (grown, kept)
  SignatureRecording recording;  // the bookkeeping of a recording run
  // One per node of an inter-op wave run in parallel: its arguments and its result.
  struct Task {
    std::vector<const Tensor*> in_values;
    std::vector<ops::ValueType> in_types;
    std::vector<ops::ValueType> out_types;
    std::vector<Tensor> outs;
    ScratchArena scratch;
    Status status;
  };
  std::vector<Task> tasks;
};

// The run being made: its signature plan (null: none yet, or none kept), or a recording.
struct RunMode {
  const SignaturePlan* plan = nullptr;
  bool record = false;
  bool waves = false;  // steps may run in inter-op waves
};

// Grows rs.arena to at least `bytes` (a fresh block: the arena is kept for the slot's lifetime).
Status grow_arena(RunState& rs, size_t bytes);

}  // namespace tsr::exec
