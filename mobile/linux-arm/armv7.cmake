# Cross toolchain for 32-bit Arm Linux, hard-float, NEON (Debian: apt-get install
# g++-arm-linux-gnueabihf; tests run with qemu-arm-static from qemu-user-static):
#   cmake -S . -B build/armv7 -G Ninja -DCMAKE_TOOLCHAIN_FILE=mobile/linux-arm/armv7.cmake \
#         -DTSR_BUILD_TOOLS=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
# Not built in CI (the aarch64 preset is); see README "On the edge".
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7-a)
set(TSR_CROSS_TRIPLE arm-linux-gnueabihf)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
include(${CMAKE_CURRENT_LIST_DIR}/cross_common.cmake)
