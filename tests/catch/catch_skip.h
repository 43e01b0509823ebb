// Catch2 v2 has no SKIP: a test case that cannot run in this build or on this machine calls
// tsr_skip(reason) and returns. The reason is printed ("SKIPPED: <test case>: <reason>"), and when
// every test case of a run was skipped (CTest runs one case per process) the run exits 77, which the
// unit tests' CTest registration counts as skipped (SKIP_RETURN_CODE); a run of many cases (the
// wasm build's single process) lists the skipped ones after Catch's summary and keeps its status.
// Call it only from inside a running TEST_CASE.
#pragma once

#include <string>

void tsr_skip(const std::string& reason);
