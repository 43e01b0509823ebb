// CPU kernel of FusedConcatAffine (tessera; semantics: core/ops/families/nn_norm.cpp): Y =
// scale[c] * X[c] + shift[c] over the channels of the concatenation X of inputs 2.. along axis 1,
// then max(., 0) with relu = 1, each input plane read where it lies (the concatenation is never
// made). DenseNet's layers, Concat -> BatchNormalization -> Relu, crossed memory three times
// (the copy, the BN, the Relu) where this crosses it once. Each element is one multiply-add, as
// in the BN kernel's vector loop, with scale and shift derived as the BN kernel derives them
// (opt_concat_affine.cpp), so Y is the unfused graph's to an ulp. f32, the build's baseline
// Highway vectors; planes split over the pool.
#include <hwy/highway.h>

#include <algorithm>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernels/scratch.h"

namespace tsr::cpu {

namespace {

namespace hn = hwy::HWY_NAMESPACE;

// out = max(a * x + k, 0) (relu) or a * x + k over one plane of `size` floats.
void plane_affine_relu(float* out, const float* x, int64_t size, float a, float k, bool relu) {
  const hn::ScalableTag<float> d;
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  const auto av = hn::Set(d, a), kv = hn::Set(d, k), zero = hn::Zero(d);
  int64_t i = 0;
  if (relu) {
    for (; i + L <= size; i += L) hn::StoreU(hn::Max(hn::MulAdd(av, hn::LoadU(d, x + i), kv), zero), d, out + i);
  } else {
    for (; i + L <= size; i += L) hn::StoreU(hn::MulAdd(av, hn::LoadU(d, x + i), kv), d, out + i);
  }
  for (; i < size; ++i) {
    const float v = a * x[i] + k;
    out[i] = relu ? std::max(v, 0.0f) : v;
  }
}

Status concat_affine_kernel(exec::KernelContext& ctx) {
  const size_t n_in = ctx.num_inputs();
  const Tensor& scale = *ctx.input(0);
  const Tensor& shift = *ctx.input(1);
  TSR_ASSIGN_OR_RETURN(Tensor * y, ctx.alloc_output(0));
  if (y->rank() < 2) return invalid_argument(ctx.place(), ": output rank ", y->rank(), ", expected >= 2");
  const int64_t batch = y->dim(0), c = y->dim(1), size = batch * c == 0 ? 0 : y->numel() / (batch * c);
  if (scale.numel() != c || shift.numel() != c)
    return invalid_argument(ctx.place(), ": scale/shift have ", scale.numel(), "/", shift.numel(), " values for ", c,
                            " channels");
  // The first channel of each input within Y, and the input of each channel.
  TSR_ASSIGN_OR_RETURN(const Scratch<int64_t> first, Scratch<int64_t>::make(ctx, n_in - 1));  // no heap per run
  first[0] = 0;
  for (size_t i = 2; i < n_in; ++i) {
    const Tensor& x = *ctx.input(i);
    const int64_t ci = x.rank() >= 2 ? x.dim(1) : -1;
    if (x.rank() != y->rank() || x.dim(0) != batch || ci < 0 || x.numel() != batch * ci * size)
      return invalid_argument(ctx.place(), ": input[", i, "] shape ", shape_str(x.shape()), " does not match the output ",
                              shape_str(y->shape()));
    first[i - 1] = first[i - 2] + ci;
  }
  if (first[n_in - 2] != c)
    return invalid_argument(ctx.place(), ": inputs hold ", first[n_in - 2], " channels, expected ", c);
  const float* a = scale.data<float>();
  const float* k = shift.data<float>();
  const bool relu = ctx.node().attr_int("relu") != 0;
  float* py = y->mut_data<float>();
  // One task per (image, channel) plane, chunks of >= ~16 K floats.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, size));
  ctx.pool().parallel_for(batch * c, grain, [&](int64_t p0, int64_t p1) {
    size_t in = 0;  // input of channel p % c (channels ascend within a chunk, but wrap per image)
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / c, ch = p % c;
      if (ch < first[in]) in = 0;
      while (ch >= first[in + 1]) ++in;
      const Tensor& x = *ctx.input(in + 2);
      const int64_t ci = first[in + 1] - first[in];
      const float* src = x.data<float>() + (b * ci + (ch - first[in])) * size;
      plane_affine_relu(py + p * size, src, size, a[ch], k[ch], relu);
    }
  });
  return ok_status();
}

}  // namespace

void register_concat_affine_kernels(KernelRegistry& r) {
  TSR_IF_SELECTED("FusedConcatAffine") r.add_fn("FusedConcatAffine", {DType::kF32}, concat_affine_kernel);
}

}  // namespace tsr::cpu
