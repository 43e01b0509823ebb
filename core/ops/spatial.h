// Spatial window geometry, a declared shared header: the Conv/pool OpDefs (core/ops/families/nn.cpp)
// and every backend's kernels for them include it (DESIGN.md §2 lets backends use it): resolves kernel_shape, strides, dilations, pads and auto_pad into per-dim values and
// output sizes, following the ONNX opset-17 Conv/MaxPool/AveragePool specs (auto_pad SAME_UPPER
// puts the odd padding at the end, SAME_LOWER at the beginning; VALID = no padding).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/ir/graph.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

struct SpatialParams {
  Ints kernel, strides, dilations, pad_begin, pad_end;
  Ints out;  // output spatial dims; -1 where the input dim is dynamic
};

// `in` are the input's spatial dims (-1 = dynamic), `kernel` the window (from kernel_shape or the
// weight's dims). `ceil_mode` only for pools. Errors (kInvalidModel, message without a place)
// name the attribute: wrong list length, non-positive stride/dilation/kernel, negative pads,
// unknown auto_pad, a window larger than the padded input.
inline Expected<SpatialParams> resolve_spatial(const ir::Node& node, const Ints& in, const Ints& kernel,
                                               bool ceil_mode) {
  const size_t r = in.size();
  SpatialParams p;
  p.kernel = kernel;
  if (p.kernel.size() != r)
    return invalid_model("kernel_shape has ", p.kernel.size(), " values, expected ", r, " (spatial rank)");
  p.strides = node.attr_ints("strides", Ints(r, 1));
  p.dilations = node.attr_ints("dilations", Ints(r, 1));
  Ints pads = node.attr_ints("pads", Ints(2 * r, 0));
  if (p.strides.size() != r) return invalid_model("strides has ", p.strides.size(), " values, expected ", r);
  if (p.dilations.size() != r)
    return invalid_model("dilations has ", p.dilations.size(), " values, expected ", r);
  if (pads.size() != 2 * r) return invalid_model("pads has ", pads.size(), " values, expected ", 2 * r);
  const std::string auto_pad = node.attr_string("auto_pad");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return invalid_model("auto_pad \"", auto_pad, "\" is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  p.pad_begin.assign(r, 0);
  p.pad_end.assign(r, 0);
  p.out.assign(r, -1);
  constexpr int64_t kMaxDim = int64_t{1} << 40;
  for (size_t i = 0; i < r; ++i) {
    const int64_t k = p.kernel[i], s = p.strides[i], dl = p.dilations[i];
    if (k <= 0 || k > kMaxDim) return invalid_model("kernel_shape[", i, "] = ", k, " must be positive");
    if (s <= 0 || s > kMaxDim) return invalid_model("strides[", i, "] = ", s, " must be positive");
    if (dl <= 0 || dl > kMaxDim) return invalid_model("dilations[", i, "] = ", dl, " must be positive");
    if (pads[i] < 0 || pads[i + r] < 0 || pads[i] > kMaxDim || pads[i + r] > kMaxDim)
      return invalid_model("pads[", i, "]/pads[", i + r, "] = ", pads[i], "/", pads[i + r], " must be >= 0");
    const int64_t dk = (k - 1) * dl + 1;  // the dilated window's extent
    const int64_t n = in[i];
    if (auto_pad == "NOTSET") {
      p.pad_begin[i] = pads[i];
      p.pad_end[i] = pads[i + r];
    }
    if (n < 0) continue;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t o = (n + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (o - 1) * s + dk - n);
      const int64_t small = total / 2;
      p.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      p.pad_end[i] = total - p.pad_begin[i];
      p.out[i] = o;
      continue;
    }
    const int64_t span = n + p.pad_begin[i] + p.pad_end[i] - dk;
    if (span < 0)
      return invalid_model("window ", dk, " (kernel_shape[", i, "] with dilations) exceeds the padded input ",
                           n + p.pad_begin[i] + p.pad_end[i], " in spatial dim ", i);
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // As ONNX Runtime and PyTorch do: with ceil_mode the last window must start inside the
    // input or its begin padding, not wholly in the end padding.
    if (ceil_mode && (o - 1) * s >= n + p.pad_begin[i]) --o;
    p.out[i] = o;
  }
  return p;
}

// Conv's output type: sets output 0 to dtype `dt` and shape [N, M, O1..Or] from X (input ix,
// [N, C, D1..Dr]), W (input iw, [M, C/group, k1..kr]) and the optional bias (input ib, [M]),
// with the node's group / kernel_shape / strides / dilations / pads / auto_pad. Unknown dims
// give -1; inconsistent shapes or attributes are errors. Shared by Conv, ConvInteger and
// QLinearConv; defined in nn.cpp. `channels` >= -1 stands for X's C (-1: unknown) where X is not
// the conv's own input (FusedSeparableConv's expansion stage comes first).
Status infer_conv_shape(InferContext& ctx, size_t ix, size_t iw, size_t ib, DType dt, int64_t channels = -2);

}  // namespace tsr::ops
