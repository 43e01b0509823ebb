// SumTo (domain "tessera"), the op the autodiff pass emits to undo broadcasting; ONNX lacks it.
// It has no gradient rule (no second-order autodiff).
#include "core/ops/shape_util.h"
#include "core/ops/op_def.h"

namespace tsr::ops {
namespace {

using ir::AttrKind;

// SumTo(X, shape) -> Y: the reverse of NumPy broadcasting. Y has `shape`, which X's shape must
// broadcast from; each Y element is the sum of the X elements broadcast from it. This is the
// gradient of every broadcasting op with respect to its smaller operand.
Status infer_sum_to(InferContext& c) {
  TSR_RETURN_IF_ERROR(c.require_dtype(1, {DType::kI64}));
  const ValueType& x = c.input(0);
  const auto shape = shape_util::known_i64(c, 1);
  if (!shape) {
    const int64_t n = shape_util::static_len_1d(c, 1);
    if (n < 0) c.set_output_unknown_shape(0, x.dtype);
    else c.set_output(0, x.dtype, Shape(static_cast<size_t>(n), -1));
    return ok_status();
  }
  if (x.has_shape) {
    for (int64_t d : *shape)
      if (d < 0) return c.arg_error("input[1]: negative dim ", d);
    if (shape->size() > x.shape.size())
      return c.arg_error("input[1]: shape ", shape_str(*shape), " has more dims than X ", shape_str(x.shape));
    const size_t off = x.shape.size() - shape->size();
    for (size_t k = 0; k < shape->size(); ++k) {
      const int64_t xd = x.shape[off + k], sd = (*shape)[k];
      if (xd >= 0 && sd != 1 && sd != xd)
        return c.arg_error("X ", shape_str(x.shape), " does not broadcast from ", shape_str(*shape));
    }
  }
  c.set_output(0, x.dtype, *shape);
  return ok_status();
}

}  // namespace

void register_sum_to_ops(OpRegistry& r) {
  TSR_IF_SELECTED("SumTo") r.add({"SumTo", "tessera", 1, 2, 2, 1, 1, {}, infer_sum_to,
         "Sums a broadcast tensor back to a shape (gradient of broadcasting)"});
}

}  // namespace tsr::ops
