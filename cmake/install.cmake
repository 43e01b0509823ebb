# `cmake --install`: libtessera.a, the public headers, TesseraConfig.cmake (find_package(Tessera)
# -> Tessera::tessera) and tessera.pc, all in the component tessera_dev (`cmake --install B
# --component tessera_dev` installs only those; a plain `cmake --install` installs the tools too).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Public headers: the C API and the C++ API under include/tessera/, plus the core headers the C++
# API includes by their repository path ("core/tensor/tensor.h") under include/tessera/core/.
install(FILES ${CMAKE_SOURCE_DIR}/core/include/tessera/tessera_c.h ${CMAKE_SOURCE_DIR}/core/include/tessera/tessera.h
              ${CMAKE_SOURCE_DIR}/core/include/tessera/model.h ${CMAKE_SOURCE_DIR}/core/include/tessera/session.h
              ${CMAKE_SOURCE_DIR}/core/include/tessera/onnx.h ${CMAKE_SOURCE_DIR}/core/include/tessera/eager.h
              ${CMAKE_SOURCE_DIR}/core/include/tessera/generate.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera COMPONENT tessera_dev)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/core/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera/core COMPONENT tessera_dev
        FILES_MATCHING PATTERN "*.h" PATTERN "include" EXCLUDE PATTERN "c_api" EXCLUDE)
target_include_directories(tessera PUBLIC
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tessera>)

install(TARGETS tessera EXPORT TesseraTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tessera_dev)
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera COMPONENT tessera_dev)

if(TARGET hwy::hwy)
  set(TSR_CONFIG_DEPENDENCIES "find_dependency(hwy)")
  set(TSR_PC_EXTRA_LIBS "-lhwy -lstdc++ -lm -pthread")
else()
  set(TSR_CONFIG_DEPENDENCIES "")
  set(TSR_PC_EXTRA_LIBS "-lstdc++ -lm -pthread")
endif()
# A library built with the Vulkan backend links the Vulkan loader (backends/vulkan/vulkan.cmake).
if(TSR_HAVE_VULKAN)
  string(APPEND TSR_CONFIG_DEPENDENCIES "\nfind_dependency(Vulkan)")
  set(TSR_PC_EXTRA_LIBS "-lvulkan ${TSR_PC_EXTRA_LIBS}")
endif()
# ... and the CUDA backend the CUDA runtime (cuBLAS is loaded at run time: backends/cuda/cublas_api.h).
if(TSR_HAVE_CUDA)
  string(APPEND TSR_CONFIG_DEPENDENCIES "\nfind_dependency(CUDAToolkit)")
  set(TSR_PC_EXTRA_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -Wl,-rpath,${CUDAToolkit_LIBRARY_DIR} -lcudart -ldl ${TSR_PC_EXTRA_LIBS}")
endif()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/TesseraConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/TesseraConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/TesseraConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/TesseraConfig.cmake ${CMAKE_BINARY_DIR}/cmake/TesseraConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera COMPONENT tessera_dev)
# Relocatable (`cmake --install --prefix` anywhere): the prefix is relative to the .pc's folder.
file(RELATIVE_PATH TSR_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_SOURCE_DIR}/cmake/tessera.pc.in ${CMAKE_BINARY_DIR}/cmake/tessera.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT tessera_dev)
