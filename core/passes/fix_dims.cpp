// Free-dimension overrides (core/passes/fix_dims.h).
#include "core/passes/fix_dims.h"

#include <set>

#include "core/passes/verify_model.h"

namespace tsr::passes {

Status fix_dims(ir::Model& model, const std::vector<std::pair<std::string, int64_t>>& sizes) {
  if (sizes.empty()) return ok_status();
  if (model.graphs.empty()) return invalid_argument("free dimensions: the model has no graph");
  ir::Graph& g = model.graphs[0];
  // The inputs' named dynamic dims: what an override may name.
  std::set<std::string> names;
  for (int32_t id : g.inputs) {
    const ir::TensorInfo& t = g.tensors[static_cast<size_t>(id)];
    for (size_t d = 0; d < t.shape.size() && d < t.dim_names.size(); ++d)
      if (t.shape[d] < 0 && !t.dim_names[d].empty()) names.insert(t.dim_names[d]);
  }
  std::string all;
  for (const std::string& n : names) all += str_cat(all.empty() ? "" : ", ", "\"", n, "\"");
  for (const auto& [name, size] : sizes) {
    if (size < 0) return invalid_argument("free dimension \"", name, "\": size ", size, ", expected >= 0");
    if (!names.count(name))
      return not_found("free dimension \"", name, "\": no input of the model has a dynamic dim of that name (",
                       all.empty() ? "its inputs have no named dynamic dims" : str_cat("named: ", all), ")");
  }
  for (ir::TensorInfo& t : g.tensors) {
    if (t.constant.defined()) continue;
    for (size_t d = 0; d < t.shape.size() && d < t.dim_names.size(); ++d) {
      if (t.shape[d] >= 0 || t.dim_names[d].empty()) continue;
      for (const auto& [name, size] : sizes)
        if (t.dim_names[d] == name) t.shape[d] = size;
    }
  }
  Status st = verify_model(model);
  if (st.ok()) return st;
  std::string given;
  for (const auto& [name, size] : sizes) given += str_cat(given.empty() ? "" : ", ", name, "=", size);
  return Status(st.code() == StatusCode::kInvalidModel ? StatusCode::kInvalidArgument : st.code(),
                str_cat("free dimensions {", given, "}: ", st.message()));
}

}  // namespace tsr::passes
