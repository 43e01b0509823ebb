#include "tools/cli/model_loader.h"

#include "core/io/npy.h"
#include "tessera/onnx.h"
#ifdef TSR_HAVE_ONNX_IMPORT
#include "tools/onnx/onnx_import.h"
#endif

namespace tsr::cli {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Expected<Model> load_model(const std::string& path) {
#ifdef TSR_HAVE_ONNX_IMPORT
  enable_onnx_import();
#endif
  return Model::load(path);
}

Expected<Tensor> load_tensor_file(const std::string& path, ValueKind kind) {
  auto read = [&]() -> Expected<Tensor> {
    if (!ends_with(path, ".pb")) return io::read_npy_file(path);
#ifdef TSR_HAVE_ONNX_IMPORT
    return onnx_import::read_value_proto_file(path, kind);
#else
    (void)kind;
    return unsupported(path, ": reading ONNX TensorProto files needs the ONNX importer (use .npy)");
#endif
  };
  Expected<Tensor> t = read();
  if (t.ok()) return t;
  Status s = t.status();
  // A malformed input file is a bad argument, not a bad model.
  if (s.code() == StatusCode::kInvalidModel) s = Status(StatusCode::kInvalidArgument, s.message());
  if (s.message().find(path) == std::string::npos) s = s.with_context(path);
  return s;
}

}  // namespace tsr::cli
