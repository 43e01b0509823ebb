# Selective build (-DTSR_SELECTED_OPS="a.ops;b.ops"): for each op list written by
# `tessera ops --used MODEL.tsr... -o NAME.ops`, a minimal runtime `tessera_min_<NAME>`: the C API
# test program (tests/c_api/c_api_test.c, a complete model runner) linked against the same
# libtessera.a objects, but with generated registration functions that call only the op and CPU
# kernel families defining a listed op, and none of the gradient rules. The linker then pulls no
# object of the other families (static archive members are linked only when referenced), and
# --gc-sections drops unreferenced sections (functions too in builds with -ffunction-sections, as
# the aarch64 preset); nothing references the ONNX importer (tools/), the script front end or
# training. One configuration, no second build of the library: only three small generated files
# and a link per list. NAME should be a models.json name: `selective: NAME` then runs the minimal
# runtime on that model against onnxruntime's outputs.
# Default: the two lists README "On the edge" reports sizes for (cheap: generated files + links).
set(TSR_SELECTED_OPS "mobile/selective/ppocr_v4_rec.ops;mobile/selective/silero_vad_legacy.ops" CACHE STRING
    "Op lists (files from `tessera ops --used`) to build minimal runtimes for; empty for none")

# Family sources (op definitions or CPU kernels) that mention one of `ops` as a string literal.
function(tsr_families_for_ops OUT_VAR OPS)
  set(found "")
  foreach(src ${ARGN})
    file(READ ${src} content)
    foreach(op ${OPS})
      string(FIND "${content}" "\"${op}\"" pos)
      if(pos GREATER -1)
        list(APPEND found ${src})
        break()
      endif()
    endforeach()
  endforeach()
  set(${OUT_VAR} ${found} PARENT_SCOPE)
endfunction()

foreach(list_file ${TSR_SELECTED_OPS})
  get_filename_component(list_file ${list_file} ABSOLUTE BASE_DIR ${CMAKE_SOURCE_DIR})
  if(NOT EXISTS ${list_file})
    message(FATAL_ERROR "TSR_SELECTED_OPS: ${list_file} does not exist (write it with `tessera ops --used MODEL.tsr -o FILE`)")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${list_file})
  get_filename_component(sel ${list_file} NAME_WE)
  file(STRINGS ${list_file} sel_ops REGEX "^[^#]")
  list(TRANSFORM sel_ops STRIP)
  tsr_families_for_ops(op_fams "${sel_ops}" ${TSR_OP_FAMILIES})
  tsr_families_for_ops(kernel_fams "${sel_ops}" ${TSR_CPU_KERNEL_FAMILIES})
  set(dir ${TSR_GEN_DIR}/selected/${sel})
  tsr_generate_register(${dir}/register_ops.cpp tsr::ops register_all_ops OpRegistry
    core/ops/op_def.h register_ _ops ${op_fams})
  tsr_generate_register(${dir}/register_grads.cpp tsr::ops register_all_grads OpRegistry
    core/ops/op_def.h register_ _grads)
  tsr_generate_register(${dir}/register_kernels.cpp tsr::cpu register_all_kernels KernelRegistry
    backends/cpu/cpu_backend.h register_ _kernels ${kernel_fams})
  list(LENGTH sel_ops n_ops)
  list(LENGTH op_fams n_op_fams)
  list(LENGTH kernel_fams n_kernel_fams)
  message(STATUS "selective build ${sel}: ${n_ops} ops from ${n_op_fams} op families and ${n_kernel_fams} kernel families")

  add_executable(tessera_min_${sel} ${CMAKE_SOURCE_DIR}/tests/c_api/c_api_test.c ${CMAKE_SOURCE_DIR}/tests/c_api/npy.c
    ${dir}/register_ops.cpp ${dir}/register_grads.cpp ${dir}/register_kernels.cpp)
  set_target_properties(tessera_min_${sel} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
  target_link_libraries(tessera_min_${sel} PRIVATE tessera m)
  target_link_options(tessera_min_${sel} PRIVATE -Wl,--gc-sections)
  add_dependencies(tessera_min_${sel} tessera_schema)
  if(TSR_BUILD_TESTS)
    add_test(NAME "selective: ${sel}" COMMAND tessera_min_${sel} ${CMAKE_BINARY_DIR}/tests/c_api/models/${sel})
    set_tests_properties("selective: ${sel}" PROPERTIES FIXTURES_REQUIRED c_api_models SKIP_RETURN_CODE 77 TIMEOUT 900)
  endif()
endforeach()
