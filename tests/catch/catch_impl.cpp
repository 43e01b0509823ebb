// Catch2's implementation, compiled once for every test executable (it is the slowest file of
// the tests to compile: ~30 s). CATCH_CONFIG_RUNNER builds it without a main; Catch2 v2 declares
// Catch::Session only in this mode, so the session is started here (catch_run.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/catch/catch_run.h"

int tsr_catch_run(int argc, char** argv) { return Catch::Session().run(argc, argv); }
