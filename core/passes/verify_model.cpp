#include "core/passes/verify_model.h"

#include "core/ir/verify.h"
#include "core/passes/infer_types.h"

namespace tsr::passes {

Status verify_model(ir::Model& model) {
  TSR_RETURN_IF_ERROR(ir::verify_structure(model));
  TSR_RETURN_IF_ERROR(check_ops_supported(model));
  return infer_types(model);
}

}  // namespace tsr::passes
