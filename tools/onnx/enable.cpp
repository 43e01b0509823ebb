// tsr::enable_onnx_import (core/include/tessera/onnx.h): installs this importer as the one
// tsr::Model::load uses for ONNX files.
#include "core/io/onnx_importer.h"
#include "tessera/onnx.h"
#include "tools/onnx/onnx_import.h"

namespace tsr {
namespace {

Expected<ir::Model> from_file(const std::string& path) { return onnx_import::import_onnx_file(path); }
Expected<ir::Model> from_bytes(const std::string& bytes, const std::string& name) {
  return onnx_import::import_onnx_bytes(bytes, name);
}

constexpr io::OnnxImporter kImporter{from_file, from_bytes};

}  // namespace

void enable_onnx_import() { io::set_onnx_importer(&kImporter); }

}  // namespace tsr
