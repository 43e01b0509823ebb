// Signature plans of a Plan (core/exec/signature_plan.h): finding the plan of a run's signature
// and checking a planned run's outputs against it. Recording one: plan_recorder.cpp.
#include <algorithm>

#include "core/exec/plan.h"
#include "core/exec/run_state.h"

namespace tsr::exec {

bool SignaturePlan::matches(const std::vector<Tensor>& run_inputs, bool run_waves) const {
  if (run_waves != waves || run_inputs.size() != inputs.size()) return false;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& v = run_inputs[k];
    const ops::ValueType& t = inputs[k];
    if (v.kind() != t.kind || v.dtype() != t.dtype) return false;
    if (t.kind == ValueKind::kTensor && v.shape() != t.shape) return false;
  }
  return true;
}

std::shared_ptr<const SignaturePlan> Plan::find_signature(const std::vector<Tensor>& inputs, bool waves) const {
  std::lock_guard<std::mutex> lock(signatures_mu_);
  for (size_t i = 0; i < signatures_.size(); ++i) {
    if (!signatures_[i]->matches(inputs, waves)) continue;
    std::rotate(signatures_.begin(), signatures_.begin() + static_cast<std::ptrdiff_t>(i),
                signatures_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return signatures_.front();
  }
  return nullptr;
}

std::vector<std::shared_ptr<const SignaturePlan>> Plan::signature_plans() const {
  std::lock_guard<std::mutex> lock(signatures_mu_);
  return signatures_;
}

Status Plan::check_arena_outputs(size_t s, std::vector<Tensor>& values, const RunState& rs, const RunMode& mode) const {
  const ir::Node& node = *steps_[s].node;
  const char* base = static_cast<const char*>(rs.arena.raw());
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    const int32_t t = node.outputs[k];
    if (t < 0) continue;
    Tensor& v = values[static_cast<size_t>(t)];
    if (v.is_sequence()) {
      bool shared = false;
      for (const Tensor& e : v.elements()) shared = shared || e.shares_storage(rs.arena);
      if (!shared) continue;
      std::vector<Tensor> elements;
      for (const Tensor& e : v.elements()) {
        auto copy = e.clone();
        if (!copy.ok()) return copy.status().with_context(str_cat(steps_[s].place, ".output[", k, "]"));
        elements.push_back(std::move(copy).value());
      }
      v = Tensor::sequence(v.dtype(), std::move(elements));
      continue;
    }
    if (!v.shares_storage(rs.arena)) continue;
    const int64_t off = mode.plan->value_offset[static_cast<size_t>(t)];
    if (off >= 0 && v.raw() == base + off) continue;
    // The kernel returned a view into the arena that the plan did not foresee (a Cast to the
    // same dtype, a no-op reduction): those bytes may be reused while it lives, so copy it out.
    auto copy = v.clone();
    if (!copy.ok()) return copy.status().with_context(str_cat(steps_[s].place, ".output[", k, "]"));
    v = std::move(copy).value();
  }
  return ok_status();
}

}  // namespace tsr::exec
