# Cross toolchain for 32-bit Arm Linux, hard-float, NEON (Debian: apt-get install
# g++-arm-linux-gnueabihf; tests run with qemu-arm-static from qemu-user-static). The armv7
# preset (CMakePresets.json) uses it; CI builds the minimal runtimes with it and runs them on
# their models (scripts/test.sh, stage armv7):
#   cmake --preset armv7 && cmake --build --preset armv7
# -mfp16-format=ieee: Highway's NEON target uses __fp16, which 32-bit GCC defines only with a
# half-precision format chosen.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(TSR_CROSS_TRIPLE arm-linux-gnueabihf)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee")
include(${CMAKE_CURRENT_LIST_DIR}/cross_common.cmake)
