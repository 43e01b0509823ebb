#include "core/ops/fused_elementwise.h"

#include <cmath>

namespace tsr::ops {

const char* const kEwOpNames[kNumEwOps] = {
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow",
    "Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", "Relu", "Sigmoid", "Tanh", "HardSwish",
    "LeakyRelu", "HardSigmoid", "Clip",
};
const uint8_t kEwOpArity[kNumEwOps] = {2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 3};

bool ew_op_of(std::string_view name, EwOp* op) {
  for (int k = 0; k < kNumEwOps; ++k) {
    if (name == kEwOpNames[k]) {
      *op = static_cast<EwOp>(k);
      return true;
    }
  }
  return false;
}

namespace {

// Operands that must be immediates: the parameters of activations and Pow's exponent.
bool needs_immediate(EwOp op, int operand) {
  switch (op) {
    case EwOp::kPow:
    case EwOp::kLeakyRelu:
    case EwOp::kHardSigmoid:
    case EwOp::kClip: return operand >= 1;
    default: return false;
  }
}

}  // namespace

Expected<EwProgram> ew_program_of(const ir::Node& node, const std::string& place, int n_inputs) {
  EwProgram p;
  const ir::Attribute* ops = node.attr("ops");
  const ir::Attribute* args = node.attr("args");
  const ir::Attribute* imm = node.attr("immediates");
  if (!ops || !args) return invalid_model(place, ": FusedElementwise needs the attributes 'ops' and 'args'");
  const size_t n = ops->strings.size();
  if (n == 0) return invalid_model(place, ": FusedElementwise has no steps");
  if (n > EwProgram::kMaxSteps) return invalid_model(place, ": ", n, " steps (at most ", EwProgram::kMaxSteps, ")");
  if (args->ints.size() != 3 * n)
    return invalid_model(place, ": 'args' has ", args->ints.size(), " operands, expected 3 per step (", 3 * n, ")");
  if (n_inputs < 1 || n_inputs > EwProgram::kMaxInputs)
    return invalid_model(place, ": ", n_inputs, " inputs (1 to ", EwProgram::kMaxInputs, ")");
  const size_t n_imm = imm ? imm->floats.size() : 0;
  if (n_imm > EwProgram::kMaxImmediates)
    return invalid_model(place, ": ", n_imm, " immediates (at most ", EwProgram::kMaxImmediates, ")");
  p.n_inputs = n_inputs;
  p.n_steps = static_cast<int>(n);
  p.n_immediates = static_cast<int>(n_imm);
  for (size_t i = 0; i < n_imm; ++i) p.immediates[i] = static_cast<float>(imm->floats[i]);
  for (size_t k = 0; k < n; ++k) {
    EwStep& s = p.steps[k];
    if (!ew_op_of(ops->strings[k], &s.op))
      return invalid_model(place, ": step ", k, ": '", ops->strings[k], "' is not a fusable elementwise op");
    const int arity = kEwOpArity[static_cast<int>(s.op)];
    for (int j = 0; j < 3; ++j) {
      const int64_t r = args->ints[3 * k + static_cast<size_t>(j)];
      if (j >= arity) {
        if (r != 0) return invalid_model(place, ": step ", k, " (", ops->strings[k], "): operand ", j, " is unused but ", r);
        continue;
      }
      const int64_t registers = n_inputs + static_cast<int64_t>(k);  // readable at step k
      if (r >= registers || r < -static_cast<int64_t>(n_imm))
        return invalid_model(place, ": step ", k, " (", ops->strings[k], "): operand ", j, " = ", r,
                             " names neither one of the ", registers, " registers written so far nor one of the ",
                             n_imm, " immediates");
      if (needs_immediate(s.op, j) && r >= 0)
        return invalid_model(place, ": step ", k, " (", ops->strings[k], "): operand ", j, " must be an immediate");
      s.args[static_cast<size_t>(j)] = static_cast<int16_t>(r);
    }
    if (s.op == EwOp::kPow) {
      const float e = p.immediate(s.args[1]);
      if (e != 1.0f && e != 2.0f && e != 3.0f)
        return invalid_model(place, ": step ", k, " (Pow): exponent ", e, " is not 1, 2 or 3");
    }
  }
  return p;
}

std::vector<ir::Attribute> ew_program_attributes(const EwProgram& p) {
  std::vector<std::string> names;
  std::vector<int64_t> args;
  for (int k = 0; k < p.n_steps; ++k) {
    const EwStep& s = p.steps[static_cast<size_t>(k)];
    names.emplace_back(kEwOpNames[static_cast<int>(s.op)]);
    for (int16_t a : s.args) args.push_back(a);
  }
  std::vector<double> imm(p.immediates.begin(), p.immediates.begin() + p.n_immediates);
  std::vector<ir::Attribute> attrs = {ir::Attribute::make_strings("ops", std::move(names)),
                                      ir::Attribute::make_ints("args", std::move(args))};
  if (!imm.empty()) attrs.push_back(ir::Attribute::make_floats("immediates", std::move(imm)));
  return attrs;
}

}  // namespace tsr::ops
