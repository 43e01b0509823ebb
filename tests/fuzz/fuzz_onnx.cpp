// libFuzzer harness: the ONNX importer (protobuf parse, opset normalization, mapping, op checks
// and model verification) on arbitrary bytes. Any Status is a correct outcome.
#include <cstdint>
#include <string>

#include "tools/onnx/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto model = tsr::onnx_import::import_onnx_bytes(bytes, "fuzz.onnx");
  (void)model;
  return 0;
}
