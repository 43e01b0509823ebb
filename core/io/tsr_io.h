// Reading and writing .tsr model files (schema/tessera.fbs, rules in schema/README.md).
//
// Loading is safe on untrusted bytes (DESIGN.md §4): the FlatBuffers Verifier runs first, then
// the format version and every index, size and reference is checked, then passes::verify_model runs
// the semantic checks (ops known, graph acyclic, produced once, dtypes/shapes consistent with
// each OpDef). Every error names its place, e.g.
//   graph[0].node[12] (Conv "conv_3").input[1]: dtype i64, expected f32
// and is kInvalidModel (kUnsupported for ops this build lacks, kNotFound for a missing file).
// Constant data is not copied: tensors wrap the mapped/owned file bytes, which the returned Model
// keeps alive.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace tsr::io {

// Maps (or reads) the file and loads it as above.
Expected<ir::Model> load_model_file(const std::string& path);
// Loads from bytes the caller owns; `owner` is kept alive by the model's constant tensors.
// `data` must be 64-byte aligned for constants to be used in place (otherwise they are copied).
Expected<ir::Model> load_model_buffer(const uint8_t* data, size_t size, std::shared_ptr<const void> owner);
// Format-level decoding only: the Verifier, version, enum values, dims and every buffer range are
// checked as above, but passes::verify_model is NOT run (ops may be unknown, the graph may be cyclic).
// For tools that show models this build cannot run (`tessera inspect`) and for tests; run
// passes::verify_model before executing the result.
Expected<ir::Model> decode_model_buffer(const uint8_t* data, size_t size, std::shared_ptr<const void> owner);
// Serializes: FlatBuffer root followed by the 64-byte-aligned constant segment.
Expected<std::vector<uint8_t>> serialize_model(const ir::Model& model);
Status save_model_file(const ir::Model& model, const std::string& path);

}  // namespace tsr::io
