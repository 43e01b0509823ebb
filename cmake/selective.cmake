# Selective build (-DTSR_SELECTED_OPS="a.ops;b.ops"): for each op list written by
# `tessera ops --used MODEL.tsr... -o NAME.ops` (an op type per line with the dtypes its nodes
# use), a minimal runtime `tessera_min_<NAME>`: the C API test program (tests/c_api/c_api_test.c,
# a complete model runner) with only those ops' definitions and only those ops' kernels for those
# dtypes, no gradient rules, importer, script front end or training. mobile/selective/CMakeLists.txt
# builds them (how, and what it costs, is written there). NAME should be a models.json name:
# `selective: NAME` then runs the minimal runtime on that model against onnxruntime's outputs.
# Default: the two lists whose sizes bench/results/minimal-runtimes.md reports.
set(TSR_SELECTED_OPS "mobile/selective/ppocr_v4_rec.ops;mobile/selective/silero_vad_legacy.ops" CACHE STRING
    "Op lists (files from `tessera ops --used`) to build minimal runtimes for; empty for none")

if(TSR_SELECTED_OPS)
  add_subdirectory(${CMAKE_SOURCE_DIR}/mobile/selective ${CMAKE_BINARY_DIR}/selective)
endif()
