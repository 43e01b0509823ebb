// Process exit codes of StatusCode groups, shared by the `tessera` CLI and the C API's
// tsr_error_code so that scripts and C callers see the same numbers (README "Exit codes").
#pragma once

#include "core/base/status.h"

namespace tsr {

// 0 ok, 3 invalid model, 4 invalid argument, 5 unsupported, 6 not found, 7 resource limit,
// 8 backend, 9 internal. (2, a usage error, is the CLI's own.)
int status_exit_code(StatusCode code);

}  // namespace tsr
