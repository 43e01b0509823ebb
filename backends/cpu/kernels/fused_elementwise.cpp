// CPU kernel: FusedElementwise (core/ops/fused_elementwise.h), a tree of f32 elementwise ops in
// one pass. The output is walked in runs (BroadcastIter: each input contiguous or repeated along
// the run) and each run in blocks of kBlock elements; every step of the program computes its
// block into a small buffer (reused once its single reader has run), the last step into the
// output. So the intermediates stay in L1 and each element of every input and the output crosses
// memory once, where the unfused ops read and write a whole tensor per op. Steps dispatch once per
// block, never per element. Tails shorter than a vector run on zero-padded copies, so every op is
// defined once, in vector form (f32_math-inl.h).
// Compiled once per SIMD target (hwy/foreach_target.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/fused_elementwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include "backends/cpu/kernels/elementwise_impl.h"
#include "backends/cpu/kernels/f32_math-inl.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "backends/cpu/cpu_backend.h"
#include "core/ops/fused_elementwise.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace {

using ops::EwOp;
using ops::EwProgram;

// Elements per block: the step buffers of a block (1 KiB each) stay in L1.
constexpr int64_t kBlock = 256;
constexpr int kMaxLanes = HWY_MAX_BYTES / sizeof(float);  // the widest vector of any target

// One operand of a step within the current block: `p` points at kBlock-capacity data (a step
// buffer or an input read contiguously), or the operand is the constant `value`.
struct Operand {
  const float* p = nullptr;
  float value = 0;
  bool splat() const { return p == nullptr; }
};

// Where each step's result lives between its writer and its one reader: a buffer slot,
// assigned once at kernel creation (a slot is free again after its reader).
struct Layout {
  std::array<int8_t, EwProgram::kMaxSteps> slot{};
  int n_slots = 0;
};

Layout assign_slots(const EwProgram& p) {
  Layout l;
  // last_read[k]: the last step reading step k's result.
  std::array<int, EwProgram::kMaxSteps> last_read{};
  last_read.fill(-1);
  for (int k = 0; k < p.n_steps; ++k)
    for (int j = 0; j < ops::kEwOpArity[static_cast<int>(p.steps[k].op)]; ++j) {
      const int r = p.steps[k].args[j] - p.n_inputs;
      if (r >= 0) last_read[r] = k;
    }
  std::array<bool, EwProgram::kMaxSteps> busy{};
  for (int k = 0; k + 1 < p.n_steps; ++k) {
    // Free the slots of the results this step reads for the last time (before choosing its own:
    // elementwise, a step may overwrite its operand in place).
    for (int j = 0; j < ops::kEwOpArity[static_cast<int>(p.steps[k].op)]; ++j) {
      const int r = p.steps[k].args[j] - p.n_inputs;
      if (r >= 0 && last_read[r] == k) busy[l.slot[r]] = false;
    }
    int s = 0;
    while (busy[s]) ++s;
    busy[s] = true;
    l.slot[k] = static_cast<int8_t>(s);
    l.n_slots = std::max(l.n_slots, s + 1);
  }
  return l;
}

template <class F>
void map1(const Operand& a, float* dst, int64_t n, F f) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  if (a.splat()) {
    const auto v = f(d, hn::Set(d, a.value));
    for (int64_t i = 0; i < n; i += nl) hn::StoreU(v, d, dst + i);
    return;
  }
  for (int64_t i = 0; i < n; i += nl) hn::StoreU(f(d, hn::LoadU(d, a.p + i)), d, dst + i);
}

template <class F>
void map2(const Operand& a, const Operand& b, float* dst, int64_t n, F f) {
  const hn::ScalableTag<float> d;
  const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
  if (!a.splat() && !b.splat()) {
    for (int64_t i = 0; i < n; i += nl) hn::StoreU(f(d, hn::LoadU(d, a.p + i), hn::LoadU(d, b.p + i)), d, dst + i);
  } else if (!a.splat()) {
    const auto vb = hn::Set(d, b.value);
    for (int64_t i = 0; i < n; i += nl) hn::StoreU(f(d, hn::LoadU(d, a.p + i), vb), d, dst + i);
  } else if (!b.splat()) {
    const auto va = hn::Set(d, a.value);
    for (int64_t i = 0; i < n; i += nl) hn::StoreU(f(d, va, hn::LoadU(d, b.p + i)), d, dst + i);
  } else {
    const auto v = f(d, hn::Set(d, a.value), hn::Set(d, b.value));
    for (int64_t i = 0; i < n; i += nl) hn::StoreU(v, d, dst + i);
  }
}

// dst[0, n) = step(operands); n is a multiple of the vector length.
void run_step(EwOp op, const Operand* x, float* dst, int64_t n) {
  const float p1 = x[1].value, p2 = x[2].value;  // parameters (immediates) where the op has them
  switch (op) {
    case EwOp::kAdd: return map2(x[0], x[1], dst, n, [](auto, auto a, auto b) { return hn::Add(a, b); });
    case EwOp::kSub: return map2(x[0], x[1], dst, n, [](auto, auto a, auto b) { return hn::Sub(a, b); });
    case EwOp::kMul: return map2(x[0], x[1], dst, n, [](auto, auto a, auto b) { return hn::Mul(a, b); });
    case EwOp::kDiv: return map2(x[0], x[1], dst, n, [](auto, auto a, auto b) { return hn::Div(a, b); });
    case EwOp::kMax: return map2(x[0], x[1], dst, n, [](auto d, auto a, auto b) { return vec_nan_max(d, a, b); });
    case EwOp::kMin: return map2(x[0], x[1], dst, n, [](auto d, auto a, auto b) { return vec_nan_min(d, a, b); });
    case EwOp::kPow:  // exponent 1, 2 or 3 (checked when the program was parsed)
      if (p1 == 1.0f) return map1(x[0], dst, n, [](auto, auto a) { return a; });
      if (p1 == 2.0f) return map1(x[0], dst, n, [](auto, auto a) { return hn::Mul(a, a); });
      return map1(x[0], dst, n, [](auto, auto a) { return hn::Mul(hn::Mul(a, a), a); });
    case EwOp::kNeg: return map1(x[0], dst, n, [](auto, auto a) { return hn::Neg(a); });
    case EwOp::kAbs: return map1(x[0], dst, n, [](auto, auto a) { return hn::Abs(a); });
    case EwOp::kSqrt: return map1(x[0], dst, n, [](auto, auto a) { return hn::Sqrt(a); });
    case EwOp::kReciprocal: return map1(x[0], dst, n, [](auto d, auto a) { return hn::Div(hn::Set(d, 1.0f), a); });
    case EwOp::kExp: return map1(x[0], dst, n, [](auto d, auto a) { return vec_exp(d, a); });
    case EwOp::kLog: return map1(x[0], dst, n, [](auto d, auto a) { return vec_log(d, a); });
    case EwOp::kRelu: return map1(x[0], dst, n, [](auto d, auto a) { return vec_relu(d, a); });
    case EwOp::kSigmoid: return map1(x[0], dst, n, [](auto d, auto a) { return vec_sigmoid(d, a); });
    case EwOp::kTanh: return map1(x[0], dst, n, [](auto d, auto a) { return vec_tanh(d, a); });
    case EwOp::kHardSwish: return map1(x[0], dst, n, [](auto d, auto a) { return vec_hard_swish(d, a); });
    case EwOp::kLeakyRelu: return map1(x[0], dst, n, [p1](auto d, auto a) { return vec_leaky_relu(d, a, p1); });
    case EwOp::kHardSigmoid:
      return map1(x[0], dst, n, [p1, p2](auto d, auto a) { return vec_hard_sigmoid(d, a, p1, p2); });
    case EwOp::kClip: return map1(x[0], dst, n, [p1, p2](auto d, auto a) { return vec_clip(d, a, p1, p2); });
  }
}

class FusedElementwiseKernel final : public exec::Kernel {
 public:
  FusedElementwiseKernel(const EwProgram& p, const Layout& l) : p_(p), layout_(l) {}

  Status run(exec::KernelContext& ctx) override {
    const int n = p_.n_inputs;
    if (static_cast<int>(ctx.num_inputs()) != n) return ctx.error("expected ", n, " inputs, got ", ctx.num_inputs());
    TSR_ASSIGN_OR_RETURN(Tensor * out, ctx.alloc_output(0));
    std::array<const float*, EwProgram::kMaxInputs> in{};
    // Unused broadcast slots take the output's shape: contiguous, never read.
    std::array<const Shape*, EwProgram::kMaxInputs> shapes;
    shapes.fill(&out->shape());
    bool simple = true;  // every input full-size or a single value: one contiguous run
    for (int k = 0; k < n; ++k) {
      const Tensor& t = *ctx.input(static_cast<size_t>(k));
      if (t.dtype() != DType::kF32) return ctx.error("input[", k, "]: dtype ", dtype_name(t.dtype()), ", expected f32");
      in[static_cast<size_t>(k)] = t.data<float>();
      shapes[static_cast<size_t>(k)] = &t.shape();
      simple = simple && (t.numel() == 1 || t.shape() == out->shape());
    }
    float* y = out->mut_data<float>();
    const int64_t total = out->numel();
    // A fused element costs about one unfused op per step: split finer than kElementwiseGrain.
    const int64_t grain = std::max<int64_t>(kBlock, kElementwiseGrain / std::max(1, p_.n_steps));
    if (simple) {
      std::array<int64_t, EwProgram::kMaxInputs> off{}, st{};
      for (int k = 0; k < n; ++k) st[static_cast<size_t>(k)] = ctx.input(static_cast<size_t>(k))->numel() == 1 ? 0 : 1;
      const auto body = [&](int64_t b, int64_t e) {
        std::array<int64_t, EwProgram::kMaxInputs> o = off;
        for (int k = 0; k < n; ++k) o[static_cast<size_t>(k)] = st[static_cast<size_t>(k)] ? b : 0;
        run_range(in, o, st, y + b, e - b);
      };
      if (total <= grain || ctx.pool().num_threads() <= 1) body(0, total);
      else ctx.pool().parallel_for(total, grain, body);
      return ok_status();
    }
    TSR_ASSIGN_OR_RETURN(auto it, BroadcastIter<EwProgram::kMaxInputs>::make(out->shape(), shapes));
    const auto body = [&](int64_t b, int64_t e) {
      it.for_each_run(b, e, [&](int64_t o, const std::array<int64_t, EwProgram::kMaxInputs>& offs,
                                const std::array<int64_t, EwProgram::kMaxInputs>& strides, int64_t len) {
        run_range(in, offs, strides, y + o, len);
      });
    };
    if (total <= grain || ctx.pool().num_threads() <= 1) body(0, total);
    else ctx.pool().parallel_for(total, grain, body);
    return ok_status();
  }

 private:
  // y[0, len) for one run: input k starts at in[k] + off[k], contiguous (stride 1) or repeated
  // (stride 0).
  void run_range(const std::array<const float*, EwProgram::kMaxInputs>& in,
                 const std::array<int64_t, EwProgram::kMaxInputs>& off,
                 const std::array<int64_t, EwProgram::kMaxInputs>& stride, float* y, int64_t len) const {
    const hn::ScalableTag<float> d;
    const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
    HWY_ALIGN float buf[EwProgram::kMaxSteps][kBlock];
    std::array<const float*, EwProgram::kMaxInputs> base{};
    for (int k = 0; k < p_.n_inputs; ++k) base[static_cast<size_t>(k)] = in[static_cast<size_t>(k)] + off[static_cast<size_t>(k)];
    for (int64_t b = 0; b < len; b += kBlock) {
      const int64_t n = std::min(kBlock, len - b);
      const int64_t main = n - n % nl;
      if (main > 0) run_block(base, stride, b, buf, y + b, main);
      if (main == n) continue;
      // The tail (fewer than one vector): contiguous inputs copied into zero-padded buffers.
      const int64_t rest = n - main;
      HWY_ALIGN float tail_in[EwProgram::kMaxInputs][kMaxLanes];
      HWY_ALIGN float tail_out[kMaxLanes];
      std::array<const float*, EwProgram::kMaxInputs> tail_base = base;
      for (int k = 0; k < p_.n_inputs; ++k) {
        if (!stride[static_cast<size_t>(k)]) continue;
        std::fill(tail_in[k], tail_in[k] + nl, 0.0f);
        std::memcpy(tail_in[k], base[static_cast<size_t>(k)] + b + main, static_cast<size_t>(rest) * sizeof(float));
        tail_base[static_cast<size_t>(k)] = tail_in[k];
      }
      run_block(tail_base, stride, /*at=*/0, buf, tail_out, nl);
      std::memcpy(y + b + main, tail_out, static_cast<size_t>(rest) * sizeof(float));
    }
  }

  // Runs every step over n elements (a multiple of the vector length) starting at element `at`
  // of each contiguous input (repeated inputs read their one value at base).
  void run_block(const std::array<const float*, EwProgram::kMaxInputs>& base,
                 const std::array<int64_t, EwProgram::kMaxInputs>& stride, int64_t at,
                 float (*buf)[kBlock], float* y, int64_t n) const {
    for (int k = 0; k < p_.n_steps; ++k) {
      const ops::EwStep& s = p_.steps[static_cast<size_t>(k)];
      Operand x[3];
      for (int j = 0; j < ops::kEwOpArity[static_cast<int>(s.op)]; ++j) {
        const int r = s.args[static_cast<size_t>(j)];
        Operand& o = x[j];
        if (r < 0) {
          o.value = p_.immediate(static_cast<int16_t>(r));
        } else if (r < p_.n_inputs) {
          const float* p = base[static_cast<size_t>(r)];
          if (stride[static_cast<size_t>(r)]) o.p = p + at;
          else o.value = *p;
        } else {
          o.p = buf[layout_.slot[static_cast<size_t>(r - p_.n_inputs)]];
        }
      }
      float* dst = k + 1 == p_.n_steps ? y : buf[layout_.slot[static_cast<size_t>(k)]];
      run_step(s.op, x, dst, n);
    }
  }

  EwProgram p_;
  Layout layout_;
};

Expected<std::unique_ptr<exec::Kernel>> create_fused_elementwise(const exec::KernelInit& init) {
  TSR_ASSIGN_OR_RETURN(EwProgram p, ops::ew_program_of(init.node, init.place, static_cast<int>(init.node.inputs.size())));
  return std::unique_ptr<exec::Kernel>(new FusedElementwiseKernel(p, assign_slots(p)));
}

}  // namespace

void register_fused_elementwise_target(KernelRegistry& r) {
  TSR_IF_SELECTED("FusedElementwise") r.add("FusedElementwise", {DType::kF32}, &create_fused_elementwise);
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(register_fused_elementwise_target);

void register_fused_elementwise_kernels(KernelRegistry& r) {
  HWY_DYNAMIC_DISPATCH(register_fused_elementwise_target)(r);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
