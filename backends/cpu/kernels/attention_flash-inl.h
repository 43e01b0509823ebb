// The AVX-512 path of attention_core (attention.h) for f32 products (no bf16, no qk_out copy of
// the scores) with enough queries to share packed keys: register-blocked Q·K^T and P·V
// micro-kernels instead of sgemm calls, an exp with AVX-512's scalef, and the rescale of the
// running output fused into the P·V tile. The same online softmax as attend_rows (attention.cpp):
// per block of keys, scores S = scale Q K^T (+ softcap, bias, structural masks), m' = max(m, row
// max of S), P = exp(S - m'), l = l e^(m - m') + sum P, O = O e^(m - m') + P V; Y = O / l.
//
// Layouts: K^T of every (batch, kv head) is packed once per call, keys in groups of 16 (the
// vector width): group g holds [head_size][16] with K[16 g + lane][d] at d * 16 + lane (zeros
// past the last key), so a Q·K^T tile reads whole vectors of keys per head dimension. A task's
// query rows are copied into a [rows padded to kFlashRowPad][head_size] block (the padding rows
// zero) so the tiles read them at fixed offsets; V is read in place, a row per key.
//
// Per-target fragment of attention.cpp: included inside its tsr::cpu::HWY_NAMESPACE after the
// row helpers (row_max, add_row, softcap_row, scale_row), once per Highway target pass (no
// include guard). On targets other than x86 AVX-512 only flash_usable (false) is defined.

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3

constexpr int64_t kFlashLanes = 16;    // f32 lanes of a 512-bit vector
constexpr float kFlashLog2e = 1.44269504088896341f;  // the scores' unit (see flash_exp2)
constexpr int64_t kFlashKeys = 512;    // keys per block (a multiple of 4 vectors, the Q·K^T tile width)
constexpr int64_t kFlashPvKeys = 128;  // keys per pass of the P·V tiles (128 rows of 64 values: 32 KiB)
constexpr int64_t kFlashQkRows = 6;    // query rows of a Q·K^T tile (6 x 4 accumulators)
constexpr int64_t kFlashRowPad = 12;   // task rows are padded to this (both tiles' row counts divide it)

// Queries enough that the per-call K^T packing is amortized (a decode step's single query reads
// its keys once: sgemm's path does that without the packing), and a packed K^T of at most 64 MiB
// (a long context's prefill keeps sgemm's per-block buffers instead).
bool flash_usable(const AttnProblem& p) {
  const int64_t packed = p.batch * p.kv_heads * (p.kv_len + kFlashLanes - 1) / kFlashLanes * kFlashLanes * p.head_size;
  return !p.bf16 && p.qk_out == nullptr && p.q_len >= 16 && packed <= (int64_t{16} << 20);
}

using FlashD = hn::ScalableTag<float>;
using FlashV = hn::Vec<FlashD>;

// 2^t for t <= 0 (t = -inf gives 0): t = n + f with n an integer and |f| <= 1/2, 2^f by a
// degree-6 polynomial (fit on [-1/2, 1/2] weighted for relative error: 9.7e-8 at most evaluated
// in f32), times 2^n by vscalefps (n below -149 gives 0 exactly). 10 operations where
// exp_nonpositive takes about 16 plus the range test; the scores are kept in units of log2(e)
// (the queries are scaled by scale * log2(e)), so no multiplication by log2(e) either.
HWY_INLINE FlashV flash_exp2(FlashD d, FlashV t) {
  const FlashV u = hn::Max(t, hn::Set(d, -160.0f));
  const FlashV n = FlashV{_mm512_roundscale_ps(u.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
  const FlashV f = hn::Sub(u, n);
  // Coefficients of f^6 down to f^0 (Horner).
  constexpr float kC[] = {1.5353361959569156e-4f, 1.3398875016719103e-3f, 9.618436917662620e-3f,
                          5.5503323674201965e-2f, 2.4022647738456726e-1f, 6.931471824645996e-1f, 1.0f};
  FlashV p = hn::Set(d, kC[0]);
  unroll<6>([&](auto i) { p = hn::MulAdd(p, f, hn::Set(d, kC[i + 1])); });
  return FlashV{_mm512_scalef_ps(p.raw, n.raw)};
}

// x[i] = 2^(x[i] - m) for i < n, returns their sum; the row's last vector is written whole, the
// lanes past n as zeros (the rows are padded to whole vectors).
float flash_exp_sum(float* x, int64_t n, float m) {
  const FlashD d;
  const FlashV vm = hn::Set(d, m);
  FlashV s0 = hn::Zero(d), s1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * kFlashLanes <= n; i += 2 * kFlashLanes) {
    const FlashV e0 = flash_exp2(d, hn::Sub(hn::LoadU(d, x + i), vm));
    const FlashV e1 = flash_exp2(d, hn::Sub(hn::LoadU(d, x + i + kFlashLanes), vm));
    hn::StoreU(e0, d, x + i);
    hn::StoreU(e1, d, x + i + kFlashLanes);
    s0 = hn::Add(s0, e0);
    s1 = hn::Add(s1, e1);
  }
  for (; i < n; i += kFlashLanes) {
    const auto live = hn::FirstN(d, static_cast<size_t>(std::min<int64_t>(n - i, kFlashLanes)));
    const FlashV e = hn::IfThenElseZero(live, flash_exp2(d, hn::Sub(hn::LoadU(d, x + i), vm)));
    hn::StoreU(e, d, x + i);
    s0 = hn::Add(s0, e);
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
}

// x[i] += c * b[i] for i < n.
void add_scaled_row(float* x, const float* b, int64_t n, float c) {
  const FlashD d;
  const FlashV vc = hn::Set(d, c);
  int64_t i = 0;
  for (; i + kFlashLanes <= n; i += kFlashLanes) hn::StoreU(hn::MulAdd(hn::LoadU(d, b + i), vc, hn::LoadU(d, x + i)), d, x + i);
  for (; i < n; ++i) x[i] += c * b[i];
}

// One key group's K^T block ([dh][16], see the file comment) from `n` <= 16 key rows (`zeros`:
// dh zeros, read for the missing rows); the stores run along the keys, 16 contiguous per dimension.
void flash_pack_kt_group(const float* k, int64_t sr, int64_t n, int64_t dh, const float* zeros, float* dst) {
  const float* row[kFlashLanes];
  for (int64_t l = 0; l < kFlashLanes; ++l) row[l] = l < n ? k + l * sr : zeros;
  for (int64_t d = 0; d < dh; ++d)
    unroll<kFlashLanes>([&](auto l) { dst[d * kFlashLanes + l] = row[l][d]; });
}

// S[r][0, 16 NV) = sum_d Q[r][d] K^T[d][...] for the 6 rows of q ([6][dh], row stride
// dh) against NV key groups starting at kt (groups dh * 16 apart); S rows ld apart. The rows'
// running maxima by lane, vmx[r][16], take the maximum of the tile's scores (in the last vector
// only the lanes in `live`: keys past the block's end are left out). kBias: the scores first get
// log2(e) times the bias rows brow[r] added (the tile's keys; lanes outside `live` not read).
template <int NV, bool kBias>
HWY_NOINLINE void flash_qk_tile(const float* HWY_RESTRICT q, const float* HWY_RESTRICT kt, int64_t dh,
                                float* HWY_RESTRICT s, int64_t ld, hn::Mask<FlashD> live, float* HWY_RESTRICT vmx,
                                const float* const* brow) {
  const FlashD d;
  FlashV acc[kFlashQkRows][NV];
  unroll<kFlashQkRows>([&](auto r) { unroll<NV>([&](auto v) { acc[r][v] = hn::Zero(d); }); });
  for (int64_t k = 0; k < dh; ++k) {
    FlashV b[NV];
    unroll<NV>([&](auto v) { b[v] = hn::LoadU(d, kt + v * dh * kFlashLanes + k * kFlashLanes); });
    unroll<kFlashQkRows>([&](auto r) {
      const FlashV a = hn::Set(d, q[r * dh + k]);
      unroll<NV>([&](auto v) { acc[r][v] = hn::MulAdd(a, b[v], acc[r][v]); });
    });
  }
  unroll<kFlashQkRows>([&](auto r) {
    if constexpr (kBias) {
      unroll<NV>([&](auto v) {
        const float* bv = brow[r] + v * kFlashLanes;
        const FlashV bias = v + 1 < NV ? hn::LoadU(d, bv) : hn::MaskedLoad(live, d, bv);
        acc[r][v] = hn::MulAdd(bias, hn::Set(d, kFlashLog2e), acc[r][v]);
      });
    }
    unroll<NV>([&](auto v) { hn::StoreU(acc[r][v], d, s + r * ld + v * kFlashLanes); });
    FlashV m = hn::IfThenElse(live, acc[r][NV - 1], hn::Set(d, kNegInf));
    unroll<NV - 1>([&](auto v) { m = hn::Max(m, acc[r][v]); });
    hn::StoreU(hn::Max(m, hn::LoadU(d, vmx + r * kFlashLanes)), d, vmx + r * kFlashLanes);
  });
}

// O[r][0, 16 NV) = O[r] * corr[r] + sum_{j < n} P[r][j] V[j][...] for MR rows (first: O = P V,
// O not read; corr null: 1). V rows vsr apart; with kTail the last vector of a V row loads only
// the lanes in `last` (a head size not a multiple of 16). P rows ldp apart, O rows ldo apart.
template <int MR, int NV, bool kTail>
HWY_NOINLINE void flash_pv_tile(const float* HWY_RESTRICT pm, int64_t ldp, int64_t n, const float* HWY_RESTRICT v,
                                int64_t vsr, hn::Mask<FlashD> last, float* HWY_RESTRICT o, int64_t ldo,
                                const float* HWY_RESTRICT corr, bool first) {
  const FlashD d;
  FlashV acc[MR][NV];
  unroll<MR>([&](auto r) {
    const FlashV c = hn::Set(d, corr ? corr[r] : 1.0f);
    unroll<NV>([&](auto c2) {
      acc[r][c2] = first ? hn::Zero(d) : hn::Mul(hn::LoadU(d, o + r * ldo + c2 * kFlashLanes), c);
    });
  });
  for (int64_t j = 0; j < n; ++j) {
    const float* vr = v + j * vsr;
    FlashV b[NV];
    unroll<NV>([&](auto c2) {
      b[c2] = kTail && c2 + 1 == NV ? hn::MaskedLoad(last, d, vr + c2 * kFlashLanes) : hn::LoadU(d, vr + c2 * kFlashLanes);
    });
    unroll<MR>([&](auto r) {
      const FlashV a = hn::Set(d, pm[r * ldp + j]);
      unroll<NV>([&](auto c2) { acc[r][c2] = hn::MulAdd(a, b[c2], acc[r][c2]); });
    });
  }
  unroll<MR>([&](auto r) { unroll<NV>([&](auto c2) { hn::StoreU(acc[r][c2], d, o + r * ldo + c2 * kFlashLanes); }); });
}

// The per-slot buffers: query block q [rows][dh], scores s [rows][kFlashKeys], output o
// [rows][dvp] (dvp: v_head_size rounded up to whole vectors), row max m, sum l, correction c,
// the block's new row max mx, the Q·K^T tiles' row maxima by lane vmx [rows][16].
struct FlashTile {
  float *q, *s, *o, *m, *l, *c, *mx, *vmx;
  int64_t dvp;
};

// Query rows [i0, i1) of head h in batch b against kt, the packed K^T of its kv head.
void flash_rows(const AttnProblem& p, const float* kt, int64_t b, int64_t h, int64_t i0, int64_t i1, const FlashTile& t) {
  const int64_t mq = i1 - i0, rows = (mq + kFlashRowPad - 1) / kFlashRowPad * kFlashRowPad;
  const int64_t dh = p.head_size, dv = p.v_head_size, dvp = t.dvp, total = p.kv_len;
  const int64_t kh = h / (p.q_heads / p.kv_heads);
  const int64_t valid = p.kv_valid ? std::clamp<int64_t>(p.kv_valid[b], 0, total) : total;
  const int64_t off = p.causal_offset_b ? p.causal_offset_b[b] : p.causal_offset;
  int64_t kbeg = 0, kend = valid;
  if (p.causal) {
    kend = std::min(kend, i1 - 1 + off + 1);
    // Blocks start on whole key groups; the keys before the window's start are masked below.
    if (p.local_window >= 0) kbeg = std::max<int64_t>(0, i0 + off - p.local_window) / kFlashLanes * kFlashLanes;
  }
  float* y0 = p.y.base + b * p.y.sb + h * p.y.sh + i0 * p.y.sr;
  if (kbeg >= kend) {  // no visible key: zeros
    for (int64_t r = 0; r < mq; ++r) std::fill(y0 + r * p.y.sr, y0 + r * p.y.sr + dv, 0.0f);
    return;
  }
  // Scores in units of log2(e): the queries scaled by scale * log2(e), and so the bias, softcap and sink.
  for (int64_t r = 0; r < mq; ++r) scale_row(p.q.row(b, h, i0 + r), t.q + r * dh, dh, p.scale * kFlashLog2e);
  std::fill(t.q + mq * dh, t.q + rows * dh, 0.0f);
  // A sink logit starts the running max and sum (exp(sink - sink) = 1) and adds nothing to the output.
  std::fill(t.m, t.m + rows, p.sink ? p.sink[h] * kFlashLog2e : kNegInf);
  std::fill(t.l, t.l + rows, p.sink ? 1.0f : 0.0f);
  std::fill(t.c, t.c + rows, 1.0f);  // the padding rows keep 1 (their P rows are zeros)
  const FlashD d;
  const int64_t nvo_all = (dv + kFlashLanes - 1) / kFlashLanes;
  const auto last = hn::FirstN(d, static_cast<size_t>(dv - (nvo_all - 1) * kFlashLanes));
  const auto all = hn::FirstN(d, kFlashLanes);
  const bool tile_bias = p.bias && p.softcap <= 0;
  const float* bias0 = p.bias ? p.bias + b * p.bias_sb + h * p.bias_sh + i0 * p.bias_sq : nullptr;
  for (int64_t j0 = kbeg; j0 < kend; j0 += kFlashKeys) {
    const int64_t j1 = std::min(j0 + kFlashKeys, kend), n = j1 - j0, nvec = (n + kFlashLanes - 1) / kFlashLanes;
    // Q·K^T: a panel of up to 4 key groups at a time against every 6 rows (the panel stays in L1).
    // Without a softcap (which comes before it) the bias is added by the tiles.
    std::fill(t.vmx, t.vmx + rows * kFlashLanes, kNegInf);
    for (int64_t g = 0; g < nvec; g += 4) {
      const float* panel = kt + (j0 / kFlashLanes + g) * dh * kFlashLanes;
      float* s = t.s + g * kFlashLanes;
      const int64_t nv = std::min<int64_t>(4, nvec - g);
      const auto live = hn::FirstN(d, static_cast<size_t>(std::min(n - (g + nv - 1) * kFlashLanes, kFlashLanes)));
      for (int64_t r = 0; r < rows; r += kFlashQkRows) {
        const float* q = t.q + r * dh;
        float* sr = s + r * kFlashKeys;
        float* vmx = t.vmx + r * kFlashLanes;
        const float* brow[kFlashQkRows] = {};  // the padding rows read the last row's bias
        for (int64_t e = 0; e < kFlashQkRows && tile_bias; ++e)
          brow[e] = bias0 + std::min(r + e, mq - 1) * p.bias_sq + j0 + g * kFlashLanes;
        switch (nv + (tile_bias ? 4 : 0)) {
          case 4: flash_qk_tile<4, false>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
          case 3: flash_qk_tile<3, false>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
          case 2: flash_qk_tile<2, false>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
          case 1: flash_qk_tile<1, false>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
          case 8: flash_qk_tile<4, true>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
          case 7: flash_qk_tile<3, true>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
          case 6: flash_qk_tile<2, true>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
          default: flash_qk_tile<1, true>(q, panel, dh, sr, kFlashKeys, live, vmx, brow); break;
        }
      }
    }
    for (int64_t r = 0; r < mq; ++r) {
      float* row = t.s + r * kFlashKeys;
      const int64_t i = i0 + r;
      // Keys of this block outside [lo, hi] are masked.
      int64_t lo = 0, hi = valid - 1;
      if (p.causal) {
        hi = std::min(hi, i + off);
        if (p.local_window >= 0) lo = i + off - p.local_window;
      }
      const bool masked = j0 < lo || j1 - 1 > hi;
      if (p.softcap <= 0 && !masked) {  // the scores as the tiles stored them: their maximum
        t.mx[r] = std::max(t.m[r], hn::GetLane(hn::MaxOfLanes(d, hn::LoadU(d, t.vmx + r * kFlashLanes))));
        continue;
      }
      if (p.softcap > 0) softcap_row(row, n, p.softcap * kFlashLog2e);
      if (p.bias && !tile_bias) add_scaled_row(row, p.bias + b * p.bias_sb + h * p.bias_sh + i * p.bias_sq + j0, n, kFlashLog2e);
      if (masked)
        for (int64_t j = j0; j < j1; ++j)
          if (j < lo || j > hi) row[j - j0] = kNegInf;
      t.mx[r] = std::max(t.m[r], row_max(row, n));
    }
    // The exponentials in a second pass over the rows: no row's waits on its own max.
    for (int64_t r = 0; r < mq; ++r) {
      float* row = t.s + r * kFlashKeys;
      const float mx = t.mx[r];
      if (mx == kNegInf) {  // nothing visible yet in this row: the block adds nothing
        std::fill(row, row + nvec * kFlashLanes, 0.0f);
        t.c[r] = 1.0f;
        continue;
      }
      // Nothing accumulated yet (t.m -inf): the output row is zero, nothing to rescale (c = 0).
      t.c[r] = hn::GetLane(flash_exp2(d, hn::Set(d, t.m[r] - mx)));  // 0 when t.m[r] is -inf
      t.l[r] = t.l[r] * t.c[r] + flash_exp_sum(row, n, mx);
      t.m[r] = mx;
    }
    // P·V in chunks of kFlashPvKeys keys (the chunk's V rows stay in L1 for every row tile), the
    // rescale by c folded into the first chunk's load of O; the first block writes O.
    for (int64_t k0 = 0; k0 < n; k0 += kFlashPvKeys) {
      const int64_t kn = std::min(kFlashPvKeys, n - k0);
      const bool first = j0 == kbeg && k0 == 0;
      for (int64_t c0 = 0; c0 < nvo_all; c0 += 4) {
        const int64_t nv = std::min<int64_t>(4, nvo_all - c0);
        const float* v = p.v.row(b, kh, j0 + k0) + c0 * kFlashLanes;
        const bool tail = c0 + nv == nvo_all && dv % kFlashLanes != 0;  // a partial last vector of V
        const auto lm = tail ? last : all;
        for (int64_t r = 0; r < rows; r += nv >= 3 ? 6 : 12) {
          const float* pm = t.s + r * kFlashKeys + k0;
          float* o = t.o + r * dvp + c0 * kFlashLanes;
          const float* c = k0 == 0 ? t.c + r : nullptr;
          switch (nv + (tail ? 4 : 0)) {
            case 4: flash_pv_tile<6, 4, false>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
            case 3: flash_pv_tile<6, 3, false>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
            case 2: flash_pv_tile<12, 2, false>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
            case 1: flash_pv_tile<12, 1, false>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
            case 8: flash_pv_tile<6, 4, true>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
            case 7: flash_pv_tile<6, 3, true>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
            case 6: flash_pv_tile<12, 2, true>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
            default: flash_pv_tile<12, 1, true>(pm, kFlashKeys, kn, v, p.v.sr, lm, o, dvp, c, first); break;
          }
        }
      }
    }
  }
  for (int64_t r = 0; r < mq; ++r) scale_row(t.o + r * dvp, y0 + r * p.y.sr, dv, t.l[r] > 0 ? 1.0f / t.l[r] : 0.0f);
}

// attention_core for flash_usable problems: K^T of every (batch, kv head) packed, then the
// (batch, head, query block) tasks on ctx.pool().
Status flash_attention(exec::KernelContext& ctx, const AttnProblem& p) {
  const int64_t dh = p.head_size, groups = (p.kv_len + kFlashLanes - 1) / kFlashLanes;
  const int64_t per_head = groups * dh * kFlashLanes, heads = p.batch * p.kv_heads;
  TSR_ASSIGN_OR_RETURN(Scratch<float> kt, Scratch<float>::make(ctx, static_cast<size_t>(std::max<int64_t>(heads * per_head, 1))));
  TSR_ASSIGN_OR_RETURN(Scratch<float> zeros, Scratch<float>::filled(ctx, static_cast<size_t>(dh), 0.0f));
  ctx.pool().parallel_for(heads * groups, 16, [&](int64_t g0, int64_t g1) {
    for (int64_t hg = g0; hg < g1; ++hg) {
      const int64_t bh = hg / groups, g = hg % groups;
      flash_pack_kt_group(p.k.row(bh / p.kv_heads, bh % p.kv_heads, g * kFlashLanes), p.k.sr,
                          std::min<int64_t>(kFlashLanes, p.kv_len - g * kFlashLanes), dh, zeros.data(),
                          kt.data() + bh * per_head + g * dh * kFlashLanes);
    }
  });
  // Query rows per task: up to 96 (16 tiles of 6), fewer so that every thread gets about 4 tasks
  // when there are few (batch, head) pairs.
  const int64_t threads = ctx.pool().num_threads(), pairs = p.batch * p.q_heads, want = 4 * threads;
  int64_t qb = std::min<int64_t>(p.q_len, 96);
  if (threads > 1 && pairs * ((p.q_len + qb - 1) / qb) < want) {
    const int64_t per_pair = (want + pairs - 1) / pairs;
    qb = std::clamp<int64_t>(((p.q_len + per_pair - 1) / per_pair + kFlashRowPad - 1) / kFlashRowPad * kFlashRowPad,
                             kFlashRowPad, qb);
  }
  const int64_t rows = (qb + kFlashRowPad - 1) / kFlashRowPad * kFlashRowPad;
  const int64_t dvp = (p.v_head_size + kFlashLanes - 1) / kFlashLanes * kFlashLanes;
  const int64_t nqb = (p.q_len + qb - 1) / qb, tasks = pairs * nqb;
  const size_t per_slot = static_cast<size_t>(rows * (dh + kFlashKeys + dvp + 4 + kFlashLanes));
  TSR_ASSIGN_OR_RETURN(SlotScratch<float> buf, SlotScratch<float>::make(ctx, per_slot));
  ctx.pool().parallel_for_slots(tasks, 1, [&](int slot, int64_t t0, int64_t t1) {
    float* base = buf.slot(slot);
    const FlashTile tile{base, base + rows * dh, base + rows * (dh + kFlashKeys),
                         base + rows * (dh + kFlashKeys + dvp), base + rows * (dh + kFlashKeys + dvp + 1),
                         base + rows * (dh + kFlashKeys + dvp + 2), base + rows * (dh + kFlashKeys + dvp + 3),
                         base + rows * (dh + kFlashKeys + dvp + 4), dvp};
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t blk = task % nqb, bh = task / nqb, b = bh / p.q_heads, h = bh % p.q_heads;
      const int64_t i0 = blk * qb, i1 = std::min(p.q_len, i0 + qb);
      const int64_t kh = h / (p.q_heads / p.kv_heads);
      flash_rows(p, kt.data() + (b * p.kv_heads + kh) * per_head, b, h, i0, i1, tile);
    }
  });
  return ok_status();
}

#else

bool flash_usable(const AttnProblem&) { return false; }
Status flash_attention(exec::KernelContext& ctx, const AttnProblem&) { return ctx.error("no AVX-512 attention path"); }

#endif
