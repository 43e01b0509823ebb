// Conv and pooling geometry of the device backends, from the one resolver of window attributes:
// ops::resolve_spatial (core/ops/spatial.h). A kernel resolves its node's attributes once, at
// create, for the load-time shapes; record() fills ConvGeom / PoolGeom from the run's shapes and
// resolves again only when the spatial dims differ from the load-time ones (dynamic dims; auto_pad
// SAME_* then depends on them). Header-only.
#pragma once

#include <string>
#include <vector>

#include "backends/device_common/geometry.h"
#include "core/exec/device.h"
#include "core/ops/spatial.h"

namespace tsr::device_common {

// Whether a conv/pool-family input rank is one the device kernels take (1-D or 2-D: rank 3 or 4).
inline bool window_rank_ok(const Shape& x) { return x.size() == 3 || x.size() == 4; }

// Conv placement: 1-D or 2-D with a weight of the same rank.
inline bool conv_check(const ir::Node&, const std::vector<ops::ValueType>& in) {
  return window_rank_ok(in[0].shape) && in[1].has_shape && in[1].shape.size() == in[0].shape.size();
}

// Pooling placement: 1-D or 2-D, without MaxPool's Indices output. (storage_order only orders
// those indices, so it does not matter here.)
inline bool pool_check(const ir::Node& node, const std::vector<ops::ValueType>& in) {
  return window_rank_ok(in[0].shape) && (node.outputs.size() < 2 || node.outputs[1] < 0);
}

// The spatial dims (from index 2) of a shape.
inline Ints spatial_dims(const Shape& s) { return s.size() > 2 ? Ints(s.begin() + 2, s.end()) : Ints(); }

// The (h, w) pair of per-spatial-dim values `v` (1 or 2 of them): a 1-D window runs as 2-D with
// h = `one_d_h` (1 for sizes and steps, 0 for pads).
inline void split_hw(const Ints& v, int64_t one_d_h, int64_t& h, int64_t& w) {
  h = v.size() == 1 ? one_d_h : v[0];
  w = v.back();
}

// Strides, dilations and leading pads of a ConvGeom or PoolGeom from resolved parameters.
template <class G>
void set_steps(const ops::SpatialParams& s, G& g) {
  split_hw(s.strides, 1, g.sh, g.sw);
  split_hw(s.dilations, 1, g.dh, g.dw);
  split_hw(s.pad_begin, 0, g.ph, g.pw);
}

// ops::resolve_spatial of one node, cached for the dims it was last resolved for.
class WindowAttrs {
 public:
  WindowAttrs(const ir::Node& node, bool ceil_mode) : node_(node), ceil_mode_(ceil_mode) {}
  // Resolves for spatial dims `in` and window `kernel` (-1 = dynamic: resolved again at record).
  void prepare(const Ints& in, const Ints& kernel) { (void)resolve(in, kernel); }
  // The parameters for the run's dims; errors name the node.
  Expected<const ops::SpatialParams*> at(const exec::DeviceKernelContext& ctx, const Ints& in, const Ints& kernel) {
    Status st = in == in_ && kernel == kernel_ ? status_ : resolve(in, kernel);
    if (!st.ok()) return ctx.error(st.message());
    return &params_;
  }

 private:
  Status resolve(const Ints& in, const Ints& kernel) {
    in_ = in;
    kernel_ = kernel;
    Expected<ops::SpatialParams> p = ops::resolve_spatial(node_, in, kernel, ceil_mode_);
    status_ = p.ok() ? ok_status() : p.status();
    if (p.ok()) params_ = std::move(*p);
    return status_;
  }

  const ir::Node& node_;
  bool ceil_mode_;
  Ints in_, kernel_;
  Status status_ = ok_status();
  ops::SpatialParams params_;
};

// A Conv / ConvGradInput / ConvGradWeight node's geometry: x [N, C, (H,) W], w [M, C/group,
// (KH,) KW], y [N, M, (OH,) OW] (the gradient kernels pass the forward shapes).
class ConvWindow {
 public:
  explicit ConvWindow(const exec::KernelInit& init) : attrs_(init.node, false), group_(init.node.attr_int("group")) {
    // Conv's inputs are (x, w); the gradients' are (dy, w) and (x, dy), so those resolve at their
    // first record instead.
    if (init.node.op == "Conv" && init.input_types.size() >= 2 && init.input_types[0].has_shape &&
        init.input_types[1].has_shape)
      attrs_.prepare(spatial_dims(init.input_types[0].shape), spatial_dims(init.input_types[1].shape));
  }
  Expected<ConvGeom> geometry(const exec::DeviceKernelContext& ctx, const Shape& x, const Shape& w, const Shape& y) {
    if (!window_rank_ok(x) || w.size() != x.size() || y.size() != x.size())
      return ctx.error("conv shapes ", shape_str(x), ", ", shape_str(w), ", ", shape_str(y), " are not 1-D or 2-D NC(H)W");
    TSR_ASSIGN_OR_RETURN(const ops::SpatialParams* p, attrs_.at(ctx, spatial_dims(x), spatial_dims(w)));
    ConvGeom g{};
    g.N = x[0];
    g.C = x[1];
    g.M = y[1];
    split_hw(spatial_dims(x), 1, g.H, g.W);
    split_hw(spatial_dims(y), 1, g.OH, g.OW);
    split_hw(spatial_dims(w), 1, g.KH, g.KW);
    set_steps(*p, g);
    g.group = group_;
    if (g.group <= 0 || g.C % g.group || g.M % g.group) return ctx.error("group ", g.group, " does not divide the channels");
    if (w[1] * g.group != g.C) return ctx.error("weights ", shape_str(w), " do not match ", g.C, " input channels");
    return g;
  }

 private:
  WindowAttrs attrs_;
  int64_t group_;
};

// A MaxPool / AveragePool / Global*Pool / MaxPoolGrad node's geometry (x [N, C, (H,) W] -> y);
// the pooling mode (max, average with or without the pads) is the node's, fixed at create.
class PoolWindow {
 public:
  explicit PoolWindow(const exec::KernelInit& init)
      : global_(init.node.op == "GlobalAveragePool" || init.node.op == "GlobalMaxPool"),
        kernel_(init.node.attr_ints("kernel_shape")),
        mode_(init.node.op == "MaxPool" || init.node.op == "GlobalMaxPool" || init.node.op == "MaxPoolGrad"
                  ? 0
                  : (init.node.attr_int("count_include_pad") ? 1 : 2)),
        attrs_(init.node, init.node.attr_int("ceil_mode") != 0) {
    if (!global_ && !init.input_types.empty() && init.input_types[0].has_shape)
      attrs_.prepare(spatial_dims(init.input_types[0].shape), kernel_);
  }
  Expected<PoolGeom> geometry(const exec::DeviceKernelContext& ctx, const Shape& x, const Shape& y) {
    if (!window_rank_ok(x) || y.size() != x.size())
      return ctx.error("pool shapes ", shape_str(x), " -> ", shape_str(y), " are not 1-D or 2-D NC(H)W");
    PoolGeom p{};
    p.mode = mode_;
    p.NC = x[0] * x[1];
    split_hw(spatial_dims(x), 1, p.H, p.W);
    split_hw(spatial_dims(y), 1, p.OH, p.OW);
    if (global_) {
      p.KH = p.H;
      p.KW = p.W;
      p.sh = p.sw = p.dh = p.dw = 1;
      return p;
    }
    TSR_ASSIGN_OR_RETURN(const ops::SpatialParams* s, attrs_.at(ctx, spatial_dims(x), kernel_));
    split_hw(s->kernel, 1, p.KH, p.KW);
    set_steps(*s, p);
    split_hw(s->pad_end, 0, p.peh, p.pew);
    return p;
  }

 private:
  bool global_;
  Ints kernel_;
  int32_t mode_;
  WindowAttrs attrs_;
};

}  // namespace tsr::device_common
