// Finite-difference cases for the transformer normalization and com.microsoft Gelu-family
// gradient rules (core/ops/grads/transformer_norm.cpp, transformer_act.cpp): RMS norms with
// their axis / scale-broadcast / inv_std_var variants, the skip norms' output 0 with and without
// beta / bias and with a broadcast skip, and the Gelu forms with and without a bias.
#include "tests/unit/grad_check.h"

using namespace tsr;
using namespace tsr::gradcheck;
using ir::Attribute;

namespace {

Attribute axis(int64_t a) { return Attribute::make_int("axis", a); }
Attribute eps(double e) { return Attribute::make_float("epsilon", e); }
const char* kSkipLn = "com.microsoft::SkipLayerNormalization";
const char* kSkipRms = "com.microsoft::SkipSimplifiedLayerNormalization";

}  // namespace

TSR_GRAD_CASES(transformer_norm) {
  std::vector<Case> cases = {
      {"RMSNormalization", "[2,3,5] axis=-1", {x(uniform({2, 3, 5}, 700)), x(uniform({5}, 701))}},
      {"RMSNormalization", "[2,3,4] axis=1, scale [4] broadcast", {x(uniform({2, 3, 4}, 702)), x(uniform({4}, 703))},
       {axis(1), eps(1e-3)}},
      {"RMSNormalization", "[3,4] axis=0, scale fixed", {x(uniform({3, 4}, 704)), fixed(uniform({3, 4}, 705))}, {axis(0)}},
      {"SimplifiedLayerNormalization", "[2,3,5] Y only", {x(uniform({2, 3, 5}, 706)), x(uniform({5}, 707))}},
      {"SimplifiedLayerNormalization", "[2,3,4] Y and inv_std_var (stash f64)",
       {x(uniform({2, 3, 4}, 708)), x(uniform({4}, 709))},
       {Attribute::make_int("stash_type", static_cast<int64_t>(DType::kF64))}, 2},
      {kSkipLn, "[2,3,5] every input", {x(uniform({2, 3, 5}, 710)), x(uniform({2, 3, 5}, 711)), x(uniform({5}, 712)),
                                        x(uniform({5}, 713)), x(uniform({5}, 714))}, {eps(1e-5)}},
      {kSkipLn, "[2,3,4] skip [3,4], no beta/bias", {x(uniform({2, 3, 4}, 715)), x(uniform({3, 4}, 716)),
                                                     x(uniform({4}, 717))}},
      {kSkipLn, "[4,6] bias, no beta", {x(uniform({4, 6}, 718)), x(uniform({4, 6}, 719)), x(uniform({6}, 720)),
                                        omitted(), x(uniform({6}, 721))}, {eps(1e-3)}},
      {kSkipRms, "[2,3,5] with bias", {x(uniform({2, 3, 5}, 722)), x(uniform({2, 3, 5}, 723)), x(uniform({5}, 724)),
                                       x(uniform({5}, 725))}, {eps(1e-5)}},
      {kSkipRms, "[2,3,4] skip [1,3,4]", {x(uniform({2, 3, 4}, 726)), x(uniform({1, 3, 4}, 727)), x(uniform({4}, 728))}},
      {"com.microsoft::Gelu", "[2,5]", {x(uniform({2, 5}, 730, -3, 3))}},
      {"com.microsoft::BiasGelu", "[2,3,4] + [4]", {x(uniform({2, 3, 4}, 731, -3, 3)), x(uniform({4}, 732))}},
      {"com.microsoft::FastGelu", "[2,5] no bias", {x(uniform({2, 5}, 733, -3, 3))}},
      {"com.microsoft::FastGelu", "[2,3,4] + bias [4]", {x(uniform({2, 3, 4}, 734, -3, 3)), x(uniform({4}, 735))}},
      {"com.microsoft::QuickGelu", "default alpha", {x(uniform({2, 5}, 736, -4, 4))}},
      {"com.microsoft::QuickGelu", "alpha 1", {x(uniform({3, 4}, 737, -4, 4))}, {Attribute::make_float("alpha", 1.0)}},
  };
  // The float32 kernels (the Highway row loops), larger step and looser tolerances.
  for (Case c : std::vector<Case>{cases[0], cases[5], cases[8], cases[13], cases[14]}) {
    cases.push_back(as_f32_case(c));
  }
  return cases;
}
