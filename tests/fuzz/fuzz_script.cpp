// libFuzzer harness: the script language (lexer, parser, interpreter in eager mode) on arbitrary
// text; the entry point is `main` when the text defines it. Any Status is a correct outcome.
#include <cstdint>
#include <sstream>
#include <string>

#include "core/frontend/script/script.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::ostringstream printed;  // print() output is discarded
  tsr::frontend::script::ScriptOptions opts;
  opts.entry = "main";
  opts.mode = tsr::frontend::script::Mode::kEager;
  opts.out = &printed;
  opts.max_host_iterations = tsr::fuzz::kMaxLoopIterations;
  auto result = tsr::frontend::script::run_script("fuzz.py", text, opts);
  (void)result;
  return 0;
}
