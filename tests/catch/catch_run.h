// Runs Catch2's session over the command line (tests/catch/catch_impl.cpp): what a test
// executable's own main calls after its setup (tests/vulkan/main.cpp); catch_main.cpp is the
// default main. Returns Catch's exit status.
#pragma once

int tsr_catch_run(int argc, char** argv);
