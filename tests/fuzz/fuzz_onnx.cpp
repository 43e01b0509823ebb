// libFuzzer harness: the ONNX importer (protobuf parse, opset normalization, mapping, op checks
// and model verification) on arbitrary bytes. Any Status is a correct outcome.
#include <cstdint>
#include <string>

#include "tools/onnx/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // libFuzzer stops at 2 GB of RSS; a valid model asking more (a sparse tensor's dense shape)
  // must end as kResource from the importer's budget, below that.
  tsr::onnx_import::ImportOptions options;
  options.max_memory_bytes = size_t{512} << 20;
  auto model = tsr::onnx_import::import_onnx_bytes(bytes, "fuzz.onnx", options);
  (void)model;
  return 0;
}
