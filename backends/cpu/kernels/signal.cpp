// CPU kernels for the signal ops (semantics: core/ops/families/signal.cpp). The transforms are
// direct O(n^2) DFTs with twiddles precomputed in double: exact to ~1e-12 relative, and adequate
// for the short frames these ops see in models (an FFT is the upgrade if one becomes hot).
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"

namespace tsr::cpu {

namespace {

using exec::KernelContext;
constexpr double kPi = 3.14159265358979323846;

double load(const Tensor& t, int64_t i) { return t.scalar_f64(i); }

void store(Tensor& t, int64_t i, double v) {
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half>) t.mut_data<Half>()[i].bits = f32_to_f16(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, BFloat16>) t.mut_data<BFloat16>()[i].bits = f32_to_bf16(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, bool>) t.mut_data<bool>()[i] = v != 0;
    else t.mut_data<T>()[i] = static_cast<T>(v);
  });
}

// out[k] = sum_j in[j] * exp(sign * 2 pi i j k / n), j < in_len (zero-padded / truncated to n).
void dft_1d(const std::vector<double>& re, const std::vector<double>& im, int64_t n, int64_t out_len, bool inverse,
            std::vector<double>& ore, std::vector<double>& oim) {
  const double sign = inverse ? 1.0 : -1.0;
  const auto in_len = std::min<int64_t>(static_cast<int64_t>(re.size()), n);
  ore.assign(static_cast<size_t>(out_len), 0.0);
  oim.assign(static_cast<size_t>(out_len), 0.0);
  for (int64_t k = 0; k < out_len; ++k) {
    double sr = 0, si = 0;
    for (int64_t j = 0; j < in_len; ++j) {
      const double a = sign * 2 * kPi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      const double c = std::cos(a), s = std::sin(a);
      sr += re[static_cast<size_t>(j)] * c - im[static_cast<size_t>(j)] * s;
      si += re[static_cast<size_t>(j)] * s + im[static_cast<size_t>(j)] * c;
    }
    ore[static_cast<size_t>(k)] = inverse ? sr / static_cast<double>(n) : sr;
    oim[static_cast<size_t>(k)] = inverse ? si / static_cast<double>(n) : si;
  }
}

Status dft(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const int64_t rank = x.rank();
  int64_t axis = ctx.node().attr_int("axis");
  if (axis < 0) axis += rank - 1;
  const bool inverse = ctx.node().attr_int("inverse") != 0;
  const bool complex_in = x.shape().back() == 2;
  const int64_t in_len = x.dim(axis), out_len = y->dim(axis);
  const int64_t n = ctx.input(1) ? ctx.input(1)->scalar_i64() : in_len;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
  const int64_t xc = x.shape().back();
  std::vector<double> re(static_cast<size_t>(in_len)), im(static_cast<size_t>(in_len)), ore, oim;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < in_len; ++j) {
        const int64_t base = ((o * in_len + j) * inner + i) * xc;
        re[static_cast<size_t>(j)] = load(x, base);
        im[static_cast<size_t>(j)] = complex_in ? load(x, base + 1) : 0.0;
      }
      dft_1d(re, im, n, out_len, inverse, ore, oim);
      for (int64_t k = 0; k < out_len; ++k) {
        const int64_t base = ((o * out_len + k) * inner + i) * 2;
        store(*y, base, ore[static_cast<size_t>(k)]);
        store(*y, base + 1, oim[static_cast<size_t>(k)]);
      }
    }
  return ok_status();
}

Status stft(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor* window = ctx.input(2);
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const int64_t step = ctx.input(1)->scalar_i64();
  const int64_t frame_length = ctx.input(3) ? ctx.input(3)->scalar_i64() : window->numel();
  if (window && window->numel() != frame_length)
    return ctx.error("input[2] (window) has ", window->numel(), " samples, frame_length is ", frame_length);
  const int64_t batch = x.dim(0), len = x.dim(1), xc = x.dim(2), frames = y->dim(1), bins = y->dim(2);
  std::vector<double> re(static_cast<size_t>(frame_length)), im(static_cast<size_t>(frame_length)), ore, oim;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t j = 0; j < frame_length; ++j) {
        const double w = window ? load(*window, j) : 1.0;
        const int64_t base = (b * len + f * step + j) * xc;
        re[static_cast<size_t>(j)] = load(x, base) * w;
        im[static_cast<size_t>(j)] = xc == 2 ? load(x, base + 1) * w : 0.0;
      }
      dft_1d(re, im, frame_length, bins, false, ore, oim);
      for (int64_t k = 0; k < bins; ++k) {
        store(*y, ((b * frames + f) * bins + k) * 2, ore[static_cast<size_t>(k)]);
        store(*y, ((b * frames + f) * bins + k) * 2 + 1, oim[static_cast<size_t>(k)]);
      }
    }
  return ok_status();
}

template <int kKind>  // 0 Hann, 1 Hamming, 2 Blackman
Status window_fn(KernelContext& ctx) {
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  const int64_t size = y->numel();
  const bool periodic = ctx.node().attr_int("periodic") != 0;
  const double n = static_cast<double>(periodic ? size : size - 1);
  for (int64_t i = 0; i < size; ++i) {
    const double a = 2 * kPi * static_cast<double>(i) / n;
    double v;
    if (kKind == 0) v = 0.5 - 0.5 * std::cos(a);
    else if (kKind == 1) v = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(a);
    else v = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
    store(*y, i, n == 0 ? 1.0 : v);
  }
  return ok_status();
}

Status mel_weight_matrix(KernelContext& ctx) {
  const int64_t mel = ctx.input(0)->scalar_i64(), dft_length = ctx.input(1)->scalar_i64();
  const int64_t sample_rate = ctx.input(2)->scalar_i64();
  const double lo_hz = ctx.input(3)->scalar_f64(), hi_hz = ctx.input(4)->scalar_f64();
  if (sample_rate <= 0) return ctx.error("input[2] (sample_rate) must be > 0");
  TSR_ASSIGN_OR_RETURN(Tensor* y, ctx.alloc_output(0));
  for (int64_t i = 0; i < y->numel(); ++i) store(*y, i, 0.0);
  const int64_t bins = dft_length / 2 + 1;
  auto hz_to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double lo_mel = hz_to_mel(lo_hz), hi_mel = hz_to_mel(hi_hz);
  const double mel_step = (hi_mel - lo_mel) / static_cast<double>(mel + 2);
  std::vector<int64_t> f(static_cast<size_t>(mel + 2));
  for (int64_t i = 0; i < mel + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * mel_step + lo_mel) / 2595.0) - 1.0);
    f[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
  }
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j >= 0 && j < bins) store(*y, j * mel + i, v);
  };
  for (int64_t i = 0; i < mel; ++i) {
    const int64_t left = f[static_cast<size_t>(i)], center = f[static_cast<size_t>(i + 1)], right = f[static_cast<size_t>(i + 2)];
    if (center == left) set(center, i, 1.0);
    else
      for (int64_t j = left; j <= center; ++j) set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    if (right > center)
      for (int64_t j = center; j < right; ++j) set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  return ok_status();
}

}  // namespace

void register_signal_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("DFT") r.add_fn("DFT", {DType::kF32, DType::kF64, DType::kF16}, dft);
  TSR_IF_SELECTED("STFT") r.add_fn("STFT", {DType::kF32, DType::kF64, DType::kF16}, stft);
  TSR_IF_SELECTED("HannWindow") r.add_fn("HannWindow", {DType::kI32, DType::kI64}, window_fn<0>);
  TSR_IF_SELECTED("HammingWindow") r.add_fn("HammingWindow", {DType::kI32, DType::kI64}, window_fn<1>);
  TSR_IF_SELECTED("BlackmanWindow") r.add_fn("BlackmanWindow", {DType::kI32, DType::kI64}, window_fn<2>);
  TSR_IF_SELECTED("MelWeightMatrix") r.add_fn("MelWeightMatrix", {DType::kI32, DType::kI64}, mel_weight_matrix);
}

}  // namespace tsr::cpu
