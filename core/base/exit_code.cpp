#include "core/base/exit_code.h"

namespace tsr {

int status_exit_code(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidModel: return 3;
    case StatusCode::kInvalidArgument: return 4;
    case StatusCode::kUnsupported: return 5;
    case StatusCode::kNotFound: return 6;
    case StatusCode::kResource: return 7;
    case StatusCode::kBackend: return 8;
    case StatusCode::kInternal: return 9;
  }
  return 9;
}

}  // namespace tsr
