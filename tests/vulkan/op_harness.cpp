// One op harness for every device kernel (ggml's test-backend-ops): each case is declared once as
// a generator of random shapes (odd sizes, broadcasting), built into a one-node model, run on the
// device backend and on the CPU backend, and compared element by element (|d - c| <= 1e-4 +
// 1e-4 |c|). Each case also checks that the node really ran on the device. Under the Khronos
// validation layer (CTest sets VK_INSTANCE_LAYERS) any validation message fails the run
// (VkContext::synchronize), hence the case.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <set>

#include "backends/null/null_device.h"
#include "core/base/rng.h"
#include "core/exec/backend.h"
#include "tessera/session.h"
#include "core/passes/infer_types.h"
#include "tests/vulkan/device_test_util.h"

#if TSR_HAVE_VULKAN
#include "backends/vulkan/vulkan_backend.h"
#endif
#if TSR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

using namespace tsr;
using tsr::test::OpCase;

namespace {

using Rng = std::mt19937;
int64_t dim(Rng& r, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(r); }

Tensor rand_f32(Rng& r, const Shape& s, float lo = -2, float hi = 2) {
  Tensor t = Tensor::empty(DType::kF32, s).value();
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.mut_data<float>()[i] = u(r);
  return t;
}
Tensor i64(const std::vector<int64_t>& v) { return Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v); }

// A random shape of rank [lo_rank, hi_rank] with dims in [1, 9] (odd sizes included) and at least
// 16 elements so placement's cost rule puts the node on the device.
Shape rand_shape(Rng& r, int lo_rank, int hi_rank) {
  for (;;) {
    Shape s(static_cast<size_t>(dim(r, lo_rank, hi_rank)));
    for (auto& d : s) d = dim(r, 1, 9);
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    if (n >= 16) return s;
  }
}
// `s` with some dims set to 1 and maybe leading dims dropped: a broadcasting partner.
Shape broadcast_of(Rng& r, const Shape& s) {
  Shape b(s.begin() + dim(r, 0, static_cast<int64_t>(s.size()) - 1), s.end());
  for (auto& d : b)
    if (dim(r, 0, 2) == 0) d = 1;
  return b;
}

using Gen = std::function<OpCase(Rng&)>;
struct Named {
  std::string op;
  Gen gen;
};

std::vector<Named> cases() {
  std::vector<Named> c;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "HardSwish", "Erf", "Floor", "Ceil", "Softplus",
                         "Sin", "Cos", "Round", "Sign", "Gelu", "Softsign", "Identity"})
    c.push_back({op, [op](Rng& r) { return OpCase{op, {{rand_f32(r, rand_shape(r, 1, 4)), false}}}; }});
  for (const char* op : {"Log", "Sqrt", "Reciprocal"})
    c.push_back({op, [op](Rng& r) { return OpCase{op, {{rand_f32(r, rand_shape(r, 1, 4), 0.1f, 3.0f), false}}}; }});
  c.push_back({"HardSigmoid", [](Rng& r) {
                 return OpCase{"HardSigmoid", {{rand_f32(r, rand_shape(r, 1, 4)), false}},
                               {ir::Attribute::make_float("alpha", 0.3), ir::Attribute::make_float("beta", 0.4)}};
               }});
  c.push_back({"LeakyRelu", [](Rng& r) {
                 return OpCase{"LeakyRelu", {{rand_f32(r, rand_shape(r, 1, 4)), false}}, {ir::Attribute::make_float("alpha", 0.1)}};
               }});
  c.push_back({"Elu", [](Rng& r) { return OpCase{"Elu", {{rand_f32(r, rand_shape(r, 1, 4)), false}}}; }});
  c.push_back({"Clip", [](Rng& r) {
                 return OpCase{"Clip", {{rand_f32(r, rand_shape(r, 1, 4)), false}, {Tensor::scalar<float>(-0.5f), true},
                                        {Tensor::scalar<float>(0.7f), true}}};
               }});
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    c.push_back({op, [op](Rng& r) {
                   const Shape s = rand_shape(r, 1, 5);
                   const bool swap = dim(r, 0, 1);
                   Tensor a = rand_f32(r, s), b = rand_f32(r, broadcast_of(r, s), 0.5f, 2.0f);
                   if (swap && std::string(op) != "Div") std::swap(a, b);
                   return OpCase{op, {{a, false}, {b, dim(r, 0, 1) == 1}}};
                 }});
  c.push_back({"Pow", [](Rng& r) {
                 const Shape s = rand_shape(r, 1, 4);
                 return OpCase{"Pow", {{rand_f32(r, s, 0.2f, 2.0f), false}, {rand_f32(r, broadcast_of(r, s), -2, 2), false}}};
               }});
  c.push_back({"Pow", [](Rng& r) {  // negative bases with integer exponents (variance's x^2)
                 return OpCase{"Pow", {{rand_f32(r, rand_shape(r, 1, 4)), false}, {Tensor::scalar<float>(2.0f), true}}};
               }});
  c.push_back({"PRelu", [](Rng& r) {
                 const Shape s{dim(r, 1, 3), dim(r, 2, 7), dim(r, 3, 9), dim(r, 3, 9)};
                 return OpCase{"PRelu", {{rand_f32(r, s), false}, {rand_f32(r, {s[1], 1, 1}), true}}};
               }});
  c.push_back({"Reshape", [](Rng& r) {
                 const Shape s{dim(r, 2, 5), dim(r, 2, 5), dim(r, 2, 5)};
                 return OpCase{"Reshape", {{rand_f32(r, s), false}, {i64({s[0], -1}), true}}, {}, 1, "Relu"};
               }});
  c.push_back({"Flatten", [](Rng& r) {
                 return OpCase{"Flatten", {{rand_f32(r, {2, dim(r, 2, 5), 3, dim(r, 1, 4)}), false}},
                               {ir::Attribute::make_int("axis", 2)}, 1, "Relu"};
               }});
  c.push_back({"Squeeze", [](Rng& r) {
                 return OpCase{"Squeeze", {{rand_f32(r, {dim(r, 4, 6), 1, dim(r, 4, 7)}), false}, {i64({1}), true}}, {}, 1, "Relu"};
               }});
  c.push_back({"Unsqueeze", [](Rng& r) {
                 return OpCase{"Unsqueeze", {{rand_f32(r, {dim(r, 2, 5), dim(r, 4, 7)}), false}, {i64({0, 3}), true}}, {}, 1, "Relu"};
               }});
  c.push_back({"Dropout", [](Rng& r) { return OpCase{"Dropout", {{rand_f32(r, rand_shape(r, 1, 3)), false}}, {}, 1, "Relu"}; }});
  c.push_back({"MatMul", [](Rng& r) {
                 const int64_t m = dim(r, 1, 37), k = dim(r, 1, 41), n = dim(r, 16, 35);
                 const int64_t b = dim(r, 1, 3);
                 const bool bcast = dim(r, 0, 1);
                 return OpCase{"MatMul", {{rand_f32(r, {b, m, k}), false}, {rand_f32(r, bcast ? Shape{k, n} : Shape{b, k, n}), bcast}}};
               }});
  c.push_back({"MatMul", [](Rng& r) {  // 4-D batches (attention) and a 1-D operand
                 const int64_t k = dim(r, 3, 20);
                 return OpCase{"MatMul", {{rand_f32(r, {2, 3, dim(r, 3, 9), k}), false}, {rand_f32(r, {k}), false}}};
               }});
  c.push_back({"Gemm", [](Rng& r) {
                 const int64_t m = dim(r, 2, 30), k = dim(r, 1, 33), n = dim(r, 8, 29);
                 const bool ta = dim(r, 0, 1), tb = dim(r, 0, 1);
                 return OpCase{"Gemm",
                               {{rand_f32(r, ta ? Shape{k, m} : Shape{m, k}), false},
                                {rand_f32(r, tb ? Shape{n, k} : Shape{k, n}), true},
                                {rand_f32(r, dim(r, 0, 1) ? Shape{n} : Shape{m, n}), true}},
                               {ir::Attribute::make_int("transA", ta), ir::Attribute::make_int("transB", tb),
                                ir::Attribute::make_float("alpha", 0.7), ir::Attribute::make_float("beta", 1.3)}};
               }});
  c.push_back({"Conv", [](Rng& r) {
                 const int64_t g = dim(r, 1, 3), cin = g * dim(r, 1, 3), m = g * dim(r, 1, 4);
                 const int64_t k = dim(r, 1, 3), s = dim(r, 1, 2), d = dim(r, 1, 2), p = dim(r, 0, 2);
                 return OpCase{"Conv",
                               {{rand_f32(r, {dim(r, 1, 2), cin, dim(r, 5, 13), dim(r, 5, 11)}), false},
                                {rand_f32(r, {m, cin / g, k, k}), true},
                                {rand_f32(r, {m}), true}},
                               {ir::Attribute::make_int("group", g), ir::Attribute::make_ints("strides", {s, s}),
                                ir::Attribute::make_ints("dilations", {d, d}), ir::Attribute::make_ints("pads", {p, p, p, 0})}};
               }});
  c.push_back({"Conv", [](Rng& r) {  // depthwise, SAME_UPPER, no bias
                 const int64_t ch = dim(r, 2, 6);
                 return OpCase{"Conv", {{rand_f32(r, {1, ch, dim(r, 4, 9), dim(r, 4, 9)}), false}, {rand_f32(r, {ch, 1, 3, 3}), true}},
                               {ir::Attribute::make_int("group", ch), ir::Attribute::make_string("auto_pad", "SAME_UPPER"),
                                ir::Attribute::make_ints("strides", {2, 2})}};
               }});
  c.push_back({"Conv", [](Rng& r) {  // 1-D
                 return OpCase{"Conv", {{rand_f32(r, {1, 3, dim(r, 16, 40)}), false}, {rand_f32(r, {4, 3, 5}), false}},
                               {ir::Attribute::make_ints("pads", {2, 1}), ir::Attribute::make_ints("strides", {3})}};
               }});
  for (const char* op : {"MaxPool", "AveragePool"})
    c.push_back({op, [op](Rng& r) {
                   const int64_t k = dim(r, 2, 3), s = dim(r, 1, 2);
                   std::vector<ir::Attribute> a = {ir::Attribute::make_ints("kernel_shape", {k, k}),
                                                   ir::Attribute::make_ints("strides", {s, s}),
                                                   ir::Attribute::make_ints("pads", {1, 0, 1, 1}),
                                                   ir::Attribute::make_int("ceil_mode", dim(r, 0, 1))};
                   if (std::string(op) == "AveragePool") a.push_back(ir::Attribute::make_int("count_include_pad", dim(r, 0, 1)));
                   return OpCase{op, {{rand_f32(r, {dim(r, 1, 2), dim(r, 1, 4), dim(r, 5, 12), dim(r, 5, 12)}), false}}, a};
                 }});
  c.push_back({"MaxPool", [](Rng& r) {  // storage_order orders only the Indices output: Y is placed and the same
                 return OpCase{"MaxPool", {{rand_f32(r, {1, dim(r, 1, 3), dim(r, 6, 9), dim(r, 6, 9)}), false}},
                               {ir::Attribute::make_ints("kernel_shape", {2, 2}), ir::Attribute::make_int("storage_order", 1)}};
               }});
  c.push_back({"AveragePool", [](Rng& r) {  // 1-D, SAME_LOWER: pads from ops::resolve_spatial
                 return OpCase{"AveragePool", {{rand_f32(r, {1, dim(r, 4, 6), dim(r, 16, 30)}), false}},
                               {ir::Attribute::make_ints("kernel_shape", {3}), ir::Attribute::make_ints("strides", {2}),
                                ir::Attribute::make_string("auto_pad", "SAME_LOWER")}};
               }});
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    c.push_back({op, [op](Rng& r) {
                   return OpCase{op, {{rand_f32(r, {dim(r, 1, 2), dim(r, 16, 24), dim(r, 1, 9), dim(r, 1, 9)}), false}}};
                 }});
  c.push_back({"BatchNormalization", [](Rng& r) {
                 const int64_t ch = dim(r, 2, 7);
                 return OpCase{"BatchNormalization",
                               {{rand_f32(r, {dim(r, 1, 2), ch, dim(r, 2, 7), dim(r, 2, 7)}), false},
                                {rand_f32(r, {ch}), true}, {rand_f32(r, {ch}), true}, {rand_f32(r, {ch}), true},
                                {rand_f32(r, {ch}, 0.1f, 2.0f), true}}};
               }});
  for (const char* op : {"Softmax", "LogSoftmax"})
    c.push_back({op, [op](Rng& r) {
                   const Shape s = rand_shape(r, 2, 4);
                   return OpCase{op, {{rand_f32(r, s, -5, 5), false}},
                                 {ir::Attribute::make_int("axis", dim(r, -static_cast<int64_t>(s.size()), static_cast<int64_t>(s.size()) - 1))}};
                 }});
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    c.push_back({op, [op](Rng& r) {
                   const Shape s = {dim(r, 2, 4), dim(r, 4, 6), dim(r, 3, 5), dim(r, 4, 6)};
                   const float lo = std::string(op) == "ReduceLogSum" ? 0.1f : -1.2f;
                   OpCase oc{op, {{rand_f32(r, s, lo, 1.2f), false}}, {ir::Attribute::make_int("keepdims", dim(r, 0, 1))}};
                   std::vector<int64_t> axes = dim(r, 0, 1) ? std::vector<int64_t>{-1} : std::vector<int64_t>{0, 2};
                   if (std::string(op) == "ReduceSum") oc.inputs.push_back({i64(axes), true});  // opset 13: axes input
                   else oc.attrs.push_back(ir::Attribute::make_ints("axes", axes));
                   return oc;
                 }});
  c.push_back({"Transpose", [](Rng& r) {
                 std::vector<int64_t> perm = {0, 1, 2, 3};
                 std::shuffle(perm.begin(), perm.end(), r);
                 return OpCase{"Transpose", {{rand_f32(r, {dim(r, 1, 5), dim(r, 2, 6), dim(r, 3, 7), dim(r, 2, 5)}), false}},
                               {ir::Attribute::make_ints("perm", perm)}};
               }});
  c.push_back({"Slice", [](Rng& r) {
                 const Shape s{dim(r, 4, 9), dim(r, 5, 11), dim(r, 3, 8)};
                 return OpCase{"Slice", {{rand_f32(r, s), false}, {i64({1, -1}), true}, {i64({s[0], 0}), true},
                                         {i64({0, 1}), true}, {i64({1, -2}), true}}};
               }});
  c.push_back({"Concat", [](Rng& r) {
                 const int64_t a = dim(r, 2, 5), b = dim(r, 3, 6);
                 return OpCase{"Concat", {{rand_f32(r, {a, 2, b}), false}, {rand_f32(r, {a, 5, b}), true}, {rand_f32(r, {a, 1, b}), false}},
                               {ir::Attribute::make_int("axis", -2)}};
               }});
  c.push_back({"Split", [](Rng& r) {
                 return OpCase{"Split", {{rand_f32(r, {dim(r, 2, 4), 7, dim(r, 3, 8)}), false}, {i64({2, 5}), true}},
                               {ir::Attribute::make_int("axis", 1)}, 2};
               }});
  c.push_back({"Expand", [](Rng& r) {
                 const int64_t a = dim(r, 2, 6);
                 return OpCase{"Expand", {{rand_f32(r, {a, 1}), false}, {i64({3, a, dim(r, 4, 9)}), true}}};
               }});
  c.push_back({"Pad", [](Rng& r) {
                 return OpCase{"Pad", {{rand_f32(r, {dim(r, 1, 3), dim(r, 3, 6), dim(r, 4, 9)}), false},
                                       {i64({0, 1, 2, 1, -1, 3}), true}, {Tensor::scalar<float>(0.25f), true}}};
               }});
  c.push_back({"Gather", [](Rng& r) {
                 return OpCase{"Gather", {{rand_f32(r, {dim(r, 2, 5), 6, dim(r, 3, 7)}), false}, {i64({5, 0, -1, 2}), true}},
                               {ir::Attribute::make_int("axis", 1)}};
               }});
  for (const char* mode : {"nearest", "linear"})
    c.push_back({"Resize", [mode](Rng& r) {
                   const bool align = dim(r, 0, 1);
                   return OpCase{"Resize",
                                 {{rand_f32(r, {1, dim(r, 1, 3), dim(r, 3, 7), dim(r, 3, 7)}), false}, {Tensor(), false},
                                  {Tensor::from<float>({4}, {1, 1, 2, 1.5f}), true}},
                                 {ir::Attribute::make_string("mode", mode),
                                  ir::Attribute::make_string("coordinate_transformation_mode", align ? "align_corners" : "half_pixel")}};
                 }});
  return c;
}

// The training ops (backends/cuda/ops/training.cpp and the comparisons/Where/SumTo of a
// train_step graph): run on the null device and on CUDA, which has kernels for them.
std::vector<Named> training_cases() {
  std::vector<Named> c;
  auto conv_attrs = [](int64_t s, int64_t p) {
    return std::vector<ir::Attribute>{ir::Attribute::make_ints("strides", {s, s}), ir::Attribute::make_ints("pads", {p, p, p, p})};
  };
  c.push_back({"ConvGradInput", [conv_attrs](Rng& r) {
                 const int64_t n = dim(r, 1, 3), ci = dim(r, 1, 3), m = dim(r, 2, 4), h = dim(r, 6, 10), s = dim(r, 1, 2), p = dim(r, 0, 1);
                 const int64_t oh = (h + 2 * p - 3) / s + 1;
                 return OpCase{"ConvGradInput", {{rand_f32(r, {n, m, oh, oh}), false}, {rand_f32(r, {m, ci, 3, 3}), false},
                                                 {i64({n, ci, h, h}), true}}, conv_attrs(s, p)};
               }});
  c.push_back({"ConvGradWeight", [conv_attrs](Rng& r) {
                 const int64_t n = dim(r, 1, 3), ci = dim(r, 1, 3), m = dim(r, 2, 4), h = dim(r, 6, 10), s = dim(r, 1, 2), p = dim(r, 0, 1);
                 const int64_t oh = (h + 2 * p - 3) / s + 1;
                 return OpCase{"ConvGradWeight", {{rand_f32(r, {n, ci, h, h}), false}, {rand_f32(r, {n, m, oh, oh}), false},
                                                  {i64({m, ci, 3, 3}), true}}, conv_attrs(s, p)};
               }});
  c.push_back({"MaxPoolGrad", [](Rng& r) {
                 const int64_t h = 2 * dim(r, 3, 6);
                 const Shape x{dim(r, 1, 2), dim(r, 1, 4), h, h};
                 return OpCase{"MaxPoolGrad", {{rand_f32(r, x), false}, {rand_f32(r, {x[0], x[1], h / 2, h / 2}), false}},
                               {ir::Attribute::make_ints("kernel_shape", {2, 2}), ir::Attribute::make_ints("strides", {2, 2})}};
               }});
  c.push_back({"SoftmaxCrossEntropyLoss", [](Rng& r) {
                 const int64_t n = dim(r, 4, 20), k = dim(r, 3, 10);
                 std::vector<int64_t> t(static_cast<size_t>(n));
                 for (auto& v : t) v = dim(r, 0, k - 1);
                 return OpCase{"SoftmaxCrossEntropyLoss", {{rand_f32(r, {n, k}), false}, {i64(t), false}}, {}, 2};
               }});
  c.push_back({"SoftmaxCrossEntropyLossGrad", [](Rng& r) {
                 const int64_t n = dim(r, 4, 20), k = dim(r, 3, 10);
                 std::vector<int64_t> t(static_cast<size_t>(n));
                 for (auto& v : t) v = dim(r, 0, k - 1);
                 return OpCase{"SoftmaxCrossEntropyLossGrad",
                               {{Tensor::scalar<float>(0.7f), false}, {rand_f32(r, {n, k}), false}, {i64(t), false}}};
               }});
  for (const char* op : {"Adam", "AdamW"})
    c.push_back({op, [op](Rng& r) {
                   OpCase oc{op, {{Tensor::scalar<float>(0.01f), true}, {Tensor::scalar<int64_t>(dim(r, 1, 5)), false}}, {}, 6};
                   const Shape s0{dim(r, 4, 9), 3}, s1{dim(r, 16, 30)};
                   for (int k = 0; k < 4; ++k) {
                     oc.inputs.push_back({rand_f32(r, s0, k == 3 ? 0.0f : -1.0f, 1.0f), false});
                     oc.inputs.push_back({rand_f32(r, s1, k == 3 ? 0.0f : -1.0f, 1.0f), false});
                   }
                   // inputs are X[2], G[2], V[2], H[2]: interleaved above as (s0, s1) per group
                   if (std::string(op) == "AdamW") oc.attrs.push_back(ir::Attribute::make_float("weight_decay", 0.1));
                   return oc;
                 }});
  c.push_back({"Where", [](Rng& r) {
                 const Shape s = rand_shape(r, 1, 4);
                 Tensor cond = Tensor::empty(DType::kBool, s).value();
                 for (int64_t i = 0; i < cond.numel(); ++i) cond.mut_data<bool>()[i] = dim(r, 0, 1) == 1;
                 return OpCase{"Where", {{cond, false}, {rand_f32(r, s), false}, {rand_f32(r, broadcast_of(r, s)), false}}};
               }});
  // The comparisons (bool outputs). Equal compares x with a copy of it where a coin says so, so
  // that both outcomes occur.
  for (const char* op : {"Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Equal"})
    c.push_back({op, [op](Rng& r) {
                   const Shape s = rand_shape(r, 1, 4);
                   Tensor a = rand_f32(r, s), b = rand_f32(r, s);
                   for (int64_t i = 0; i < a.numel(); ++i)
                     if (dim(r, 0, 1) == 1) b.mut_data<float>()[i] = a.data<float>()[i];
                   return OpCase{op, {{a, false}, {b, false}}};
                 }});
  c.push_back({"SumTo", [](Rng& r) {
                 // Sums a leading and a middle dim; the output has >= 16 elements (placement's cost rule).
                 const Shape s{dim(r, 2, 5), dim(r, 4, 6), dim(r, 2, 7), dim(r, 4, 9)};
                 return OpCase{"SumTo", {{rand_f32(r, s), false}, {i64({s[1], 1, s[3]}), true}}};
               }});
  return c;
}

void run_cases(const std::vector<Named>& all, const std::string& device) {
  for (const Named& n : all) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      Rng rng(seed * 7919u + static_cast<uint32_t>(std::hash<std::string>()(n.op)));
      const OpCase oc = n.gen(rng);
      INFO(n.op << " seed " << seed << " on " << device << ": " << tsr::test::describe(oc));
      auto res = tsr::test::compare_with_cpu(oc, device);
      if (!res.ok()) FAIL(res.status().to_string());
      CHECK(res->device_nodes >= 1);
      CHECK(res->copies >= 1);  // at least the download of the device node's output
      // The null device runs the CPU's own kernels: only its plumbing (placement, uploads, views,
      // device buffers, downloads) can differ, so anything but the CPU's exact bits is a bug there.
      if (device == "null") CHECK(res->max_error == 0);
      CHECK(res->max_error <= res->tolerance_used);
    }
  }
}

}  // namespace

void run_harness(const std::string& device) { run_cases(cases(), device); }

TEST_CASE("null device plumbing: the training-op cases are placed, copied and give the CPU's bits", "[null]") {
  // The null device holds f32 tensors only: the bool-valued cases are CUDA's alone.
  std::vector<Named> f32_cases;
  std::string all;
  for (const Named& n : training_cases())
    if (n.op != "Where" && n.op.find("Greater") != 0 && n.op.find("Less") != 0 && n.op != "Equal") {
      f32_cases.push_back(n);
      all += n.op + ",";
    }
  setenv("TSR_NULL_DEVICE_OPS", all.c_str(), 1);
  run_cases(f32_cases, "null");
  unsetenv("TSR_NULL_DEVICE_OPS");
}

#if TSR_HAVE_CUDA
TEST_CASE("every CUDA kernel matches the CPU kernel", "[cuda]") {
  run_harness("cuda");
  run_cases(training_cases(), "cuda");
}

TEST_CASE("every CUDA kernel has a harness case", "[cuda]") {
  std::set<std::string> covered;
  for (const Named& n : cases()) covered.insert(n.op);
  for (const Named& n : training_cases()) covered.insert(n.op);
  for (const auto& kv : cuda::CudaBackend::op_table().all()) {
    INFO(kv.first);
    CHECK(covered.count(kv.first) == 1);
  }
}
#endif

TEST_CASE("null device plumbing: every harness case is placed, copied and gives the CPU's bits", "[null]") {
  // A plumbing test, not a kernel test: the skeleton device takes the harness's ops and runs the
  // CPU's kernels on its own buffers, so placement, uploads of inputs and constants, views and
  // downloads run without a GPU and must reproduce the CPU's results exactly.
  std::string all;
  std::set<std::string> seen;
  for (const Named& n : cases())
    if (seen.insert(n.op).second) all += n.op + ",";
  setenv("TSR_NULL_DEVICE_OPS", all.c_str(), 1);
  run_harness("null");
  unsetenv("TSR_NULL_DEVICE_OPS");
}

TEST_CASE("null device plumbing: upload, copy, download round-trip the bytes; released buffers are freed", "[null]") {
  auto host = exec::create_backend("cpu");
  REQUIRE(host.ok());
  null_device::NullDevice dev(std::move(*host), {"Relu"});
  Rng rng(5);
  const Tensor x = rand_f32(rng, {3, 5, 7});
  {
    auto up = dev.upload(x);
    REQUIRE(up.ok());
    CHECK(up->shape == x.shape());
    CHECK(up->dtype == DType::kF32);
    CHECK(dev.live_bytes() >= x.nbytes());
    auto dup = dev.copy(*up);
    REQUIRE(dup.ok());
    CHECK(dup->buffer != up->buffer);  // a copy, not an alias
    up->buffer.reset();                // the copy outlives its source
    auto down = dev.download(*dup);
    REQUIRE(down.ok());
    REQUIRE(down->shape() == x.shape());
    CHECK(std::memcmp(down->raw(), x.raw(), x.nbytes()) == 0);
    // A view at an offset (how the Plan hands out parts of a buffer) reads from that offset.
    exec::DeviceTensor tail{dup->buffer, 5 * 7 * sizeof(float), DType::kF32, {2, 5, 7}};
    auto part = dev.download(tail);
    REQUIRE(part.ok());
    CHECK(std::memcmp(part->raw(), x.data<float>() + 5 * 7, part->nbytes()) == 0);
  }
  CHECK(dev.live_bytes() == 0);
}

#if TSR_HAVE_VULKAN
TEST_CASE("every Vulkan kernel matches the CPU kernel", "[vulkan]") { run_harness("vulkan"); }

TEST_CASE("every Vulkan kernel has a harness case", "[vulkan]") {
  std::set<std::string> covered;
  for (const Named& n : cases()) covered.insert(n.op);
  for (const auto& kv : vulkan::VulkanBackend::op_table().all()) {
    INFO(kv.first);
    CHECK(covered.count(kv.first) == 1);
  }
}
#endif

#if TSR_HAVE_VULKAN
TEST_CASE("a validation message fails the run", "[vulkan]") {
  // Needs the Khronos layer (Debian's vulkan-validationlayers, installed by scripts/install_deps.sh
  // and in CI): its absence fails here, since without it no [vulkan] case is checked by validation.
  uint32_t n = 0;
  REQUIRE(vkEnumerateInstanceLayerProperties(&n, nullptr) == VK_SUCCESS);
  std::vector<VkLayerProperties> props(n);
  REQUIRE(vkEnumerateInstanceLayerProperties(&n, props.data()) == VK_SUCCESS);
  bool installed = false;
  for (const VkLayerProperties& p : props) installed |= std::strcmp(p.layerName, "VK_LAYER_KHRONOS_validation") == 0;
  INFO("VK_LAYER_KHRONOS_validation is not installed: apt-get install vulkan-validationlayers");
  REQUIRE(installed);
  // CTest sets VK_INSTANCE_LAYERS for [vulkan]; a run by hand gets it here (each backend creates
  // its own instance, which reads the variable).
  const char* env = std::getenv("VK_INSTANCE_LAYERS");
  const std::string before = env ? env : "";
  if (before.find("VK_LAYER_KHRONOS_validation") == std::string::npos)
    setenv("VK_INSTANCE_LAYERS", before.empty() ? "VK_LAYER_KHRONOS_validation" : (before + ":VK_LAYER_KHRONOS_validation").c_str(), 1);
  auto b = vulkan::VulkanBackend::create();
  if (!env) unsetenv("VK_INSTANCE_LAYERS");
  else setenv("VK_INSTANCE_LAYERS", before.c_str(), 1);
  REQUIRE(b.ok());
  auto buf = (*b)->allocate(64);
  REQUIRE(buf.ok());
  exec::DeviceTensor t{*buf, 0, DType::kF32, {16}};
  vulkan::Binding bad = vulkan::VulkanBackend::binding(t);
  bad.range = VkDeviceSize{1} << 40;  // past the end of the block: VUID-VkDescriptorBufferInfo-range
  const uint32_t push[2] = {0, 0};    // n = 0: the shader touches nothing
  REQUIRE((*b)->context().dispatch("fill", {bad}, push, sizeof push, 1).ok());
  const Status st = (*b)->synchronize();
  INFO(st.to_string());
  CHECK(st.code() == StatusCode::kBackend);
  CHECK(st.message().find("validation") != std::string::npos);
}
#endif
