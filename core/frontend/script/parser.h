// Recursive-descent parser of the script language (Python's grammar, restricted). Constructs
// outside the subset (class, lambda, with, try, import, comprehensions, slicing, ...) are
// rejected with a diagnostic that names the construct (code kUnsupported); malformed syntax gives
// a diagnostic with code kInvalidArgument. Both carry file:line:col and a caret line.
#pragma once

#include <string>

#include "core/frontend/script/ast.h"

namespace tsr::frontend::script {

Expected<Module> parse_module(std::string file_name, std::string text);

}  // namespace tsr::frontend::script
