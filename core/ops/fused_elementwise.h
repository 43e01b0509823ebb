// FusedElementwise: a tree of f32 elementwise ops evaluated in one pass over the output, defined
// once for the op's inference (core/ops/families/fused_elementwise.cpp), the pass that creates it
// (core/passes/opt_fuse_elementwise.cpp) and the CPU kernel (backends/cpu/kernels/
// fused_elementwise.cpp). Each unfused op reads and writes a whole tensor; the fused kernel keeps
// the intermediates of a block of outputs in registers/L1 (the loop fusion of XLA's and TVM's
// elementwise fusion, numexpr's blocked evaluation).
//
// The node: FusedElementwise(X0, ..., Xn-1) -> Y, domain "tessera", f32 only. Every input
// broadcasts to Y's shape (ONNX multidirectional broadcasting), Y's shape being the broadcast of
// all inputs. Attributes:
//   ops         strings, required: the steps, in order, by their ONNX op names (kOpNames below)
//   args        ints, required: 3 operands per step (unused ones 0). An operand r >= 0 names a
//               register: the inputs are registers 0..n-1, step k's result is register n + k and
//               may only be read by later steps; r < 0 is the immediate immediates[-r - 1].
//   immediates  floats, optional: scalar constants and op parameters.
// Y is the last step's result. Operands by op, following the ONNX op's inputs and attributes:
//   Add Sub Mul Div Max Min Pow (a, b)        binary, numpy semantics (Pow: b must be an
//                                             immediate 1, 2 or 3, computed as products)
//   Neg Abs Sqrt Reciprocal Exp Log Relu Sigmoid Tanh HardSwish (a)
//   LeakyRelu (a, alpha)  HardSigmoid (a, alpha, beta)  Clip (a, min, max): parameters immediate
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/ir/graph.h"

namespace tsr::ops {

enum class EwOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kMax, kMin, kPow,
  kNeg, kAbs, kSqrt, kReciprocal, kExp, kLog, kRelu, kSigmoid, kTanh, kHardSwish,
  kLeakyRelu, kHardSigmoid, kClip,
};
inline constexpr int kNumEwOps = static_cast<int>(EwOp::kClip) + 1;

// The ONNX op name of each EwOp, indexed by its value.
extern const char* const kEwOpNames[kNumEwOps];
// Operands each op reads (1, 2 or 3), indexed like kEwOpNames.
extern const uint8_t kEwOpArity[kNumEwOps];
// The EwOp named `name`, or false when the name is not a fusable op.
bool ew_op_of(std::string_view name, EwOp* op);

struct EwStep {
  EwOp op = EwOp::kAdd;
  std::array<int16_t, 3> args{};  // operands (see the header comment); unused ones 0
};

// A parsed, checked program. Fixed capacity, so that a kernel holds it without allocating.
struct EwProgram {
  static constexpr int kMaxInputs = 8;
  static constexpr int kMaxSteps = 24;
  static constexpr int kMaxImmediates = 48;
  int n_inputs = 0;
  int n_steps = 0;
  int n_immediates = 0;
  std::array<EwStep, kMaxSteps> steps{};
  std::array<float, kMaxImmediates> immediates{};

  // The immediate an operand names (which must be negative).
  float immediate(int16_t operand) const { return immediates[static_cast<size_t>(-operand - 1)]; }
};

// Parses and checks the program of a FusedElementwise node with `n_inputs` inputs: known op
// names, operand counts, registers read only after they are written, immediates in range,
// parameters immediate where the op needs it (Pow's exponent one of 1, 2, 3), capacity.
// kInvalidModel naming `place` and the step otherwise.
Expected<EwProgram> ew_program_of(const ir::Node& node, const std::string& place, int n_inputs);

// The attributes a FusedElementwise node carries for `program` (the inverse of ew_program_of).
std::vector<ir::Attribute> ew_program_attributes(const EwProgram& program);

}  // namespace tsr::ops
