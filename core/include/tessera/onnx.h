// ONNX import for tsr::Model::load (public C++ API). Defined in the tessera_onnx library
// (tools/onnx, over Debian's libonnx and libprotobuf), which a program links to read .onnx files.
//
//   tsr::enable_onnx_import();                     // once, before loading
//   auto model = tsr::Model::load("model.onnx");   // imported: opset normalized to 17, verified
//
// What the import does and rejects: tools/onnx/onnx_import.h. Without this call Model::load and
// Model::load_bytes reject ONNX input with kUnsupported. Thread-safe; calling it again is a no-op.
#pragma once

namespace tsr {

void enable_onnx_import();

}  // namespace tsr
