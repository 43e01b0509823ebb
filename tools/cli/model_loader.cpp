#include "tools/cli/model_loader.h"

#include "core/io/npy.h"
#include "core/io/tsr_io.h"
#ifdef TSR_HAVE_ONNX_IMPORT
#include "tools/onnx/onnx_import.h"
#endif

namespace tsr::cli {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Expected<std::shared_ptr<const ir::Model>> load_model(const std::string& path) {
  if (ends_with(path, ".onnx")) {
#ifdef TSR_HAVE_ONNX_IMPORT
    TSR_ASSIGN_OR_RETURN(ir::Model m, onnx_import::import_onnx_file(path));
    return std::shared_ptr<const ir::Model>(std::make_shared<ir::Model>(std::move(m)));
#else
    return unsupported(path, ": this build has no ONNX importer; convert the model elsewhere");
#endif
  }
  auto m = io::load_model_file(path);
  if (!m.ok()) {
    // Keep the file name in every message.
    const Status& s = m.status();
    if (s.message().find(path) == std::string::npos) return s.with_context(path);
    return s;
  }
  return std::shared_ptr<const ir::Model>(std::make_shared<ir::Model>(std::move(m).value()));
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
