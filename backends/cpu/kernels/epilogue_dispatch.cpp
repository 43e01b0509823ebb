// apply_epilogue_best (epilogue_dispatch.h). Compiled once per SIMD target (hwy/foreach_target.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/epilogue_dispatch.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "backends/cpu/kernels/epilogue_dispatch.h"

#include "backends/cpu/kernels/epilogue.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

void epilogue_rows_target(ThreadPool* pool, const ops::ActivationSpec& a, float* y, int64_t rows, int64_t cols,
                          int64_t ld) {
  apply_epilogue_rows_pooled(pool, a, y, rows, cols, ld);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(epilogue_rows_target);

void apply_epilogue_best(ThreadPool* pool, const ops::ActivationSpec& a, float* y, int64_t rows, int64_t cols,
                         int64_t ld) {
  if (rows <= 0 || cols <= 0 || (a.kind == ops::FusedActivation::kNone && !a.has_post())) return;
  HWY_DYNAMIC_DISPATCH(epilogue_rows_target)(pool, a, y, rows, cols, ld);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
