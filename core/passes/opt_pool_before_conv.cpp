// Pool before pointwise conv (optimize.h): Conv(1x1, stride 1, no pads) -> [Pad of zeros] ->
// AveragePool (no pads) becomes AveragePool -> Conv. A 1x1 Conv is the same linear map at every
// pixel and an average is a fixed linear mix of pixels, so they commute (a bias too: the mean of
// a constant is that constant); pooling first runs the Conv on the pooled pixels only, a quarter
// of them for 2x2 windows. DenseNet's transitions (BN -> Relu -> 1x1 Conv -> AveragePool 2x2;
// torchvision's export puts a Pad with all-zero pads before the pool) spent ~0.9 ms each on the
// full-size Conv. The result equals the original to float rounding (sums in another order).
//
// Conditions: plain Conv (group any), f32/f64 constant W of shape [M, C/g, 1, ..., 1], strides
// and dilations 1, zero pads, auto_pad NOTSET; its output feeds nothing but the (Pad and) pool;
// the Pad (if any) has constant all-zero pads; the AveragePool has zero pads, auto_pad NOTSET,
// dilations 1, ceil_mode 0, and at least halves the pixel count (else pooling the Conv's input,
// which may have more channels, would cost more than it saves). Static shapes on X and Y.
#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

bool all_equal(const Ints& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

// Whether `pad` (a Pad node) pads nothing: constant all-zero pads (any mode).
bool pads_nothing(const ir::Node& pad, const GraphIndex& ix) {
  if (pad.inputs.size() < 2 || pad.outputs.size() != 1) return false;
  const Tensor* pads = ix.constant(pad.inputs[1]);
  if (!pads || pads->dtype() != DType::kI64) return false;
  for (int64_t v : pads->to_i64_vector())
    if (v != 0) return false;
  return true;
}

}  // namespace

Expected<int64_t> pool_before_conv(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t n) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& pool = g.nodes[size_t(n)];
    if (pool.op != "AveragePool" || pool.inputs.size() != 1 || pool.outputs.size() != 1) return false;
    const Ints kernel = pool.attr_ints("kernel_shape");
    const size_t r = kernel.size();
    if (r == 0 || pool.attr_string("auto_pad", "NOTSET") != "NOTSET" || pool.attr_int("ceil_mode") != 0) return false;
    if (!all_equal(pool.attr_ints("pads", Ints(2 * r, 0)), 0) || !all_equal(pool.attr_ints("dilations", Ints(r, 1)), 1))
      return false;
    // The pool's input: the Conv's output, or a Pad of nothing between them.
    int32_t pad_node = -1, conv_out = pool.inputs[0];
    int32_t c = ix.producer(conv_out);
    if (c < 0 || ix.dead(c) || ix.sole_consumer(conv_out) != n) return false;
    if (g.nodes[size_t(c)].op == "Pad") {
      if (!pads_nothing(g.nodes[size_t(c)], ix)) return false;
      pad_node = c;
      conv_out = g.nodes[size_t(c)].inputs[0];
      c = ix.producer(conv_out);
      if (c < 0 || ix.dead(c) || ix.sole_consumer(conv_out) != pad_node) return false;
    }
    const ir::Node& conv = g.nodes[size_t(c)];
    if (conv.op != "Conv" || conv.outputs.size() != 1 || conv.inputs.size() < 2) return false;
    if (conv.attr_string("auto_pad", "NOTSET") != "NOTSET" || !all_equal(conv.attr_ints("strides", Ints(r, 1)), 1) ||
        !all_equal(conv.attr_ints("dilations", Ints(r, 1)), 1) || !all_equal(conv.attr_ints("pads", Ints(2 * r, 0)), 0))
      return false;
    const Tensor* w = ix.constant(conv.inputs[1]);
    if (!w || (w->dtype() != DType::kF32 && w->dtype() != DType::kF64) || w->rank() != static_cast<int64_t>(r + 2))
      return false;
    for (size_t a = 0; a < r; ++a)
      if (w->dim(static_cast<int64_t>(a + 2)) != 1) return false;
    const int32_t x = conv.inputs[0], y = pool.outputs[0];
    const ir::TensorInfo &xi = g.tensors[size_t(x)], &yi = g.tensors[size_t(y)];
    if (!has_static_shape(xi) || !has_static_shape(yi) || xi.shape.size() != r + 2 || yi.shape.size() != r + 2)
      return false;
    int64_t in_pixels = 1, out_pixels = 1;
    for (size_t a = 2; a < r + 2; ++a) {
      in_pixels *= xi.shape[a];
      out_pixels *= yi.shape[a];
    }
    if (2 * out_pixels > in_pixels) return false;

    // The Conv's output tensor becomes the pooled input: X's batch and channels, Y's pixels.
    ir::Node new_pool = pool, new_conv = conv;
    new_pool.inputs[0] = x;
    new_pool.outputs[0] = conv_out;
    new_conv.inputs[0] = conv_out;
    new_conv.outputs[0] = y;
    ir::TensorInfo& mid = g.tensors[size_t(conv_out)];
    mid.shape = yi.shape;
    mid.shape[0] = xi.shape[0];
    mid.shape[1] = xi.shape[1];
    mid.has_shape = true;
    mid.dim_names.clear();
    // Swap the two nodes' slots: the pool takes the Conv's (before it), the Conv the pool's.
    g.nodes[size_t(c)] = std::move(new_pool);
    g.nodes[size_t(n)] = std::move(new_conv);
    ix.set_producer(conv_out, c);
    ix.set_producer(y, n);
    if (pad_node >= 0) ix.kill(pad_node);
    return true;
  });
}

}  // namespace tsr::passes::opt
