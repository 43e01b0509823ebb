// Default limits of a Session (tsr::SessionOptions), shared by every front door: the CLI, the C
// API, tessera-web and the C++ API give an untrusted model the same bounds.
#pragma once

#include <cstdint>

namespace tsr {

// Cap on the iterations of one Loop/Scan invocation; a runaway loop fails with kResource naming
// the node instead of hanging.
inline constexpr int64_t kDefaultMaxLoopIterations = 1'000'000;

}  // namespace tsr
