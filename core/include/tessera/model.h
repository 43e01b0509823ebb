// tsr::Model: a loaded, verified model (public C++ API).
//
//   auto model = tsr::Model::load("model.tsr");   // Expected<Model>; .onnx with tsr::enable_onnx_import()
//   for (const tsr::ValueInfo& in : model->inputs()) std::cout << in.str() << "\n";  // x: f32[1, 3, N]
//
// A Model is immutable and cheap to copy (a reference to shared, read-only data): one Model may
// back any number of Sessions on any threads. Loading runs every check of an untrusted file
// (docs/design.md "Loading untrusted files": the FlatBuffers verifier, index and size checks,
// type and shape inference); a model that loads can be given to Session::create.
//
// Errors (Status codes, docs/cli.md "Exit codes"): kNotFound for a missing file, kInvalidModel for
// malformed bytes or an inconsistent graph (the message names the place, e.g.
// `graph[0].node[12] (Conv "conv_3").input[1]: dtype i64, expected f32`), kUnsupported for ops this
// build lacks (all of them listed in one message) or an ONNX file without the importer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/tensor/tensor.h"

namespace tsr {

namespace ir {
struct Model;
}

// Name and static type of a model input or output. `shape` has one entry per dim, -1 for a
// dynamic one (its symbolic name, if the model gives one, in `dim_names`); `has_shape` false means
// the rank is unknown. For a sequence (`kind` kSequence) dtype and shape describe its elements.
struct ValueInfo {
  std::string name;
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  Shape shape;
  std::vector<std::string> dim_names;  // parallel to shape; "" = unnamed

  // `x: f32[1, 3, height, 320]` (`[*]` for an unknown rank, `seq(f32[2])` for a sequence).
  std::string str() const;
};

class Model {
 public:
  // An empty model (empty() is true); Session::create rejects it.
  Model() = default;
  // Wraps an in-memory graph that has passed passes::verify_model (what io::load_model_file,
  // the ONNX importer, GraphBuilder users and the training tools produce). For code that builds
  // graphs itself; a null pointer gives an empty Model.
  Model(std::shared_ptr<const ir::Model> model);  // NOLINT: implicit, graphs convert where a Model is taken
  Model(std::shared_ptr<ir::Model> model) : Model(std::shared_ptr<const ir::Model>(std::move(model))) {}  // NOLINT

  // Loads a model file: `.onnx` through the ONNX importer (kUnsupported unless
  // enable_onnx_import() was called: tessera/onnx.h), anything else as `.tsr` (memory-mapped;
  // constants are used in place). Every error message names `path`.
  static Expected<Model> load(const std::string& path);
  // Loads `size` bytes, copied: `.tsr` bytes (FlatBuffers file identifier "TSR1") or else an ONNX
  // ModelProto (importer needed, as above). `name` (e.g. a file name) prefixes error messages.
  static Expected<Model> load_bytes(const void* data, size_t size, std::string_view name);
  // Loads `.tsr` bytes without copying them: `data` must stay valid while the Model or any
  // Session made from it lives; `owner` (may be null) is kept alive as long as the constants are.
  // 64-byte aligned data is used in place, other data is copied per constant.
  static Expected<Model> load_tsr_buffer(const void* data, size_t size, std::shared_ptr<const void> owner);

  bool empty() const { return model_ == nullptr; }
  // What Session::run takes and returns, in order: the main graph's inputs and outputs, minus the
  // inputs a signature on the main graph binds to variables and the outputs that update them
  // (a training model's weights). Empty for an empty Model.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // Names of the model's signatures (entry points: "infer", "train_step", ...).
  std::vector<std::string> signature_names() const;

  // The model as `.tsr` bytes (after an ONNX import: the converted model). kInvalidArgument for an
  // empty Model.
  Expected<std::vector<uint8_t>> serialize() const;
  Status save(const std::string& path) const;

  // The graph representation (core/ir/graph.h), for the tools whose job is to show or transform
  // it (inspect, optimize, grad) and for the engine. Precondition: !empty().
  const ir::Model& graph() const { return *model_; }
  const std::shared_ptr<const ir::Model>& graph_ptr() const { return model_; }

 private:
  std::shared_ptr<const ir::Model> model_;
  // Shared by copies: computed once from model_ at construction.
  std::shared_ptr<const std::pair<std::vector<ValueInfo>, std::vector<ValueInfo>>> io_;
};

}  // namespace tsr
