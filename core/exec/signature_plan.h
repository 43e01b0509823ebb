// What one input signature fixes about the runs of a Plan (issue 12): the types of the steps
// whose output shapes follow from the input shapes alone, the values computed from shapes only
// (ONNX shape subgraphs: Shape -> Gather -> Concat -> Reshape), and a static memory plan for the
// intermediate values. Internal to core/exec (plan.cpp, plan_recorder.cpp, plan_signature.cpp).
//
// The first run with a signature records it (every step infers its types from the actual inputs,
// as without a plan); the runs after that skip the inference of the recorded steps, take the
// recorded values instead of recomputing them, and place the planned values at fixed offsets of
// one arena per run slot (core/exec/memory_plan.h). A step keeps inferring at every run when its
// types may change with data: control flow (If, Loop, Scan), device steps, and any step whose
// inference read an input value that the signature does not fix (NonZero's count, TopK's k from
// a tensor, a Reshape to a computed shape), together with everything downstream of it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/exec/kernel.h"
#include "core/ops/op_def.h"
#include "core/tensor/tensor.h"

namespace tsr::exec {

struct SignaturePlan {
  // The signature: each graph input's kind, dtype and shape, and whether the steps may run in
  // inter-op waves (lifetimes then count in waves, so that nodes running side by side never share
  // bytes).
  std::vector<ops::ValueType> inputs;
  bool waves = false;

  // By step: the recorded output types, parallel to node.outputs; empty: infer at every run.
  std::vector<std::vector<ops::ValueType>> types;
  // By step: the outputs are fixed by the signature; the step is skipped and `values` used.
  std::vector<uint8_t> folded;
  std::vector<Tensor> values;       // by tensor id: the folded values (undefined elsewhere)
  std::vector<int32_t> folded_ids;  // the tensor ids with a folded value
  // By step, parallel to node.outputs: the output's byte offset in the arena, -1 where the
  // kernel allocates it as usual (graph outputs, values that escape the run, unrecorded steps).
  std::vector<std::vector<int64_t>> offsets;
  std::vector<int64_t> value_offset;  // by tensor id, the same offsets
  size_t arena_bytes = 0;
  size_t planned_values = 0;  // values placed in the arena (for tests and reports)
  size_t inplace_values = 0;  // of those, written over an input that died at their step

  // Whether a run with `inputs` (and the same wave setting) has this signature.
  bool matches(const std::vector<Tensor>& run_inputs, bool run_waves) const;
};

// The bookkeeping of a recording run, by tensor id and by step (a RunState's, reused).
struct SignatureRecording {
  // By tensor id: kShapeFixed (its type follows from the signature), kValueFixed (its value too).
  static constexpr uint8_t kShapeFixed = 1, kValueFixed = 2;
  std::vector<uint8_t> fixed;
  struct Step {
    bool recorded = false;  // types recorded (set before the kernel, confirmed after it)
    bool folded = false;    // outputs fixed by the signature
    bool viewed = false;    // the kernel returned input 0 itself as output 0 (Cast to the same dtype)
    std::vector<ops::ValueType> types;
    std::vector<int64_t> modes;  // per output: KernelContext::kTransient or -1 (its offsets)
  };
  std::vector<Step> steps;
  std::vector<Tensor> values;  // by tensor id: the folded values
};

}  // namespace tsr::exec
