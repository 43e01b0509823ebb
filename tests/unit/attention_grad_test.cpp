// Finite-difference cases for the ONNX Attention gradient rule (core/ops/grads/attention.cpp):
// 4-D and 3-D layouts, GQA / MQA head groups, causal, float and bool masks (a float mask is also
// differentiated, summed over the dims it broadcasts along), a set scale, and gradients flowing
// into present_key / present_value. The attention kernels compute in f32 (f16 is converted to f32
// and back), so every case runs in f32 with a larger step and looser tolerances (rounding ~1e-7 / step).
#include <catch2/catch.hpp>

#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {

Input xf(const Shape& s, uint64_t seed) { return x(as_f32(uniform(s, seed, -1.5, 1.5))); }

Case f32(Case c) {
  c.step = 1e-2;
  c.atol = 2e-3;
  c.rtol = 2e-2;
  return c;
}

Attribute heads(const char* name, int64_t n) { return Attribute::make_int(name, n); }

}  // namespace

TSR_GRAD_CASES(attention) {
  const Attribute causal = Attribute::make_int("is_causal", 1);
  const Tensor bool_mask = Tensor::from<bool>({3, 5}, {true, false, true, true, true, true, true, false, true, false,
                                                       false, true, true, true, true});
  return {
      f32({"Attention", "4-D [1,2,3,4] x [1,2,5,4], Hv 3", {xf({1, 2, 3, 4}, 1), xf({1, 2, 5, 4}, 2), xf({1, 2, 5, 3}, 3)}}),
      f32({"Attention", "4-D causal, scale 0.7",
           {xf({2, 2, 4, 3}, 4), xf({2, 2, 4, 3}, 5), xf({2, 2, 4, 3}, 6)},
           {causal, Attribute::make_float("scale", 0.7)}}),
      f32({"Attention", "3-D GQA 4 q / 2 kv heads, Hv 3",
           {xf({2, 3, 8}, 7), xf({2, 4, 4}, 8), xf({2, 4, 6}, 9)},
           {heads("q_num_heads", 4), heads("kv_num_heads", 2)}}),
      f32({"Attention", "3-D MQA causal",
           {xf({1, 4, 6}, 10), xf({1, 4, 2}, 11), xf({1, 4, 2}, 12)},
           {heads("q_num_heads", 3), heads("kv_num_heads", 1), causal}}),
      f32({"Attention", "float mask [1,2,3,5] (constant)",
           {xf({1, 2, 3, 4}, 13), xf({1, 2, 5, 4}, 14), xf({1, 2, 5, 4}, 15), cst(as_f32(uniform({1, 2, 3, 5}, 16)))}}),
      f32({"Attention", "float mask [3,5] differentiated, GQA 2 q / 1 kv heads",
           {xf({2, 2, 3, 4}, 23), xf({2, 1, 5, 4}, 24), xf({2, 1, 5, 3}, 25), xf({3, 5}, 26)}}),
      f32({"Attention", "bool mask [3,5] (constant) and causal-free",
           {xf({2, 1, 3, 4}, 17), xf({2, 1, 5, 4}, 18), xf({2, 1, 5, 2}, 19), cst(bool_mask)}}),
      f32({"Attention", "present_key / present_value outputs",
           {xf({1, 2, 3, 4}, 20), xf({1, 2, 3, 4}, 21), xf({1, 2, 3, 4}, 22)}, {causal}, 3}),
  };
}
