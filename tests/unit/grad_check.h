// The gradient-check harness: every op with a gradient rule is checked against central finite
// differences in float64. Each rule family's test file lists its cases with TSR_GRAD_CASES; one
// test (grad_check.cpp) runs every case and fails when an op has a rule but no case.
//
// A case is one node with given inputs and attributes. The scalar checked is
//   L = sum_k sum(Y_k * R_k)
// over the node's floating-point outputs Y_k, with fixed random weights R_k (so every output
// element matters with a distinct weight). The analytic gradient comes from passes::
// gradient_model (the graph pass), the reference from (L(x + h e_i) - L(x - h e_i)) / 2h.
#pragma once

#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/tensor/tensor.h"

namespace tsr::gradcheck {

struct Input {
  Tensor value;          // undefined = an omitted optional input
  bool wrt = true;       // differentiate with respect to it (floating-point inputs only)
  bool constant = false; // a graph constant (attribute-like inputs: axes, shapes, indices)
};
inline Input x(Tensor t) { return {std::move(t), true, false}; }       // differentiated input
inline Input fixed(Tensor t) { return {std::move(t), false, false}; }  // input, not differentiated
inline Input cst(Tensor t) { return {std::move(t), false, true}; }     // constant
inline Input omitted() { return {Tensor(), false, false}; }

struct Case {
  std::string op;
  std::string label;  // what the case covers ("broadcast", "groups=2", ...)
  std::vector<Input> inputs;
  std::vector<ir::Attribute> attrs;
  size_t num_outputs = 1;
  double atol = 1e-6, rtol = 1e-5;
  double step = 1e-6;  // finite-difference step h
};

using CaseFn = std::vector<Case> (*)();
struct Registrar {
  Registrar(const char* family, CaseFn fn);
};
struct Family {
  const char* name;
  CaseFn cases;
};
std::vector<Family>& families();

// Uniform values in [lo, hi) (float64), deterministic per seed.
Tensor uniform(const Shape& shape, uint64_t seed, double lo = -1.0, double hi = 1.0);
// Like uniform but with |v| >= margin (for ops with a kink at 0: Relu, Abs, ...).
Tensor away_from_zero(const Shape& shape, uint64_t seed, double margin = 0.1, double hi = 1.0);

// t (any float dtype) converted to float32: for cases that check the float32 kernels (with a
// larger step and tolerances than the float64 default).
Tensor as_f32(const Tensor& t);
// Case c with its defined float inputs cast to float32, " (f32)" appended to its label, and the
// larger step (1e-2) and looser tolerances a float32 finite difference needs (rounding ~1e-7 / step).
Case as_f32_case(Case c, double atol = 2e-3, double rtol = 2e-2);

// Runs one case; returns "" on success, else a message with the worst element.
std::string check(const Case& c);

// Compares the gradients of the case with its inputs cast to float32, computed on `num_threads`
// threads (the threaded kernel paths), against the float64 ones on one thread; "" or the worst
// mismatch.
std::string check_f32(const Case& c, int num_threads, double atol = 1e-4, double rtol = 1e-4);

// The same check for a whole model whose first output is the scalar loss: `feeds` are its
// inputs; the gradient is taken with respect to the inputs named in `wrt`.
std::string check_model(const ir::Model& m, const std::vector<Tensor>& feeds, const std::vector<std::string>& wrt,
                        double atol = 1e-6, double rtol = 1e-5, double step = 1e-6);

}  // namespace tsr::gradcheck

#define TSR_GRAD_CASES_CAT2(a, b) a##b
#define TSR_GRAD_CASES_CAT(a, b) TSR_GRAD_CASES_CAT2(a, b)
// TSR_GRAD_CASES(elementwise) { return {Case{...}, ...}; }
#define TSR_GRAD_CASES(family)                                                                    \
  static std::vector<::tsr::gradcheck::Case> TSR_GRAD_CASES_CAT(family, _grad_cases)();           \
  static ::tsr::gradcheck::Registrar TSR_GRAD_CASES_CAT(family, _grad_registrar)(                 \
      #family, &TSR_GRAD_CASES_CAT(family, _grad_cases));                                          \
  static std::vector<::tsr::gradcheck::Case> TSR_GRAD_CASES_CAT(family, _grad_cases)()
