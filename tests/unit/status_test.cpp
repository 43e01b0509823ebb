// Status and Expected<T> (core/base/status.h).
#include <catch2/catch.hpp>

#include <string>

#include "core/base/status.h"

using tsr::Expected;
using tsr::Status;
using tsr::StatusCode;

namespace {
Expected<int> half(int v) {
  if (v % 2) return tsr::invalid_argument("odd value ", v);
  return v / 2;
}
Expected<int> forwards_ok_status() { return tsr::ok_status(); }  // the bug the contract catches
}  // namespace

TEST_CASE("Expected holds a value or a non-ok Status") {
  auto a = half(8);
  REQUIRE(a.ok());
  CHECK(*a == 4);
  CHECK(a.status().ok());
  auto b = half(3);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == StatusCode::kInvalidArgument);
  CHECK(b.status().message() == "odd value 3");
}

TEST_CASE("Expected from an OK Status is an internal error, not a valueless success") {
  auto r = forwards_ok_status();
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.status().ok());  // ok() and status() agree
  CHECK(r.status().code() == StatusCode::kInternal);
  CHECK_THAT(r.status().message(), Catch::Contains("OK status"));
}

TEST_CASE("Status with_context prefixes the place and keeps the code") {
  const Status s = tsr::unsupported("no kernel").with_context("graph[0].node[3] (Foo \"f\")");
  CHECK(s.code() == StatusCode::kUnsupported);
  CHECK(s.message() == "graph[0].node[3] (Foo \"f\"): no kernel");
  CHECK(s.to_string().find("no kernel") != std::string::npos);
}
