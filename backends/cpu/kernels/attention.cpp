// CPU kernels of ONNX Attention (opset 23/24) and RotaryEmbedding (opset 23), and the attention
// core every attention kernel shares (contract: attention.h; the contrib ops' kernels are in
// attention_contrib.cpp). f32, and f16 computed in f32 (run_f16_as_f32). The core's row
// operations (max, exp-and-sum, rescale, bias, softcap) are compiled once per SIMD target
// (hwy/foreach_target.h) and dispatched at run time; on AVX-512 targets most f32 problems take the
// register-tiled path of attention_flash-inl.h instead of attend_rows.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/kernels/attention.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/attention.h"
#include "backends/cpu/kernels/attention_bf16.h"
#include "backends/cpu/kernels/f32_math-inl.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/scratch.h"
#include "backends/cpu/kernels/unroll.h"

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The score rows (Tile::s) are padded to whole vectors (Tile::ld): row_max and exp_sum read and
// write a row's last vector whole, the lanes past n masked out (ViT's 197 keys: 5 left over per
// row, whose scalar std::exp was a quarter of exp_sum's time), and ignore what the padding holds.
float row_max(const float* x, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  auto vm = hn::Set(d, kNegInf);
  int64_t i = 0;
  for (; i + nl <= n; i += nl) vm = hn::Max(vm, hn::LoadU(d, x + i));
  if (i < n) vm = hn::Max(vm, hn::IfThenElse(hn::FirstN(d, static_cast<size_t>(n - i)), hn::LoadU(d, x + i), vm));
  return hn::GetLane(hn::MaxOfLanes(d, vm));
}

// x[i] = exp(x[i] - m), returns the sum; differences below -86 (masked -inf keys included) give 0.
// The padding past n is overwritten (with zeros).
float exp_sum(float* x, int64_t n, float m) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  const auto vm = hn::Set(d, m), lo = hn::Set(d, -86.0f);
  auto vs = hn::Zero(d);
  const auto exp_at = [&](int64_t i) HWY_ATTR {
    const auto t = hn::Sub(hn::LoadU(d, x + i), vm);
    return hn::IfThenElseZero(hn::Ge(t, lo), exp_nonpositive(d, hn::Max(t, lo)));
  };
  int64_t i = 0;
  for (; i + nl <= n; i += nl) {
    const auto e = exp_at(i);
    hn::StoreU(e, d, x + i);
    vs = hn::Add(vs, e);
  }
  if (i < n) {
    const auto e = hn::IfThenElseZero(hn::FirstN(d, static_cast<size_t>(n - i)), exp_at(i));
    hn::StoreU(e, d, x + i);
    vs = hn::Add(vs, e);
  }
  return hn::GetLane(hn::SumOfLanes(d, vs));
}

void scale_row(const float* x, float* y, int64_t n, float c) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  const auto vc = hn::Set(d, c);
  int64_t i = 0;
  for (; i + nl <= n; i += nl) hn::StoreU(hn::Mul(hn::LoadU(d, x + i), vc), d, y + i);
  for (; i < n; ++i) y[i] = x[i] * c;
}

void add_row(float* x, const float* b, int64_t n) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + nl <= n; i += nl) hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, b + i)), d, x + i);
  for (; i < n; ++i) x[i] += b[i];
}

void softcap_row(float* x, int64_t n, float cap) {
  const hn::ScalableTag<float> d;
  const auto nl = static_cast<int64_t>(hn::Lanes(d));
  const auto vc = hn::Set(d, cap), vi = hn::Set(d, 1.0f / cap);
  int64_t i = 0;
  for (; i + nl <= n; i += nl) hn::StoreU(hn::Mul(vc, hn::Tanh(d, hn::Mul(hn::LoadU(d, x + i), vi))), d, x + i);
  for (; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

#include "backends/cpu/kernels/attention_flash-inl.h"  // flash_usable, flash_attention

// The per-chunk buffers: scores [qb, ld] (ld: kb rounded up to whole vectors, see row_max),
// output accumulator [qb, Dv], row max and sum [qb], the block's new row max [qb].
struct Tile {
  float *s, *o, *m, *l, *mx;
  int64_t ld;
};

// Query rows [i0, i1) of head h in batch b; `bf` non-null: the products in bf16 (attention_bf16.h).
void attend_rows(const AttnProblem& p, int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t kb, const Tile& t,
                 const Bf16Rows* bf) {
  const int64_t mq = i1 - i0, dh = p.head_size, dv = p.v_head_size, total = p.kv_len;
  const int64_t kh = h / (p.q_heads / p.kv_heads);
  const int64_t valid = p.kv_valid ? std::clamp<int64_t>(p.kv_valid[b], 0, total) : total;
  const int64_t off = p.causal_offset_b ? p.causal_offset_b[b] : p.causal_offset;
  const bool full_rows = p.qk_out != nullptr;  // one block of every key: the scores are written out
  int64_t kbeg = 0, kend = valid;
  if (!full_rows && p.causal) {
    kend = std::min(kend, i1 - 1 + off + 1);
    if (p.local_window >= 0) kbeg = std::max<int64_t>(0, i0 + off - p.local_window);
  }
  if (full_rows) kend = total;
  // No block of keys writes the output, or the bf16 product, which only adds, accumulates into it.
  if (kbeg >= kend || bf) std::fill(t.o, t.o + mq * dv, 0.0f);
  // A sink logit starts the running max and sum (exp(sink - sink) = 1) and adds nothing to the output.
  std::fill(t.m, t.m + mq, p.sink ? p.sink[h] : kNegInf);
  std::fill(t.l, t.l + mq, p.sink ? 1.0f : 0.0f);
  const float* q = p.q.row(b, h, i0);
  // More than one block of keys (Whisper's 1500 frames): the query block is packed once for all
  // of them instead of by each block's product (a tenth of a Whisper encoder's time went to
  // packing A, half of it these repeats). The thread's buffer is kept from call to call.
  const bool q_packed = !bf && kend - kbeg > kb;
  thread_local SgemmPackedA q_pack;
  if (q_packed) sgemm_pack_a_into(q_pack, false, mq, dh, q, p.q.sr);
  if (bf) bf16_convert_q(*bf->kv, q, p.q.sr, mq, dh, bf->q);
  for (int64_t j0 = kbeg; j0 < kend; j0 += kb) {
    const int64_t j1 = std::min(j0 + kb, kend), n = j1 - j0;
    if (bf)
      bf16_scores(*bf->kv, bf->kv->k(b, kh), bf->q, mq, p.scale, j0, n, t.s, t.ld);
    else if (q_packed)
      sgemm_prepacked(q_pack, q, p.q.sr, true, n, p.scale, p.k.row(b, kh, j0), p.k.sr, 0.0f, t.s, t.ld, nullptr);
    else
      sgemm(false, true, mq, n, dh, p.scale, q, p.q.sr, p.k.row(b, kh, j0), p.k.sr, 0.0f, t.s, t.ld, nullptr);
    for (int64_t r = 0; r < mq; ++r) {
      float* row = t.s + r * t.ld;
      const int64_t i = i0 + r;
      float* qk = full_rows ? p.qk_out + ((b * p.q_heads + h) * p.q_len + i) * total : nullptr;
      if (qk && p.qk_mode == 0) std::copy(row, row + n, qk + j0);
      if (p.softcap > 0) softcap_row(row, n, p.softcap);
      if (qk && p.qk_mode == 1) std::copy(row, row + n, qk + j0);
      if (p.bias) add_row(row, p.bias + b * p.bias_sb + h * p.bias_sh + i * p.bias_sq + j0, n);
      // Keys of this block outside [lo, hi] are masked.
      int64_t lo = 0, hi = valid - 1;
      if (p.causal) {
        hi = std::min(hi, i + off);
        if (p.local_window >= 0) lo = i + off - p.local_window;
      }
      // Most blocks lie wholly inside [lo, hi] (always without a cache frontier or causality).
      if (j0 < lo || j1 - 1 > hi)
        for (int64_t j = j0; j < j1; ++j)
          if (j < lo || j > hi) row[j - j0] = kNegInf;
      if (qk && p.qk_mode == 2) std::copy(row, row + n, qk + j0);
      t.mx[r] = std::max(t.m[r], row_max(row, n));
    }
    // The exponentials in a second pass over the rows: no row's waits on its own max (a chain of
    // dependent reductions per row when both were in one loop).
    for (int64_t r = 0; r < mq; ++r) {
      float* row = t.s + r * t.ld;
      const float mx = t.mx[r];
      if (mx == kNegInf) {  // nothing visible yet in this row: the block contributes nothing
        std::fill(row, row + n, 0.0f);
        if (bf) std::fill_n(bf->p + r * ((n + 1) / 2), (n + 1) / 2, 0u);
        continue;
      }
      // Nothing accumulated yet (t.m -inf): the output row is still zero (first block: not yet
      // written, see beta below), nothing to rescale.
      const float corr = t.m[r] == kNegInf ? 0.0f : std::exp(t.m[r] - mx);
      // bf16: the weights go straight to the bf16 rows of P·V (bf->p).
      t.l[r] = t.l[r] * corr + (bf ? bf16_exp_row(row, n, mx, bf->p + r * ((n + 1) / 2)) : exp_sum(row, n, mx));
      if (corr != 1.0f && corr != 0.0f) scale_row(t.o + r * dv, t.o + r * dv, dv, corr);
      t.m[r] = mx;
    }
    // The first block writes the output accumulator (beta 0), the later ones add to it; the bf16
    // product only adds, so its accumulator starts zeroed (above).
    if (bf)
      bf16_accumulate_pv(*bf->kv, bf->kv->v(b, kh), bf->p, mq, n, j0, t.o, dv, dv);
    else
      sgemm(false, false, mq, dv, n, 1.0f, t.s, t.ld, p.v.row(b, kh, j0), p.v.sr, j0 == kbeg ? 0.0f : 1.0f, t.o, dv,
            nullptr);
  }
  for (int64_t r = 0; r < mq; ++r) {
    const float inv = t.l[r] > 0 ? 1.0f / t.l[r] : 0.0f;
    scale_row(t.o + r * dv, p.y.base + b * p.y.sb + h * p.y.sh + (i0 + r) * p.y.sr, dv, inv);
    if (full_rows && p.qk_mode == 3)
      scale_row(t.s + r * t.ld, p.qk_out + ((b * p.q_heads + h) * p.q_len + i0 + r) * total, total, inv);
  }
}

Status attention_core_target(exec::KernelContext& ctx, const AttnProblem& p) {
  if (p.batch == 0 || p.q_heads == 0 || p.q_len == 0) return ok_status();
  if (p.kv_heads <= 0 || p.q_heads % p.kv_heads != 0)
    return ctx.error("q heads ", p.q_heads, " are not a multiple of kv heads ", p.kv_heads);
  if (flash_usable(p)) return flash_attention(ctx, p);
  // Rows per task: K and V blocks are packed once per block of up to 256 queries. With few
  // (batch, head) pairs the query blocks shrink so that every thread gets about 4 tasks (ViT-Tiny:
  // 3 heads of 197 queries would otherwise be 3 tasks), in multiples of 16 rows.
  const int64_t threads = ctx.pool().num_threads(), pairs = p.batch * p.q_heads, want = 4 * threads;
  int64_t qb = std::min<int64_t>(p.q_len, 256);
  if (threads > 1 && pairs * ((p.q_len + qb - 1) / qb) < want) {
    const int64_t per_pair = (want + pairs - 1) / pairs;
    qb = std::max<int64_t>(std::min<int64_t>(qb, ((p.q_len + per_pair - 1) / per_pair + 15) / 16 * 16), 16);
    qb = std::min(qb, p.q_len);
  }
  const int64_t kb = p.qk_out ? std::max<int64_t>(p.kv_len, 1) : std::clamp<int64_t>(p.kv_len, 1, 256);
  const int64_t nqb = (p.q_len + qb - 1) / qb, tasks = p.batch * p.q_heads * nqb;
  const auto nl = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t ld = (kb + nl - 1) / nl * nl;
  const size_t per_slot = static_cast<size_t>(qb * ld + qb * std::max<int64_t>(p.v_head_size, 1) + 3 * qb);
  TSR_ASSIGN_OR_RETURN(SlotScratch<float> buf, SlotScratch<float>::make(ctx, per_slot));
  // FastMath::kBf16: K and V of every head converted and packed once, before the query tasks.
  const bool bf16 = bf16_attention_usable(p);
  Bf16KV kv;
  if (bf16) {
    size_t elements = 0;
    kv = bf16_kv_layout(p, &elements);
    TSR_ASSIGN_OR_RETURN(Scratch<uint16_t> packed, Scratch<uint16_t>::make(ctx, elements));
    kv.data = packed.data();
    ctx.pool().parallel_for(p.batch * p.kv_heads, 1, [&](int64_t h0, int64_t h1) {
      for (int64_t bh = h0; bh < h1; ++bh) bf16_pack_kv(p, kv, bh / p.kv_heads, bh % p.kv_heads);
    });
  }
  const size_t work = bf16 ? static_cast<size_t>(bf16_work_elements(kv, qb, kb)) : 1;
  TSR_ASSIGN_OR_RETURN(SlotScratch<uint32_t> wbuf, SlotScratch<uint32_t>::make(ctx, work));
  ctx.pool().parallel_for_slots(tasks, 1, [&](int slot, int64_t t0, int64_t t1) {
    const Bf16Rows rows{&kv, wbuf.slot(slot), wbuf.slot(slot) + qb * kv.k_pairs};
    float* base = buf.slot(slot);
    const Tile tile{base, base + qb * ld, base + qb * ld + qb * std::max<int64_t>(p.v_head_size, 1),
                    base + qb * ld + qb * std::max<int64_t>(p.v_head_size, 1) + qb,
                    base + qb * ld + qb * std::max<int64_t>(p.v_head_size, 1) + 2 * qb, ld};
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t blk = task % nqb, bh = task / nqb;
      const int64_t i0 = blk * qb, i1 = std::min(p.q_len, i0 + qb);
      attend_rows(p, bh / p.q_heads, bh % p.q_heads, i0, i1, kb, tile, bf16 ? &rows : nullptr);
    }
  });
  return ok_status();
}

}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tsr::cpu {

HWY_EXPORT(attention_core_target);

Status attention_core(exec::KernelContext& ctx, const AttnProblem& p) {
  return HWY_DYNAMIC_DISPATCH(attention_core_target)(ctx, p);
}

void rotary_row(const float* x, float* y, const float* cos, const float* sin, int64_t rot_dim, int64_t head_size,
                bool interleaved) {
  const int64_t half = rot_dim / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    const float x1 = x[a], x2 = x[b];
    y[a] = x1 * cos[i] - x2 * sin[i];
    y[b] = x2 * cos[i] + x1 * sin[i];
  }
  if (y != x) std::copy(x + rot_dim, x + head_size, y + rot_dim);
}

Status run_f16_as_f32(exec::KernelContext& ctx, exec::KernelFn f32_kernel) {
  std::vector<Tensor> wide(ctx.num_inputs());
  std::vector<const Tensor*> ins(ctx.num_inputs());
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    ins[i] = t;
    if (!t || t->dtype() != DType::kF16) continue;
    TSR_ASSIGN_OR_RETURN(wide[i], Tensor::empty(DType::kF32, t->shape()));
    const Half* src = t->data<Half>();
    float* dst = wide[i].mut_data<float>();
    for (int64_t e = 0; e < t->numel(); ++e) dst[e] = f16_to_f32(src[e].bits);
    ins[i] = &wide[i];
  }
  std::vector<ops::ValueType> types;
  for (size_t o = 0; o < ctx.num_outputs(); ++o) {
    types.push_back(ctx.output_type(o));
    if (types.back().dtype == DType::kF16) types.back().dtype = DType::kF32;
  }
  std::vector<Tensor> outs(ctx.num_outputs());
  exec::KernelContext inner = ctx.derived(ins, types, outs);
  TSR_RETURN_IF_ERROR(f32_kernel(inner));
  for (size_t o = 0; o < outs.size(); ++o) {
    if (ctx.node().outputs[o] < 0 || !outs[o].defined()) continue;
    TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(o, DType::kF16, outs[o].shape()));
    const float* src = outs[o].data<float>();
    Half* dst = y->mut_data<Half>();
    for (int64_t e = 0; e < y->numel(); ++e) dst[e] = Half{f32_to_f16(src[e])};
  }
  return ok_status();
}

void fill_present(float* present, const float* past, const AttnView& fresh, int64_t batch, int64_t heads, int64_t p,
                  int64_t l, int64_t hd) {
  const int64_t total = p + l;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t n = 0; n < heads; ++n) {
      float* dst = present + (b * heads + n) * total * hd;
      if (p > 0) std::copy_n(past + (b * heads + n) * p * hd, p * hd, dst);
      for (int64_t r = 0; r < l; ++r) std::copy_n(fresh.row(b, n, r), hd, dst + (p + r) * hd);
    }
}

namespace {

// Materializes an ONNX attn_mask (bool: true = attend; float: added) broadcastable to
// [B, qN, S, T] as an f32 bias [Bm, Hm, Sm, T] (Bm, Hm, Sm: the mask's dims, 1 or full); a last
// dim shorter than T is padded with -inf (opset 24 semantics; onnx reference op_attention.py).
Status build_mask_bias(exec::KernelContext& ctx, const Tensor& mask, int64_t total, AttnProblem& p) {
  const int64_t r = mask.rank();
  const auto dim = [&](int64_t from_end) { return from_end <= r ? mask.dim(r - from_end) : 1; };
  const int64_t bm = dim(4), hm = dim(3), sm = dim(2), tm = dim(1);
  if (tm != 1 && tm > total) return ctx.error("attn_mask: last dim ", tm, " exceeds the total sequence length ", total);
  if ((bm != 1 && bm != p.batch) || (hm != 1 && hm != p.q_heads) || (sm != 1 && sm != p.q_len))
    return ctx.error("attn_mask ", shape_str(mask.shape()), " does not broadcast to [", p.batch, ", ", p.q_heads, ", ",
                     p.q_len, ", ", total, "]");
  const int64_t rows = bm * hm * sm;
  TSR_ASSIGN_OR_RETURN(Scratch<float> bias, Scratch<float>::make(ctx, static_cast<size_t>(rows * total)));
  const bool is_bool = mask.dtype() == DType::kBool;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t j = 0; j < total; ++j) {
      float v = -std::numeric_limits<float>::infinity();
      const int64_t src = tm == 1 ? row : (j < tm ? row * tm + j : -1);
      if (src >= 0) v = is_bool ? (mask.data<bool>()[src] ? 0.0f : v) : static_cast<float>(mask.scalar_f64(src));
      bias[static_cast<size_t>(row * total + j)] = v;
    }
  p.bias = bias.data();
  p.bias_sq = sm == 1 ? 0 : total;
  p.bias_sh = hm == 1 ? 0 : sm * total;
  p.bias_sb = bm == 1 ? 0 : hm * sm * total;
  return ok_status();
}

// ONNX Attention (semantics: core/ops/families/attention.cpp, onnx reference op_attention.py);
// kBf16: the session's FastMath::kBf16 (AttnProblem::bf16).
template <bool kBf16>
Status onnx_attention(exec::KernelContext& ctx) {
  const Tensor &q = *ctx.input(0), &k = *ctx.input(1), &v = *ctx.input(2);
  const Tensor *mask = ctx.input(3), *past_k = ctx.input(4), *past_v = ctx.input(5), *nonpad = ctx.input(6);
  const ir::Node& node = ctx.node();
  AttnProblem p;
  p.bf16 = kBf16;
  const bool bsd = q.rank() == 3;
  p.batch = q.dim(0);
  p.q_heads = bsd ? node.attr_int("q_num_heads") : q.dim(1);
  p.kv_heads = bsd ? node.attr_int("kv_num_heads") : k.dim(1);
  p.q_len = bsd ? q.dim(1) : q.dim(2);
  const int64_t l = bsd ? k.dim(1) : k.dim(2), past = past_k ? past_k->dim(2) : 0;
  p.kv_len = past + l;
  // packed_qkv: Q, K, V are one [B, S, (qN + 2 kvN) * H] tensor, read in place (row stride = width).
  const bool packed = node.attr_int("packed_qkv") != 0;
  const int64_t parts = packed ? p.q_heads + 2 * p.kv_heads : 0;
  p.head_size = packed ? q.dim(2) / parts : bsd ? q.dim(2) / p.q_heads : q.dim(3);
  p.v_head_size = packed ? p.head_size : bsd ? v.dim(2) / p.kv_heads : v.dim(3);
  const int64_t hs = p.head_size, hv = p.v_head_size, s = p.q_len;
  const auto view = [&](const Tensor& t, int64_t heads, int64_t len, int64_t hd, int64_t col) {
    if (packed) return AttnView{t.data<float>() + col * hd, len * parts * hd, hd, parts * hd};
    return bsd ? AttnView{t.data<float>(), len * heads * hd, hd, heads * hd}
               : AttnView{t.data<float>(), heads * len * hd, len * hd, hd};
  };
  p.q = view(q, p.q_heads, s, hs, 0);
  p.k = view(k, p.kv_heads, l, hs, p.q_heads);
  p.v = view(v, p.kv_heads, l, hv, p.q_heads + p.kv_heads);
  const bool want_pk = ctx.num_outputs() > 1 && node.outputs[1] >= 0;
  const bool want_pv = ctx.num_outputs() > 2 && node.outputs[2] >= 0;
  // The cache: present = concat(past, new) along the sequence; attention reads it when a past is given.
  for (int which = 0; which < 2; ++which) {
    const bool want = which == 0 ? want_pk : want_pv;
    if (!want && !past_k) continue;
    const int64_t hd = which == 0 ? hs : hv;
    float* dst = nullptr;
    if (want) {
      TSR_ASSIGN_OR_RETURN(Tensor * o, ctx.alloc_output(1 + which));
      dst = o->mut_data<float>();
    } else {
      TSR_ASSIGN_OR_RETURN(Scratch<float> sc, Scratch<float>::make(ctx, static_cast<size_t>(p.batch * p.kv_heads * p.kv_len * hd)));
      dst = sc.data();
    }
    fill_present(dst, which == 0 ? (past_k ? past_k->data<float>() : nullptr) : (past_v ? past_v->data<float>() : nullptr), which == 0 ? p.k : p.v, p.batch, p.kv_heads, past, l, hd);
    if (past_k) (which == 0 ? p.k : p.v) = AttnView{dst, p.kv_heads * p.kv_len * hd, p.kv_len * hd, hd};
  }
  p.scale = static_cast<float>(node.attr("scale") ? node.attr_float("scale") : 1.0 / std::sqrt(static_cast<double>(hs)));
  p.softcap = static_cast<float>(node.attr_float("softcap"));
  p.causal = node.attr_int("is_causal") != 0;
  p.causal_offset = past;
  if (mask) TSR_RETURN_IF_ERROR(build_mask_bias(ctx, *mask, p.kv_len, p));
  if (nonpad) {
    if (nonpad->numel() != p.batch) return ctx.error("nonpad_kv_seqlen has ", nonpad->numel(), " values, expected ", p.batch);
    TSR_ASSIGN_OR_RETURN(Scratch<int64_t> lens, Scratch<int64_t>::make(ctx, static_cast<size_t>(2 * p.batch)));
    for (int64_t b = 0; b < p.batch; ++b) {
      lens[static_cast<size_t>(b)] = nonpad->data<int64_t>()[b];
      lens[static_cast<size_t>(p.batch + b)] = nonpad->data<int64_t>()[b] - s;  // an external cache's frontier
    }
    p.kv_valid = lens.data();
    if (!past_k) p.causal_offset_b = lens.data() + p.batch;
  }
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  p.y = bsd ? AttnOut{y->mut_data<float>(), s * p.q_heads * hv, hv, p.q_heads * hv}
            : AttnOut{y->mut_data<float>(), p.q_heads * s * hv, s * hv, hv};
  if (ctx.num_outputs() > 3 && node.outputs[3] >= 0) {
    TSR_ASSIGN_OR_RETURN(Tensor * qk, ctx.alloc_output(3));
    p.qk_out = qk->mut_data<float>();
    p.qk_mode = static_cast<int>(node.attr_int("qk_matmul_output_mode"));
  }
  return attention_core(ctx, p);
}

}  // namespace

Status rotary_apply(exec::KernelContext& ctx, const RotaryArgs& a) {
  const Tensor& x = *a.x;
  const bool bsd = x.rank() == 3;
  const int64_t batch = x.dim(0), s = bsd ? x.dim(1) : x.dim(2);
  const int64_t heads = bsd ? a.heads : x.dim(1);
  if (heads <= 0) return ctx.error("the number of heads is unknown (num_heads attribute)");
  const int64_t hs = bsd ? x.dim(2) / heads : x.dim(3);
  const int64_t rot = a.rot_dim > 0 ? a.rot_dim : hs;
  if (rot > hs || rot % 2 != 0) return ctx.error("rotary_embedding_dim ", rot, " must be even and <= the head size ", hs);
  if (rot / 2 != a.half) return ctx.error("cos/sin caches have ", a.half, " columns, expected rotary dim / 2 = ", rot / 2);
  const float* px = x.data<float>();
  float* py = a.y->mut_data<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < s; ++t) {
      const int64_t row = a.cache_row(b, t);
      if (row < 0 || row >= a.cache_rows) return ctx.error("position ", row, " is outside the cos/sin cache of ", a.cache_rows, " rows");
      for (int64_t n = 0; n < heads; ++n) {
        const int64_t off = bsd ? (b * s + t) * heads * hs + n * hs : ((b * heads + n) * s + t) * hs;
        rotary_row(px + off, py + off, a.cos + row * a.half, a.sin + row * a.half, rot, hs, a.interleaved);
      }
    }
  return ok_status();
}

namespace {

// ONNX RotaryEmbedding (23): X, cos_cache, sin_cache, position_ids?. With position_ids [B, S] the
// caches are [max_position, rot/2]; without, they are [B, S, rot/2] (one row per token).
Status onnx_rotary(exec::KernelContext& ctx) {
  const Tensor &cos = *ctx.input(1), &sin = *ctx.input(2);
  const Tensor* pos = ctx.input(3);
  if (cos.shape() != sin.shape()) return ctx.error("cos_cache ", shape_str(cos.shape()), " and sin_cache differ");
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  const Tensor& x = *ctx.input(0);
  const int64_t s = x.rank() == 3 ? x.dim(1) : x.dim(2);
  RotaryArgs a{&x, y, cos.data<float>(), sin.data<float>(), cos.dim(cos.rank() - 1), 0,
               ctx.node().attr_int("num_heads"), ctx.node().attr_int("rotary_embedding_dim"),
               ctx.node().attr_int("interleaved") != 0, {}};
  if (pos) {
    if (pos->numel() != x.dim(0) * s) return ctx.error("position_ids has ", pos->numel(), " values, expected B*S");
    const int64_t* pp = pos->data<int64_t>();
    a.cache_rows = cos.dim(0);
    a.cache_row = [pp, s](int64_t b, int64_t t) { return pp[b * s + t]; };
  } else {
    if (cos.rank() != 3 || cos.dim(0) != x.dim(0) || cos.dim(1) != s)
      return ctx.error("without position_ids the caches must be [B, S, rot/2], got ", shape_str(cos.shape()));
    a.cache_rows = x.dim(0) * s;
    a.cache_row = [s](int64_t b, int64_t t) { return b * s + t; };
  }
  return rotary_apply(ctx, a);
}

}  // namespace

void register_attention_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("Attention")
  r.add("Attention", {DType::kF32, DType::kF16}, [](const exec::KernelInit& init) -> Expected<std::unique_ptr<exec::Kernel>> {
    return std::unique_ptr<exec::Kernel>(std::make_unique<exec::FnKernel>(
        init.fast_math == FastMath::kBf16 ? f32_or_f16<onnx_attention<true>> : f32_or_f16<onnx_attention<false>>));
  });
  TSR_IF_SELECTED("RotaryEmbedding") r.add_fn("RotaryEmbedding", {DType::kF32, DType::kF16}, f32_or_f16<onnx_rotary>);
}

}  // namespace tsr::cpu
#endif  // HWY_ONCE
