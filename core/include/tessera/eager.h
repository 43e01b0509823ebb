// Tessera eager API: tensors computed at once, PyTorch style, with a tape for gradients
// (DESIGN.md §5, §8).
//
//   using namespace tsr::eager;
//   Tensor x = tensor<float>({2, 2}, {1, 2, 3, 4}).requires_grad_();
//   Tensor w = tensor<float>({2, 2}, {0.5f, -1, 2, 0});
//   Tensor loss = reduce_sum(relu(matmul(x, w) + 1.0));
//   TSR_RETURN_IF_ERROR(loss.backward());       // d loss / dx into x.grad()
//   const tsr::Tensor& dx = x.grad().data();
//
// Names. tsr::eager::Tensor is a *handle* to a value held by a Context (like torch.Tensor); the
// data itself is a tsr::Tensor (core/tensor/tensor.h, the storage class the executor uses),
// reached with data(). Inside this header `::tsr::Tensor` always means the storage class.
//
// Execution. Every op runs immediately through the same OpDef (shape inference) and CPU kernel
// as the graph executor (frontend::EagerEmitter). C++ has no `@`: use matmul(a, b).
// Binary operators broadcast (NumPy rules); a double operand becomes a scalar of the other
// operand's dtype. Attribute-like inputs (axes, shapes) are passed as C++ values.
//
// Errors. Nothing throws. A failed op (bad shapes, dtype mismatch, an op without a CPU kernel)
// records the first error in its Context (context().status()) and returns a poisoned Tensor
// (ok() false); ops on poisoned tensors give poisoned tensors without further errors, like NaN.
// Check ok() or the context's status where it matters; clear_status() resets it.
//
// Gradients. requires_grad_() marks a floating-point leaf. While grad mode is on (see NoGradGuard),
// every op with an input that requires grad is recorded on the context's tape. backward() takes
// d(loss)/d(leaf) for every leaf the loss depends on (a non-scalar loss is summed) with the same
// gradient rules as the graph autodiff pass, adds it into each leaf's grad(), and drops the tape
// entries it used (retain_tape keeps them for a second backward). Ops without a gradient rule on
// the path fail backward() with one error listing them all.
//
// Lifetime and thread safety. A Tensor references its Context, which must outlive it; the
// context frees a value when its last Tensor (or tape entry) is gone. default_context() is
// thread-local, created on first use and destroyed at thread exit: do not keep eager Tensors of
// the default context in static or thread_local objects. A Context and its Tensors belong to one
// thread at a time; distinct contexts may run on distinct threads. Copying a Tensor is cheap
// (a reference count); the values themselves are immutable.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/frontend/eager_emitter.h"
#include "core/frontend/tracer.h"
#include "core/tensor/tensor.h"

namespace tsr::eager {

// Owns eager values, their tape and the cached kernels. A Context made over a Tracer runs the
// same code eagerly *and* records it into the tracer's model (torch.jit.trace): Tensor::from and
// scalar operands become graph constants, graph inputs come from Tracer::input (wrap them with
// Tensor::adopt), and decide() reports branches that the trace fixes. backward() under a tracer
// runs eagerly and is not recorded.
class Context {
 public:
  explicit Context(int num_threads = 1)
      : owned_(std::make_unique<frontend::EagerEmitter>(num_threads)), eager_(owned_.get()), recorder_(eager_) {}
  // Records into `tracer`, which must outlive the context and its tensors.
  explicit Context(frontend::Tracer& tracer) : eager_(&tracer.eager()), recorder_(&tracer), tracer_(&tracer) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Holds the values (the tracer's eager emitter when tracing).
  frontend::EagerEmitter& emitter() { return *eager_; }
  // Where ops and constants go: the eager emitter, or the tracer.
  ops::Emitter& recorder() { return *recorder_; }
  frontend::Tracer* tracer() { return tracer_; }
  // The first error of an op (eager or recording); clear_status() resets the eager side.
  const Status& status() const { return recorder_->status(); }
  void clear_status() { eager_->clear_status(); }
  bool grad_enabled() const { return eager_->grad_enabled(); }
  void set_grad_enabled(bool on) { eager_->set_grad_enabled(on); }
  // Drops every recorded op (gradients through them are then lost).
  void clear_tape() { eager_->clear_tape(); }

 private:
  std::unique_ptr<frontend::EagerEmitter> owned_;
  frontend::EagerEmitter* eager_;
  ops::Emitter* recorder_;
  frontend::Tracer* tracer_ = nullptr;
};

// The calling thread's default context.
Context& default_context();

class Tensor {
 public:
  // An empty handle (no value, no context); ops on it give poisoned results.
  Tensor() = default;
  Tensor(const Tensor& o) : ctx_(o.ctx_), v_(o.v_) {
    if (ctx_) ctx_->emitter().retain(v_);
  }
  Tensor(Tensor&& o) noexcept : ctx_(o.ctx_), v_(o.v_) {
    o.ctx_ = nullptr;
    o.v_ = {};
  }
  Tensor& operator=(const Tensor& o) {
    Tensor(o).swap(*this);
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    Tensor(std::move(o)).swap(*this);
    return *this;
  }
  ~Tensor() {
    if (ctx_) ctx_->emitter().release(v_);
  }
  void swap(Tensor& o) noexcept {
    std::swap(ctx_, o.ctx_);
    std::swap(v_, o.v_);
  }

  // A handle taking over one reference of `v`, a Value of ctx's emitter (as emit/wrap return).
  static Tensor adopt(Context& ctx, ops::Value v) { return Tensor(&ctx, v); }
  // `value` as an eager tensor (shares its data: do not write it afterwards).
  static Tensor from(::tsr::Tensor value, bool requires_grad = false, Context& ctx = default_context());

  bool defined() const { return ctx_ != nullptr; }
  // Holds a computed value (not empty, not poisoned by a failed op).
  bool ok() const { return ctx_ && data().defined(); }
  Context* context() const { return ctx_; }
  ops::Value value() const { return v_; }

  // The data; an undefined tsr::Tensor when !ok().
  const ::tsr::Tensor& data() const;
  DType dtype() const { return data().dtype(); }
  const Shape& shape() const { return data().shape(); }
  int64_t rank() const { return data().rank(); }
  int64_t numel() const { return data().numel(); }
  // Element i converted to double (NaN when !ok() or out of range).
  double item(int64_t i = 0) const;
  // All elements converted to T (empty when !ok()).
  template <typename T> std::vector<T> to_vector() const;

  bool requires_grad() const { return ctx_ && ctx_->emitter().requires_grad(v_); }
  // Marks this tensor as a leaf whose gradient backward() accumulates (floating point only).
  Tensor& requires_grad_(bool on = true);
  // Reverse mode from this tensor (summed if not a scalar) into the grad() of every leaf it
  // depends on. Errors: !ok(), a non-floating-point loss, ops without a gradient rule (listed).
  Status backward(bool retain_tape = false) const;
  // The accumulated gradient; an empty Tensor before any backward() reached this leaf.
  Tensor grad() const;
  void zero_grad();
  // The same data without history (requires_grad false, not taped).
  Tensor detach() const;

 private:
  Tensor(Context* ctx, ops::Value v) : ctx_(ctx), v_(v) {}
  Context* ctx_ = nullptr;
  ops::Value v_;
};

// Disables recording for its scope (torch.no_grad()).
class NoGradGuard {
 public:
  explicit NoGradGuard(Context& ctx = default_context()) : ctx_(ctx), saved_(ctx.grad_enabled()) {
    ctx.set_grad_enabled(false);
  }
  ~NoGradGuard() { ctx_.set_grad_enabled(saved_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  Context& ctx_;
  bool saved_;
};

// A host-level decision (C++ `if`/`while`) on a one-element tensor: its truth value. Under a
// tracing context it also warns, naming `where` ("file:line"), when the condition depends on a
// graph input (Tracer::decide). Not one element: false, with an error in the context.
bool decide(const Tensor& cond, const std::string& where);

// ---- Creation ---------------------------------------------------------------------------------
template <typename T>
Tensor tensor(const Shape& shape, const std::vector<T>& values, Context& ctx = default_context()) {
  return Tensor::from(::tsr::Tensor::from<T>(shape, values), false, ctx);
}
Tensor scalar(double v, DType dtype = DType::kF32, Context& ctx = default_context());
Tensor full(const Shape& shape, double v, DType dtype = DType::kF32, Context& ctx = default_context());
Tensor zeros(const Shape& shape, DType dtype = DType::kF32, Context& ctx = default_context());
Tensor ones(const Shape& shape, DType dtype = DType::kF32, Context& ctx = default_context());

// ---- Any registered op ---------------------------------------------------------------------
// Runs the op named `name` (ONNX name) with `inputs` (empty Tensors = omitted optional inputs)
// and `attrs`; the context is the first defined input's (default_context() if none).
Tensor op(std::string_view name, const std::vector<Tensor>& inputs, std::vector<ir::Attribute> attrs = {});
std::vector<Tensor> op_n(std::string_view name, const std::vector<Tensor>& inputs, size_t num_outputs,
                         std::vector<ir::Attribute> attrs = {});

// ---- Operators --------------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
// Comparisons give bool tensors (Less, Greater, Equal, ...).
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);

// A double operand: a scalar of the tensor operand's dtype.
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
Tensor operator<(const Tensor& a, double b);
Tensor operator>(const Tensor& a, double b);
Tensor operator<=(const Tensor& a, double b);
Tensor operator>=(const Tensor& a, double b);
Tensor operator==(const Tensor& a, double b);
Tensor operator!=(const Tensor& a, double b);

// ---- Common ops -------------------------------------------------------------------------------
Tensor matmul(const Tensor& a, const Tensor& b);  // NumPy matmul (Python's @)
Tensor pow(const Tensor& a, const Tensor& b);
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor abs(const Tensor& x);
// Reductions over `axes` (empty: all axes).
Tensor reduce_sum(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
Tensor reduce_mean(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
Tensor reduce_max(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false);
Tensor softmax(const Tensor& x, int64_t axis = -1);
// ONNX Reshape: 0 copies the input dim, -1 is inferred.
Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape);
// perm empty: reverse the axes.
Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm = {});
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
Tensor cast(const Tensor& x, DType to);

// ---- Inline definitions ----------------------------------------------------------------------
template <typename T> std::vector<T> Tensor::to_vector() const {
  std::vector<T> out;
  if (!ok()) return out;
  const ::tsr::Tensor& t = data();
  out.reserve(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<T>(t.scalar_f64(i)));
  return out;
}

}  // namespace tsr::eager
