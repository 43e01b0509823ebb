// Identity: the output shares the input's storage (no copy).
#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

void register_identity_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Identity") r.add_fn("Identity", {}, [](exec::KernelContext& ctx) -> Status {
    ctx.set_output(0, *ctx.input(0));
    return ok_status();
  });
}

}  // namespace tsr::cpu
