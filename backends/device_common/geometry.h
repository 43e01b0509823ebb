// The geometry structs the device backends' host code fills and their device code reads (Vulkan
// push constants are packed from them; the CUDA launchers take them as they are). Plain structs
// over <cstdint> only, C++17: backends/cuda/kernels/launch.h includes this header, and nvcc
// compiles the .cu files as CUDA C++17 without the rest of Tessera's headers.
#pragma once

#include <cstdint>

namespace tsr::device_common {

// The highest rank a device kernel takes (placement keeps higher ranks on the CPU).
constexpr int kMaxRank = 6;

// A convolution, NCHW (1-D: H = KH = OH = 1, sh = dh = 1, ph = 0); weights [M, C/group, KH, KW];
// ph/pw the leading pads.
struct ConvGeom {
  int64_t N, C, H, W, M, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw, group;
};

// Pooling of NC planes x [NC, H, W] -> y [NC, OH, OW] (1-D pools: H = OH = KH = 1). mode 0 max,
// 1 average counting pads, 2 average over the valid taps; ph/pw the leading pads, peh/pew the
// trailing ones (a window past them is cut, as ceil_mode windows are).
struct PoolGeom {
  int64_t NC, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw, peh, pew;
  int32_t mode;
};

// y[o, j, i] = x[o, idx[j], i] with o < outer, j < n_idx, i < inner; idx values in [0, axis_len).
struct GatherGeom {
  int64_t outer, axis_len, n_idx, inner;
};

// Resize of the last two dims of NC planes (x [NC, H, W] -> y [NC, OH, OW]). mode 0 nearest,
// 1 linear; coord 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel,
// 4 tf_half_pixel_for_nn; nearest 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil;
// sh, sw the scales (out / in, or as given).
struct ResizeGeom {
  int64_t NC, H, W, OH, OW;
  int32_t mode, coord, nearest;
  float sh, sw;
};

}  // namespace tsr::device_common
