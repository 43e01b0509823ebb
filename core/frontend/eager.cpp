// The public eager API (core/include/tessera/eager.h) over frontend::EagerEmitter.
#include "core/include/tessera/eager.h"

#include <cmath>
#include <limits>

#include "core/ops/grad.h"

namespace tsr::eager {

using frontend::EagerEmitter;
using frontend::OpRef;

namespace {

// The ops behind operators and named functions, resolved once per process.
struct Refs {
  OpRef add = EagerEmitter::resolve("Add"), sub = EagerEmitter::resolve("Sub"), mul = EagerEmitter::resolve("Mul"),
        div = EagerEmitter::resolve("Div"), neg = EagerEmitter::resolve("Neg"), less = EagerEmitter::resolve("Less"),
        greater = EagerEmitter::resolve("Greater"), less_eq = EagerEmitter::resolve("LessOrEqual"),
        greater_eq = EagerEmitter::resolve("GreaterOrEqual"), equal = EagerEmitter::resolve("Equal"),
        not_ = EagerEmitter::resolve("Not"), matmul = EagerEmitter::resolve("MatMul"),
        pow = EagerEmitter::resolve("Pow"), relu = EagerEmitter::resolve("Relu"),
        sigmoid = EagerEmitter::resolve("Sigmoid"), tanh = EagerEmitter::resolve("Tanh"),
        exp = EagerEmitter::resolve("Exp"), log = EagerEmitter::resolve("Log"), sqrt = EagerEmitter::resolve("Sqrt"),
        abs = EagerEmitter::resolve("Abs"), reduce_sum = EagerEmitter::resolve("ReduceSum"),
        reduce_mean = EagerEmitter::resolve("ReduceMean"), reduce_max = EagerEmitter::resolve("ReduceMax"),
        softmax = EagerEmitter::resolve("Softmax"), reshape = EagerEmitter::resolve("Reshape"),
        transpose = EagerEmitter::resolve("Transpose"), concat = EagerEmitter::resolve("Concat"),
        cast = EagerEmitter::resolve("Cast");
};

const Refs& refs() {
  static const Refs r;
  return r;
}

// The context of an op's inputs; null (and `error` set) when an operand is empty or the
// operands belong to different contexts. `fallback` is used when no operand has one.
Context* context_of(std::span<const Tensor* const> ins, bool empty_is_omitted, Context*& fallback, Status& error) {
  Context* ctx = nullptr;
  for (const Tensor* t : ins) {
    if (!t->defined()) {
      if (!empty_is_omitted) error = invalid_argument("eager: an operand is an empty Tensor");
      continue;
    }
    if (ctx && t->context() != ctx) error = invalid_argument("eager: operands belong to different contexts");
    if (!ctx) ctx = t->context();
  }
  if (!ctx) ctx = fallback ? fallback : &default_context();
  fallback = ctx;
  return error.ok() ? ctx : nullptr;
}

// Runs `op` on `ins`; empty Tensors are omitted inputs only when `empty_is_omitted`.
void run(const OpRef& op, std::span<const Tensor* const> ins, std::span<ops::Value> outs,
         std::vector<ir::Attribute> attrs, bool empty_is_omitted, Context* ctx_hint = nullptr) {
  Status error;
  Context* ctx = context_of(ins, empty_is_omitted, ctx_hint, error);
  EagerEmitter& e = (ctx ? ctx : ctx_hint)->emitter();
  if (!ctx) {
    for (ops::Value& o : outs) o = e.poisoned(error);
    return;
  }
  ops::Value small[4];
  std::vector<ops::Value> big;
  if (ins.size() > 4) big.resize(ins.size());
  const std::span<ops::Value> vals = ins.size() > 4 ? std::span<ops::Value>(big) : std::span<ops::Value>(small, ins.size());
  for (size_t k = 0; k < ins.size(); ++k) vals[k] = ins[k]->value();
  if (frontend::Tracer* t = ctx->tracer()) {  // the recording path: by name, through the tracer
    const std::vector<ops::Value> r =
        t->emit_n(op.def->name, std::vector<ops::Value>(vals.begin(), vals.end()), outs.size(), std::move(attrs));
    std::copy(r.begin(), r.end(), outs.begin());
    return;
  }
  e.run(op, vals, outs, std::move(attrs));
}

Tensor run1(const OpRef& op, std::initializer_list<const Tensor*> ins, std::vector<ir::Attribute> attrs = {}) {
  ops::Value out;
  Context* ctx = nullptr;
  run(op, std::span<const Tensor* const>(ins.begin(), ins.size()), std::span<ops::Value>(&out, 1), std::move(attrs),
      false, ctx);
  for (const Tensor* t : ins)
    if (t->defined()) return Tensor::adopt(*t->context(), out);
  return Tensor::adopt(default_context(), out);
}

Context& ctx_of(const Tensor& t) { return t.defined() ? *t.context() : default_context(); }

// A scalar of `like`'s dtype (f32 when `like` is not ok()).
Tensor scalar_like(const Tensor& like, double v) {
  Context& ctx = ctx_of(like);
  const DType d = like.ok() ? like.dtype() : DType::kF32;
  return Tensor::adopt(ctx, ops::scalar(ctx.recorder(), d, v));
}

Tensor ints(Context& ctx, const std::vector<int64_t>& v) {
  return Tensor::adopt(ctx, ctx.recorder().constant(::tsr::Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v)));
}

Tensor reduce(const OpRef& op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<ir::Attribute> attrs{ir::Attribute::make_int("keepdims", keepdims ? 1 : 0)};
  if (axes.empty()) return run1(op, {&x}, std::move(attrs));
  const Tensor a = ints(ctx_of(x), axes);
  return run1(op, {&x, &a}, std::move(attrs));
}

}  // namespace

Context& default_context() {
  thread_local Context ctx;
  return ctx;
}

Tensor Tensor::from(::tsr::Tensor value, bool requires_grad, Context& ctx) {
  if (!value.defined()) return Tensor(&ctx, ctx.emitter().poisoned(invalid_argument("eager: an undefined tensor")));
  const ops::Value v = ctx.recorder().constant(std::move(value));
  if (requires_grad) ctx.emitter().set_requires_grad(v, true);
  return Tensor(&ctx, v);
}

const ::tsr::Tensor& Tensor::data() const {
  static const ::tsr::Tensor kNone;
  return ctx_ ? ctx_->emitter().tensor(v_) : kNone;
}

double Tensor::item(int64_t i) const {
  const ::tsr::Tensor& t = data();
  if (!t.defined() || t.kind() != ValueKind::kTensor || i < 0 || i >= t.numel())
    return std::numeric_limits<double>::quiet_NaN();
  return t.scalar_f64(i);
}

Tensor& Tensor::requires_grad_(bool on) {
  if (ctx_) ctx_->emitter().set_requires_grad(v_, on);
  return *this;
}

Status Tensor::backward(bool retain_tape) const {
  if (!ok()) return invalid_argument("backward: the tensor holds no value (empty, or a failed op)");
  EagerEmitter& e = ctx_->emitter();
  const std::vector<ops::Value> leaves = e.leaves_of(v_);
  TSR_ASSIGN_OR_RETURN(std::vector<ops::Value> grads, e.gradients(v_, leaves, /*consume=*/!retain_tape));
  const bool mode = e.grad_enabled();
  e.set_grad_enabled(false);
  for (size_t i = 0; i < leaves.size(); ++i) {
    const ops::Value old = e.accumulated_grad(leaves[i]);
    ops::Value g = grads[i];
    if (old.valid()) {
      g = e.emit("Add", {old, grads[i]});
      e.release(grads[i]);
    }
    e.set_accumulated_grad(leaves[i], g);
    e.release(g);
  }
  e.set_grad_enabled(mode);
  return e.status();
}

Tensor Tensor::grad() const {
  if (!ctx_) return {};
  const ops::Value g = ctx_->emitter().accumulated_grad(v_);
  if (!g.valid()) return {};
  ctx_->emitter().retain(g);
  return Tensor(ctx_, g);
}

void Tensor::zero_grad() {
  if (ctx_) ctx_->emitter().set_accumulated_grad(v_, ops::Value{});
}

Tensor Tensor::detach() const {
  if (!ctx_) return {};
  return Tensor(ctx_, ctx_->recorder().constant(data()));
}

bool decide(const Tensor& cond, const std::string& where) {
  Context& ctx = ctx_of(cond);
  if (frontend::Tracer* t = ctx.tracer()) return t->decide(cond.value(), where);
  const ::tsr::Tensor& v = cond.data();
  if (!v.defined() || v.kind() != ValueKind::kTensor || v.numel() != 1) {
    ctx.emitter().release(ctx.emitter().poisoned(
        invalid_argument(where, ": a branch condition must be one element, got ",
                         v.defined() ? shape_str(v.shape()) : std::string("no value"))));
    return false;
  }
  return v.scalar_f64(0) != 0.0;
}

// ---- Creation -------------------------------------------------------------------------------

Tensor scalar(double v, DType dtype, Context& ctx) { return Tensor::adopt(ctx, ops::scalar(ctx.recorder(), dtype, v)); }

Tensor full(const Shape& shape, double v, DType dtype, Context& ctx) {
  const Tensor s = ints(ctx, shape);
  const Tensor value = scalar(v, dtype, ctx);
  auto one = value.data().reshaped({1});
  if (!one.ok()) return Tensor::adopt(ctx, ctx.emitter().poisoned(one.status()));
  return op("ConstantOfShape", {s}, {ir::Attribute::make_tensor("value", std::move(one).value())});
}

Tensor zeros(const Shape& shape, DType dtype, Context& ctx) { return full(shape, 0.0, dtype, ctx); }
Tensor ones(const Shape& shape, DType dtype, Context& ctx) { return full(shape, 1.0, dtype, ctx); }

// ---- Any op ---------------------------------------------------------------------------------

std::vector<Tensor> op_n(std::string_view name, const std::vector<Tensor>& inputs, size_t num_outputs,
                         std::vector<ir::Attribute> attrs) {
  Context* ctx = nullptr;
  for (const Tensor& t : inputs)
    if (t.defined() && !ctx) ctx = t.context();
  if (!ctx) ctx = &default_context();
  std::vector<Tensor> result;
  const OpRef r = EagerEmitter::resolve(name);
  std::vector<ops::Value> outs(num_outputs);
  if (!r.valid()) {
    for (ops::Value& o : outs) o = ctx->emitter().poisoned(unsupported("eager: unsupported op '", name, "'"));
  } else {
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : inputs) ptrs.push_back(&t);
    run(r, ptrs, outs, std::move(attrs), /*empty_is_omitted=*/true, ctx);
  }
  for (const ops::Value& o : outs) result.push_back(Tensor::adopt(*ctx, o));
  return result;
}

Tensor op(std::string_view name, const std::vector<Tensor>& inputs, std::vector<ir::Attribute> attrs) {
  return std::move(op_n(name, inputs, 1, std::move(attrs))[0]);
}

// ---- Operators ------------------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) { return run1(refs().add, {&a, &b}); }
Tensor operator-(const Tensor& a, const Tensor& b) { return run1(refs().sub, {&a, &b}); }
Tensor operator*(const Tensor& a, const Tensor& b) { return run1(refs().mul, {&a, &b}); }
Tensor operator/(const Tensor& a, const Tensor& b) { return run1(refs().div, {&a, &b}); }
Tensor operator-(const Tensor& a) { return run1(refs().neg, {&a}); }
Tensor operator<(const Tensor& a, const Tensor& b) { return run1(refs().less, {&a, &b}); }
Tensor operator>(const Tensor& a, const Tensor& b) { return run1(refs().greater, {&a, &b}); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return run1(refs().less_eq, {&a, &b}); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return run1(refs().greater_eq, {&a, &b}); }
Tensor operator==(const Tensor& a, const Tensor& b) { return run1(refs().equal, {&a, &b}); }
Tensor operator!=(const Tensor& a, const Tensor& b) {
  const Tensor eq = a == b;
  return run1(refs().not_, {&eq});
}

Tensor operator+(const Tensor& a, double b) { return a + scalar_like(a, b); }
Tensor operator-(const Tensor& a, double b) { return a - scalar_like(a, b); }
Tensor operator*(const Tensor& a, double b) { return a * scalar_like(a, b); }
Tensor operator/(const Tensor& a, double b) { return a / scalar_like(a, b); }
Tensor operator+(double a, const Tensor& b) { return scalar_like(b, a) + b; }
Tensor operator-(double a, const Tensor& b) { return scalar_like(b, a) - b; }
Tensor operator*(double a, const Tensor& b) { return scalar_like(b, a) * b; }
Tensor operator/(double a, const Tensor& b) { return scalar_like(b, a) / b; }
Tensor operator<(const Tensor& a, double b) { return a < scalar_like(a, b); }
Tensor operator>(const Tensor& a, double b) { return a > scalar_like(a, b); }
Tensor operator<=(const Tensor& a, double b) { return a <= scalar_like(a, b); }
Tensor operator>=(const Tensor& a, double b) { return a >= scalar_like(a, b); }
Tensor operator==(const Tensor& a, double b) { return a == scalar_like(a, b); }
Tensor operator!=(const Tensor& a, double b) { return a != scalar_like(a, b); }

// ---- Common ops -----------------------------------------------------------------------------

Tensor matmul(const Tensor& a, const Tensor& b) { return run1(refs().matmul, {&a, &b}); }
Tensor pow(const Tensor& a, const Tensor& b) { return run1(refs().pow, {&a, &b}); }
Tensor relu(const Tensor& x) { return run1(refs().relu, {&x}); }
Tensor sigmoid(const Tensor& x) { return run1(refs().sigmoid, {&x}); }
Tensor tanh(const Tensor& x) { return run1(refs().tanh, {&x}); }
Tensor exp(const Tensor& x) { return run1(refs().exp, {&x}); }
Tensor log(const Tensor& x) { return run1(refs().log, {&x}); }
Tensor sqrt(const Tensor& x) { return run1(refs().sqrt, {&x}); }
Tensor abs(const Tensor& x) { return run1(refs().abs, {&x}); }

Tensor reduce_sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce(refs().reduce_sum, x, axes, keepdims);
}
Tensor reduce_mean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce(refs().reduce_mean, x, axes, keepdims);
}
Tensor reduce_max(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce(refs().reduce_max, x, axes, keepdims);
}

Tensor softmax(const Tensor& x, int64_t axis) {
  return run1(refs().softmax, {&x}, {ir::Attribute::make_int("axis", axis)});
}

Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  const Tensor s = ints(ctx_of(x), shape);
  return run1(refs().reshape, {&x, &s});
}

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  if (perm.empty()) return run1(refs().transpose, {&x});
  return run1(refs().transpose, {&x}, {ir::Attribute::make_ints("perm", perm)});
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : xs) ptrs.push_back(&t);
  Context* ctx = nullptr;
  for (const Tensor& t : xs)
    if (t.defined() && !ctx) ctx = t.context();
  if (!ctx) ctx = &default_context();
  ops::Value out;
  run(refs().concat, ptrs, std::span<ops::Value>(&out, 1), {ir::Attribute::make_int("axis", axis)}, false, ctx);
  return Tensor::adopt(*ctx, out);
}

Tensor cast(const Tensor& x, DType to) {
  return run1(refs().cast, {&x}, {ir::Attribute::make_int("to", static_cast<int64_t>(to))});
}

}  // namespace tsr::eager
