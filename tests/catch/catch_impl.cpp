// Catch2's implementation, compiled once for every test executable (it is the slowest file of
// the tests to compile: ~30 s). CATCH_CONFIG_RUNNER builds it without a main; Catch2 v2 declares
// Catch::Session only in this mode, so the session is started here (catch_run.h), with the
// skipped-case accounting of catch_skip.h.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>
#include <set>

#include "tests/catch/catch_run.h"
#include "tests/catch/catch_skip.h"

namespace {

size_t g_cases_started = 0;
std::set<std::string> g_skipped;  // test case names

// Counts the test cases that run (once per case, however many sections it has).
struct CaseCounter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    ++g_cases_started;
    TestEventListenerBase::testCaseStarting(info);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(CaseCounter)

void tsr_skip(const std::string& reason) {
  const std::string name = Catch::getResultCapture().getCurrentTestName();
  std::cout << "SKIPPED: " << name << ": " << reason << std::endl;
  g_skipped.insert(name);
}

int tsr_catch_run(int argc, char** argv) {
  const int rc = Catch::Session().run(argc, argv);
  if (g_skipped.empty()) return rc;
  std::cout << g_skipped.size() << " of " << g_cases_started << " test case(s) skipped:\n";
  for (const std::string& name : g_skipped) std::cout << "  " << name << "\n";
  return rc == 0 && g_skipped.size() == g_cases_started ? 77 : rc;
}
