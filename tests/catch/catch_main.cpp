// The default main of the test executables (linked from the tessera_catch library only when the
// executable defines none).
#include "tests/catch/catch_run.h"

int main(int argc, char* argv[]) { return tsr_catch_run(argc, argv); }
