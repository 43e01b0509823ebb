// Concat + BatchNormalization [+ Relu] -> FusedConcatAffine (optimize.h). DenseNet's layers each
// concatenate all earlier feature maps along the channels and normalize the result (BN -> Relu,
// before the 1x1 conv, so the BN cannot fold into a conv): the Concat copies the whole map, the BN
// reads and writes it, the Relu again. The fused node reads each input plane where it lies and
// writes relu(scale * x + shift) once (backends/cpu/kernels/concat_affine.cpp); DenseNet-121 spent
// ~3 of its 26 ms in the three.
//
// Conditions: an inference BN (training_mode 0, one output) with constant scale, B, mean and var
// of one value per channel, reading a Concat along axis 1 that nothing else reads; f32 with
// static shapes on the Concat's inputs and output. The Relu joins when it is the BN output's only
// reader. scale and shift are computed as the BN kernel computes them (in double, then rounded):
// scale = s / sqrt(var + eps), shift = B - mean * scale.
#include <cmath>
#include <string>
#include <vector>

#include "core/passes/optimize_internal.h"

namespace tsr::passes::opt {

namespace {

int32_t add_f32_vector(ir::Graph& g, const std::string& name, const std::vector<float>& v) {
  ir::TensorInfo info;
  info.name = name;
  info.dtype = DType::kF32;
  info.has_shape = true;
  info.shape = {static_cast<int64_t>(v.size())};
  info.constant = Tensor::from<float>(info.shape, v);
  return g.add_tensor(std::move(info));
}

}  // namespace

Expected<int64_t> concat_affine(ir::Model& model, int32_t graph_index) {
  return rewrite_nodes(model, graph_index, [](GraphIndex& ix, int32_t n) -> Expected<bool> {
    ir::Graph& g = ix.graph();
    const ir::Node& bn = g.nodes[size_t(n)];
    if (bn.op != "BatchNormalization" || bn.inputs.size() != 5 || bn.attr_int("training_mode") != 0) return false;
    for (size_t k = 1; k < bn.outputs.size(); ++k)
      if (bn.outputs[k] >= 0) return false;
    const int32_t x = bn.inputs[0];
    const int32_t ci = ix.producer(x);
    if (ci < 0 || ix.dead(ci) || g.nodes[size_t(ci)].op != "Concat" || ix.sole_consumer(x) != n) return false;
    const ir::Node& concat = g.nodes[size_t(ci)];
    const ir::TensorInfo& xi = g.tensors[size_t(x)];
    if (!has_static_shape(xi) || xi.shape.size() < 2 || xi.dtype != DType::kF32) return false;
    const auto rank = static_cast<int64_t>(xi.shape.size());
    const int64_t axis = concat.attr_int("axis");
    if (axis != 1 && axis != 1 - rank) return false;
    for (int32_t in : concat.inputs) {
      if (in < 0) return false;
      const ir::TensorInfo& t = g.tensors[size_t(in)];
      if (!has_static_shape(t) || t.dtype != DType::kF32) return false;
    }
    const int64_t c = xi.shape[1];
    const Tensor* p[4];
    for (size_t k = 0; k < 4; ++k) {
      p[k] = ix.constant(bn.inputs[k + 1]);
      if (!p[k] || p[k]->numel() != c || (p[k]->dtype() != DType::kF32 && p[k]->dtype() != DType::kF64)) return false;
    }
    const double eps = bn.attr_float("epsilon", 1e-5);
    std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
    for (int64_t ch = 0; ch < c; ++ch) {
      const double inv = 1.0 / std::sqrt(p[3]->scalar_f64(ch) + eps), sc = p[0]->scalar_f64(ch);
      scale[size_t(ch)] = static_cast<float>(sc * inv);
      shift[size_t(ch)] = static_cast<float>(p[1]->scalar_f64(ch) - p[2]->scalar_f64(ch) * sc * inv);
    }
    // The Relu reading nothing but the BN's output joins.
    const int32_t out = bn.outputs[0];
    const int32_t r = ix.is_graph_output(out) ? -1 : ix.sole_consumer(out);
    const bool relu = r >= 0 && !ix.dead(r) && g.nodes[size_t(r)].op == "Relu" && g.nodes[size_t(r)].inputs.size() == 1;
    ir::Node f;
    f.op = "FusedConcatAffine";
    f.name = bn.name;
    const std::string base = bn.name.empty() ? g.tensors[size_t(out)].name : bn.name;
    f.inputs = {add_f32_vector(g, base + "/scale", scale), add_f32_vector(g, base + "/shift", shift)};
    for (int32_t in : g.nodes[size_t(ci)].inputs) f.inputs.push_back(in);
    f.outputs = relu ? g.nodes[size_t(r)].outputs : g.nodes[size_t(n)].outputs;
    f.attributes.push_back(ir::Attribute::make_int("relu", relu ? 1 : 0));
    ix.kill(ci);
    if (relu) {
      ix.kill(n);
      g.nodes[size_t(r)] = std::move(f);
      ix.set_producer(g.nodes[size_t(r)].outputs[0], r);
    } else {
      g.nodes[size_t(n)] = std::move(f);
    }
    return true;
  });
}

}  // namespace tsr::passes::opt
