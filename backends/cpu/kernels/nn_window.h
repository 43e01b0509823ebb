// Helpers shared by the CPU Conv and pool kernels: the window geometry of a node at run time,
// with every spatial rank (1-D, 2-D, 3-D) lifted to 3-D by leading unit dims so one loop nest
// serves all ranks.
#pragma once

#include <array>

#include "core/exec/kernel.h"
#include "core/ops/spatial.h"

namespace tsr::cpu {

// Multiply-adds below which a conv runs on one thread (about 10 us of work): splitting less costs
// more in the pool's hand-off and in moving the output between cores' caches than the second
// core saves. With the allocation-free executor and slot scratch, 1 M to 4 M MAC convs do gain
// from two threads: BlazeFace back's 64 x 64 separable blocks, openWakeWord's embedding convs
// (2 threads: 2.22 -> 1.86 ms and 0.61 -> 0.47 ms against the 4 M MAC threshold before).
inline constexpr int64_t kMinParallelConvMacs = int64_t{1} << 19;

struct Window3 {
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, pe{0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

// The window of resolved spatial params `sp` for input spatial dims `in` (ranks 1..3; -1 dims, as
// when resolved at kernel creation from load-time types, stay -1 in `in` and `out`).
inline Window3 window3_of(const ops::SpatialParams& sp, const Ints& in) {
  Window3 w;
  const size_t off = 3 - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    w.in[off + i] = in[i];
    w.out[off + i] = sp.out[i];
    w.k[off + i] = sp.kernel[i];
    w.s[off + i] = sp.strides[i];
    w.d[off + i] = sp.dilations[i];
    w.pb[off + i] = sp.pad_begin[i];
    w.pe[off + i] = sp.pad_end[i];
  }
  return w;
}

// Resolves the node's window for input spatial dims `in` and window `kernel` (ranks 1..3).
inline Expected<Window3> resolve_window3(const exec::KernelContext& ctx, const Ints& in, const Ints& kernel,
                                         bool ceil_mode) {
  if (in.empty() || in.size() > 3)
    return unsupported(ctx.place(), ": spatial rank ", in.size(), " (the cpu kernel handles 1 to 3)");
  auto sp = ops::resolve_spatial(ctx.node(), in, kernel, ceil_mode);
  if (!sp.ok()) return ctx.error(sp.status().message());
  return window3_of(*sp, in);
}

// A node's window resolved once, at kernel creation, for its load-time input spatial dims and
// kernel window. A run at those dims (every run, for a model of fixed input shape) takes it
// instead of parsing the node's attributes again (auto_pad, pads, strides, dilations by name:
// ~1% of MobileNetV3-small's run, 36 nodes of ~30 us). Immutable once made: concurrent runs share
// it. `valid` is false where the dims were not all known at load (or did not resolve: the run
// reports that).
struct PresolvedWindow {
  Ints in, kernel;
  Window3 w;
  bool valid = false;
};

inline PresolvedWindow presolve_window3(const ir::Node& node, const Ints& in, const Ints& kernel) {
  PresolvedWindow p;
  if (in.empty() || in.size() > 3 || in.size() != kernel.size()) return p;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] < 0 || kernel[i] < 0) return p;
  auto sp = ops::resolve_spatial(node, in, kernel, false);
  if (!sp.ok()) return p;
  p.in = in;
  p.kernel = kernel;
  p.w = window3_of(*sp, in);
  p.valid = true;
  return p;
}

// resolve_window3 (no ceil mode) taking `pre` where it was made for these `in` and `kernel` dims.
inline Expected<Window3> resolve_window3(const exec::KernelContext& ctx, const Ints& in, const Ints& kernel,
                                         const PresolvedWindow* pre) {
  if (pre && pre->valid && pre->in == in && pre->kernel == kernel) return pre->w;
  return resolve_window3(ctx, in, kernel, false);
}

}  // namespace tsr::cpu
