# Cross toolchain for 64-bit Arm Linux (Debian: apt-get install g++-aarch64-linux-gnu
# qemu-user-static). Used by the `aarch64` preset:
#   cmake --preset aarch64 && cmake --build build/aarch64 -j2 && ctest --test-dir build/aarch64
# Highway compiles its NEON target statically (HWY_COMPILE_ONLY_STATIC; armv8-a baseline);
# tests run under qemu-aarch64-static with the cross sysroot's loader and libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(TSR_CROSS_TRIPLE aarch64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/cross_common.cmake)
