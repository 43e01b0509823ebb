// Einsum equation resolution, shared by the Einsum OpDef (inference) and its kernels.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace tsr::ops {

// Resolves `equation` against the operands' ranks: per-operand label strings with "..." expanded
// into right-aligned ellipsis labels (chars 1..31), and the output labels (explicit after "->",
// else implicit: ellipsis labels then the labels used exactly once, alphabetically).
// kInvalidModel if the equation is malformed or does not fit the ranks.
Status einsum_labels(const std::string& equation, const std::vector<int64_t>& ranks, std::vector<std::string>* in_labels,
                     std::string* out_labels);

}  // namespace tsr::ops
