// The hook through which tsr::Model::load reads ONNX files (internal; public entry point:
// tsr::enable_onnx_import in tessera/onnx.h). The importer lives in tools/onnx, above the core
// (DESIGN: core depends on no tool), so a program that links it installs it here explicitly.
#pragma once

#include <string>

#include "core/ir/graph.h"

namespace tsr::io {

struct OnnxImporter {
  // Both return verified models (passes::verify_model) and name the file in their errors.
  Expected<ir::Model> (*from_file)(const std::string& path) = nullptr;
  Expected<ir::Model> (*from_bytes)(const std::string& bytes, const std::string& name) = nullptr;
};

// Installs `importer` (static storage; null uninstalls). Thread-safe.
void set_onnx_importer(const OnnxImporter* importer);
// The installed importer, or null.
const OnnxImporter* onnx_importer();

}  // namespace tsr::io
