// The per-plane sweeps of the BatchNormalization kernels (nn_norm.cpp), and batch sweeps for
// small planes. A Highway "-inl" header (per-target include guard toggled by
// hwy/foreach_target.h), included by nn_norm.cpp after <hwy/highway.h> and short_rows-inl.h.
#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#if defined(TSR_CPU_NORM_PLANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TSR_CPU_NORM_PLANES_INL_H_
#undef TSR_CPU_NORM_PLANES_INL_H_
#else
#define TSR_CPU_NORM_PLANES_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace tsr::cpu {
namespace HWY_NAMESPACE {
namespace norm_planes {

namespace hn = hwy::HWY_NAMESPACE;

// Per-plane sweeps of the BatchNormalization kernels. f32 planes run on Highway vectors (lane
// sums in f32 over one plane, at most a few thousand elements; planes add up in double), f64
// planes on the scalar loops. Two passes (mean, then squared deviations) as the reference: no
// E[x^2] - E[x]^2 cancellation. Small planes (MobileNet's last layers are 2x2 and 4x4) take
// narrower vectors rather than the scalar tail: with_plane_tag picks the widest tag of at most
// size / 2 lanes.
template <typename F>
HWY_INLINE auto with_plane_tag(int64_t size, const F& f) {
  const hn::ScalableTag<float> full;
  if (size >= 2 * static_cast<int64_t>(hn::Lanes(full))) return f(full);
  if (size >= 16) return f(hn::CappedTag<float, 8>());
  if (size >= 8) return f(hn::CappedTag<float, 4>());
  if (size >= 4) return f(hn::CappedTag<float, 2>());
  return f(hn::CappedTag<float, 1>());
}

template <typename T>
double plane_sum(const T* p, int64_t size) {
  if constexpr (std::is_same_v<T, float>) {
    return with_plane_tag(size, [&](auto d) {
      const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
      auto a0 = hn::Zero(d), a1 = hn::Zero(d);
      int64_t i = 0;
      for (; i + 2 * nl <= size; i += 2 * nl) {
        a0 = hn::Add(a0, hn::LoadU(d, p + i));
        a1 = hn::Add(a1, hn::LoadU(d, p + i + nl));
      }
      double s = hn::GetLane(hn::SumOfLanes(d, hn::Add(a0, a1)));
      for (; i < size; ++i) s += p[i];
      return s;
    });
  } else {
    double s = 0;
    for (int64_t i = 0; i < size; ++i) s += static_cast<double>(p[i]);
    return s;
  }
}

// {sum(g), sum(g * (x - mu))} over one plane.
template <typename T>
std::pair<double, double> plane_grad_sums(const T* g, const T* x, int64_t size, double mu) {
  if constexpr (std::is_same_v<T, float>) {
    return with_plane_tag(size, [&](auto d) {
      const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
      const auto m = hn::Set(d, static_cast<float>(mu));
      auto sg = hn::Zero(d), sgx = hn::Zero(d);
      int64_t i = 0;
      for (; i + nl <= size; i += nl) {
        const auto gv = hn::LoadU(d, g + i);
        sg = hn::Add(sg, gv);
        sgx = hn::MulAdd(gv, hn::Sub(hn::LoadU(d, x + i), m), sgx);
      }
      double a = hn::GetLane(hn::SumOfLanes(d, sg)), b = hn::GetLane(hn::SumOfLanes(d, sgx));
      for (; i < size; ++i) {
        a += g[i];
        b += static_cast<double>(g[i]) * (static_cast<double>(x[i]) - mu);
      }
      return std::pair<double, double>{a, b};
    });
  } else {
    double a = 0, b = 0;
    for (int64_t i = 0; i < size; ++i) {
      a += static_cast<double>(g[i]);
      b += static_cast<double>(g[i]) * (static_cast<double>(x[i]) - mu);
    }
    return std::pair<double, double>{a, b};
  }
}

// With d = x - k: {sum(d), sum(d^2)} over one plane, and with kGrad also {sum(g), sum(g * d)}
// (g null without kGrad). The training-mode BatchNormalization kernels take the batch mean and
// variance from these in one sweep per plane, with k the mean of the channel's first plane:
// var = E[d^2] - E[d]^2 loses nothing to cancellation while k is near the mean (E[d] small), as
// the two-pass form (mean, then squared deviations) it replaced. The forward and gradient kernels
// run the same code for sum(d) and sum(d^2), so they see the same statistics bit for bit.
template <bool kGrad, typename T>
std::array<double, 4> plane_shifted_sums(const T* x, const T* g, int64_t size, double k) {
  if constexpr (std::is_same_v<T, float>) {
    return with_plane_tag(size, [&](auto d) {
      const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
      const auto m = hn::Set(d, static_cast<float>(k));
      auto s = hn::Zero(d), sq = hn::Zero(d), sg = hn::Zero(d), sgx = hn::Zero(d);
      int64_t i = 0;
      for (; i + nl <= size; i += nl) {
        const auto xm = hn::Sub(hn::LoadU(d, x + i), m);
        s = hn::Add(s, xm);
        sq = hn::MulAdd(xm, xm, sq);
        if constexpr (kGrad) {
          const auto gv = hn::LoadU(d, g + i);
          sg = hn::Add(sg, gv);
          sgx = hn::MulAdd(gv, xm, sgx);
        }
      }
      std::array<double, 4> r = {hn::GetLane(hn::SumOfLanes(d, s)), hn::GetLane(hn::SumOfLanes(d, sq)), 0.0, 0.0};
      if constexpr (kGrad) r[2] = hn::GetLane(hn::SumOfLanes(d, sg)), r[3] = hn::GetLane(hn::SumOfLanes(d, sgx));
      for (; i < size; ++i) {
        const double xm = static_cast<double>(x[i]) - static_cast<double>(static_cast<float>(k));
        r[0] += xm;
        r[1] += xm * xm;
        if constexpr (kGrad) r[2] += g[i], r[3] += static_cast<double>(g[i]) * xm;
      }
      return r;
    });
  } else {
    std::array<double, 4> r = {0, 0, 0, 0};
    for (int64_t i = 0; i < size; ++i) {
      const double xm = static_cast<double>(x[i]) - k;
      r[0] += xm;
      r[1] += xm * xm;
      if constexpr (kGrad) r[2] += static_cast<double>(g[i]), r[3] += static_cast<double>(g[i]) * xm;
    }
    return r;
  }
}

// The batch mean and biased variance of channel ch of x [n, c, size] from one sweep
// (plane_shifted_sums; cnt = n * size > 0); with kGrad, sums[0] = sum(g) and sums[1] =
// sum(g * (x - mean)) over the channel too.
template <bool kGrad, typename T>
std::pair<double, double> channel_stats(const T* x, const T* g, int64_t n, int64_t c, int64_t size, int64_t ch,
                                        double* sums) {
  const double cnt = static_cast<double>(n * size);
  const double k = plane_sum(x + ch * size, size) / static_cast<double>(size);
  std::array<double, 4> t = {0, 0, 0, 0};
  for (int64_t b = 0; b < n; ++b) {
    const int64_t off = (b * c + ch) * size;
    if (b + 1 < n) {  // the next image's planes, c planes on (short_rows::prefetch_run)
      short_rows::prefetch_run(x + off + c * size, size);
      if constexpr (kGrad) short_rows::prefetch_run(g + off + c * size, size);
    }
    const std::array<double, 4> r = plane_shifted_sums<kGrad>(x + off, kGrad ? g + off : nullptr, size, k);
    for (size_t j = 0; j < 4; ++j) t[j] += r[j];
  }
  const double dm = t[0] / cnt;
  if constexpr (kGrad) sums[0] = t[2], sums[1] = t[3] - dm * t[2];  // sum g (d - dm)
  return {k + dm, std::max(0.0, t[1] / cnt - dm * dm)};
}

// out = a * u + b * v + k over one plane (v may be null: out = a * u + k).
template <typename T>
void plane_affine2(T* out, const T* u, const T* v, int64_t size, T a, T b, T k) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    i = with_plane_tag(size, [&](auto d) {
      const int64_t nl = static_cast<int64_t>(hn::Lanes(d));
      const auto av = hn::Set(d, a), bv = hn::Set(d, b), kv = hn::Set(d, k);
      int64_t j = 0;
      if (v) {
        for (; j + nl <= size; j += nl)
          hn::StoreU(hn::MulAdd(av, hn::LoadU(d, u + j), hn::MulAdd(bv, hn::LoadU(d, v + j), kv)), d, out + j);
      } else {
        for (; j + nl <= size; j += nl) hn::StoreU(hn::MulAdd(av, hn::LoadU(d, u + j), kv), d, out + j);
      }
      return j;
    });
  }
  for (; i < size; ++i) out[i] = a * u[i] + (v ? b * v[i] : T(0)) + k;
}

// Small planes (under two full vectors: MobileNet's 4x4, 2x2 and 1x1 layers), where a call and
// a horizontal sum per plane cost more than the plane: the sweeps below take channels [c0, c1) of
// one image at a time, (c1 - c0) * size contiguous floats, and accumulate per element position
// over the n images in f32 vectors (then per channel in double). x, g, out: [n, c, size].
inline bool small_planes(int64_t size) { return size < 2 * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>())); }

// For each image b: fn(vector lanes at i of the block of b, i) over [0, len), then the tail
// element by element (fn's scalar form: fn1(b's block, i)).
template <typename FV, typename F1>
HWY_INLINE void over_blocks(int64_t n, int64_t c, int64_t size, int64_t c0, int64_t c1, const FV& fv, const F1& f1) {
  const hn::ScalableTag<float> d;
  const auto N = static_cast<int64_t>(hn::Lanes(d));
  const int64_t len = (c1 - c0) * size;
  for (int64_t b = 0; b < n; ++b) {
    const int64_t off = (b * c + c0) * size;
    int64_t i = 0;
    for (; i + N <= len; i += N) fv(d, off, i);
    for (; i < len; ++i) f1(off, i);
  }
}

// Per-channel sums over [0, len) of acc into out[c0 + ...] (double).
inline void channel_sums(const float* acc, int64_t size, int64_t c0, int64_t c1, double* out) {
  for (int64_t ch = c0; ch < c1; ++ch) {
    double s = 0;
    for (int64_t j = 0; j < size; ++j) s += acc[(ch - c0) * size + j];
    out[ch] = s;
  }
}

// Fills m [(c1 - c0) * size] with each channel's value v[ch] (as f32).
template <typename V>
void fill_channels(float* m, const V* v, int64_t size, int64_t c0, int64_t c1) {
  for (int64_t ch = c0; ch < c1; ++ch) std::fill(m + (ch - c0) * size, m + (ch - c0 + 1) * size, static_cast<float>(v[ch]));
}

// sum[ch] = sum of x over the images and the plane (as plane_sum). acc: (c1 - c0) * size floats.
inline void small_sums(const float* x, int64_t n, int64_t c, int64_t size, int64_t c0, int64_t c1, float* acc,
                       double* sum) {
  std::fill(acc, acc + (c1 - c0) * size, 0.0f);
  over_blocks(n, c, size, c0, c1,
              [&](auto d, int64_t off, int64_t i) { hn::StoreU(hn::Add(hn::LoadU(d, acc + i), hn::LoadU(d, x + off + i)), d, acc + i); },
              [&](int64_t off, int64_t i) { acc[i] += x[off + i]; });
  channel_sums(acc, size, c0, c1, sum);
}

// sq[ch] = sum of (x - mean)^2 (as plane_sq_dev); with g, also sg[ch] = sum g and sgx[ch] =
// sum g (x - mean) (as plane_sq_dev_grad_sums). mean: per channel. buf: 4 (c1 - c0) size floats.
inline void small_dev_sums(const float* x, const float* g, int64_t n, int64_t c, int64_t size, int64_t c0, int64_t c1,
                           const double* mean, float* buf, double* sq, double* sg, double* sgx) {
  const int64_t len = (c1 - c0) * size;
  float *m = buf, *a_sq = buf + len, *a_g = buf + 2 * len, *a_gx = buf + 3 * len;
  fill_channels(m, mean, size, c0, c1);
  std::fill(a_sq, a_sq + (g ? 3 : 1) * len, 0.0f);
  if (!g) {
    over_blocks(n, c, size, c0, c1,
                [&](auto d, int64_t off, int64_t i) {
                  const auto xm = hn::Sub(hn::LoadU(d, x + off + i), hn::LoadU(d, m + i));
                  hn::StoreU(hn::MulAdd(xm, xm, hn::LoadU(d, a_sq + i)), d, a_sq + i);
                },
                [&](int64_t off, int64_t i) { a_sq[i] += (x[off + i] - m[i]) * (x[off + i] - m[i]); });
  } else {
    over_blocks(n, c, size, c0, c1,
                [&](auto d, int64_t off, int64_t i) {
                  const auto xm = hn::Sub(hn::LoadU(d, x + off + i), hn::LoadU(d, m + i)), gv = hn::LoadU(d, g + off + i);
                  hn::StoreU(hn::MulAdd(xm, xm, hn::LoadU(d, a_sq + i)), d, a_sq + i);
                  hn::StoreU(hn::Add(gv, hn::LoadU(d, a_g + i)), d, a_g + i);
                  hn::StoreU(hn::MulAdd(gv, xm, hn::LoadU(d, a_gx + i)), d, a_gx + i);
                },
                [&](int64_t off, int64_t i) {
                  const float xm = x[off + i] - m[i];
                  a_sq[i] += xm * xm;
                  a_g[i] += g[off + i];
                  a_gx[i] += g[off + i] * xm;
                });
    channel_sums(a_g, size, c0, c1, sg);
    channel_sums(a_gx, size, c0, c1, sgx);
  }
  if (sq) channel_sums(a_sq, size, c0, c1, sq);
}

// out = a[ch] * u + b[ch] * v + k[ch] (v null: out = a[ch] * u + k[ch]), as plane_affine2.
// buf: 3 (c1 - c0) size floats.
template <typename V>
void small_affine(float* out, const float* u, const float* v, int64_t n, int64_t c, int64_t size, int64_t c0,
                  int64_t c1, const V* a, const V* b, const V* k, float* buf) {
  const int64_t len = (c1 - c0) * size;
  float *va = buf, *vb = buf + len, *vk = buf + 2 * len;
  fill_channels(va, a, size, c0, c1);
  fill_channels(vk, k, size, c0, c1);
  if (v) {
    fill_channels(vb, b, size, c0, c1);
    over_blocks(n, c, size, c0, c1,
                [&](auto d, int64_t off, int64_t i) {
                  const auto r = hn::MulAdd(hn::LoadU(d, vb + i), hn::LoadU(d, v + off + i), hn::LoadU(d, vk + i));
                  hn::StoreU(hn::MulAdd(hn::LoadU(d, va + i), hn::LoadU(d, u + off + i), r), d, out + off + i);
                },
                [&](int64_t off, int64_t i) { out[off + i] = va[i] * u[off + i] + vb[i] * v[off + i] + vk[i]; });
  } else {
    over_blocks(n, c, size, c0, c1,
                [&](auto d, int64_t off, int64_t i) {
                  hn::StoreU(hn::MulAdd(hn::LoadU(d, va + i), hn::LoadU(d, u + off + i), hn::LoadU(d, vk + i)), d, out + off + i);
                },
                [&](int64_t off, int64_t i) { out[off + i] = va[i] * u[off + i] + vk[i]; });
  }
}

}  // namespace norm_planes
}  // namespace HWY_NAMESPACE
}  // namespace tsr::cpu
HWY_AFTER_NAMESPACE();

#endif  // TSR_CPU_NORM_PLANES_INL_H_
