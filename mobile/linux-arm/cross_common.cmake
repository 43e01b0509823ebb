# Shared by aarch64.cmake and armv7.cmake: Debian's <triple>-gcc cross compilers, the sysroot
# /usr/<triple> for libraries, host programs (flatc) from the host, and qemu as the emulator so
# that CTest runs the cross-built tests on this machine.
set(CMAKE_C_COMPILER ${TSR_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TSR_CROSS_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${TSR_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(_tsr_qemu qemu-aarch64-static)
else()
  set(_tsr_qemu qemu-arm-static)
endif()
find_program(TSR_QEMU ${_tsr_qemu})
if(TSR_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TSR_QEMU} -L /usr/${TSR_CROSS_TRIPLE})
endif()
