# The CUDA backend (included from the top CMakeLists.txt after the tessera target).
# TSR_CUDA: AUTO builds it when CMake finds nvcc and the CUDA toolkit (cudart + cuBLAS), ON
# requires them, OFF leaves it out. The kernels (backends/cuda/kernels/*.cu) are few on purpose:
# nvcc compiles each once per architecture in TSR_CUDA_ARCHITECTURES, and that is what the CUDA
# build costs CI (measured in bench/results/ci-stages.md). Host code (ops/*.cpp, the backend) is plain C++.
set(TSR_CUDA "AUTO" CACHE STRING "CUDA backend: AUTO, ON or OFF")
set_property(CACHE TSR_CUDA PROPERTY STRINGS AUTO ON OFF)
# Turing, Ampere (A100, consumer), Ada, Hopper: real code for each (CUDA 13 dropped < 7.5), and
# PTX of the newest for later GPUs (the driver JIT-compiles it).
set(TSR_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90" CACHE STRING "CUDA architectures of the CUDA backend")
set(TSR_HAVE_CUDA OFF)
if(NOT EMSCRIPTEN AND NOT CMAKE_CROSSCOMPILING AND NOT TSR_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cublas)
    set(TSR_HAVE_CUDA ON)
  elseif(TSR_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TSR_CUDA=ON but nvcc or the CUDA toolkit (cudart, cuBLAS) was not found "
                        "(install the CUDA toolkit in /usr/local/cuda or set CMAKE_CUDA_COMPILER)")
  else()
    message(STATUS "CUDA backend: off (nvcc or the CUDA toolkit not found)")
  endif()
endif()

if(TSR_HAVE_CUDA)
  # nvcc needs a host compiler it supports; g++-12 is Debian 12's and CUDA 13 accepts it.
  if(NOT CMAKE_CUDA_HOST_COMPILER AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${TSR_CUDA_ARCHITECTURES})
  enable_language(CUDA)
  message(STATUS "CUDA backend: on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${TSR_CUDA_ARCHITECTURES})")
  set(cu_dir ${CMAKE_SOURCE_DIR}/backends/cuda)
  file(GLOB cu_kernels CONFIGURE_DEPENDS ${cu_dir}/kernels/*.cu)
  file(GLOB cu_sources CONFIGURE_DEPENDS ${cu_dir}/*.cpp ${cu_dir}/ops/*.cpp)
  # The kernels build as their own object library: CUDA 17 (the library's C++20 is not a CUDA
  # dialect nvcc has here) and the architectures set on it alone; launch.h is their only header.
  add_library(tessera_cuda_kernels OBJECT ${cu_kernels})
  set_target_properties(tessera_cuda_kernels PROPERTIES CUDA_ARCHITECTURES "${TSR_CUDA_ARCHITECTURES}"
    CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON POSITION_INDEPENDENT_CODE ON)
  target_include_directories(tessera_cuda_kernels PRIVATE ${CMAKE_SOURCE_DIR})
  target_compile_options(tessera_cuda_kernels PRIVATE $<$<CONFIG:Release>:-O3>)
  target_sources(tessera PRIVATE $<TARGET_OBJECTS:tessera_cuda_kernels> ${cu_sources})
  # cuBLAS is loaded with dlopen by the backend (cublas_api.h: linking it costs every process
  # ~215 MB of resident memory); its headers are still needed, and the path it is loaded from.
  target_link_libraries(tessera PUBLIC CUDA::cudart ${CMAKE_DL_LIBS})
  get_target_property(cublas_lib CUDA::cublas IMPORTED_LOCATION)
  get_filename_component(cublas_real ${cublas_lib} REALPATH)
  get_filename_component(cublas_dir ${cublas_real} DIRECTORY)
  get_filename_component(cublas_name ${cublas_real} NAME)
  string(REGEX REPLACE "^(libcublas\\.so\\.[0-9]+).*" "\\1" cublas_soname ${cublas_name})
  set_property(SOURCE ${cu_dir}/cublas_api.cpp APPEND PROPERTY COMPILE_DEFINITIONS
    TSR_CUBLAS_SONAME="${cublas_soname}" TSR_CUBLAS_PATH="${cublas_dir}/${cublas_soname}")
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/backends/backends.cpp APPEND PROPERTY COMPILE_DEFINITIONS TSR_HAVE_CUDA=1)
endif()
