// Identity (ONNX opset 16): one input of any dtype, one output of the same type and shape.
#include "core/ops/op_def.h"

namespace tsr::ops {

void register_identity_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Identity") {
    OpDef def{"Identity", "", 16, 1, 1, 1, 1, {},
              [](InferContext& ctx) {
                ctx.output(0) = ctx.input(0);
                return ok_status();
              },
              "Returns its input unchanged (a view, no copy; also sequences and optionals)"};
    def.any_value_kind = true;
    def.view_of_input0 = true;
    r.add(std::move(def));
  }
}

}  // namespace tsr::ops
