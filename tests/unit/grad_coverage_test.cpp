// Every op with a gradient rule has at least one finite-difference case (tests/unit/*_grad_test.cpp,
// registered through grad_check.h). Its own file: the wasm and cross builds compile only some of
// the *_grad_test.cpp files (tests/CMakeLists.txt), where this check would not hold.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "core/ops/op_def.h"
#include "tests/unit/grad_check.h"

using namespace tsr;

TEST_CASE("every op with a gradient rule has a finite-difference case", "[grad]") {
  std::set<std::string> covered;
  for (const auto& fam : gradcheck::families())
    for (const auto& c : fam.cases()) covered.insert(c.op);
  for (const auto& [name, def] : ops::OpRegistry::global().all()) {
    if (!def.grad) continue;
    INFO("op " << name << " has a gradient rule but no case in tests/unit/*_grad_test.cpp");
    CHECK(covered.count(name) == 1);
  }
}
