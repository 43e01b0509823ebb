// Calibration for `tessera quantize --mode static` (onnx_quantize.h): runs the f32 model through
// the public API with the activations to quantize added as graph outputs, and reduces each to a
// range (min-max, or two-sided percentiles over every value of every sample).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "core/io/npy.h"
#include "tessera/model.h"
#include "tessera/onnx.h"
#include "tessera/session.h"
#include "tools/onnx/onnx_import.h"
#include "tools/onnx/onnx_quantize.h"
#include "tools/onnx/onnx_tensor.h"

namespace tsr::onnx_quantize {

namespace {

namespace fs = std::filesystem;

struct GraphInput {
  std::string name;
  int32_t elem_type = 0;
  std::vector<int64_t> dims;  // -1 where symbolic
};

std::vector<GraphInput> graph_inputs(const onnx::GraphProto& g) {
  std::unordered_set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  std::vector<GraphInput> out;
  for (const auto& v : g.input()) {
    if (inits.count(v.name())) continue;
    GraphInput in{v.name(), 0, {}};
    if (v.type().has_tensor_type()) {
      in.elem_type = v.type().tensor_type().elem_type();
      for (const auto& d : v.type().tensor_type().shape().dim()) in.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    out.push_back(std::move(in));
  }
  return out;
}

// The input files of one sample folder, in graph-input order.
Expected<std::vector<Tensor>> read_sample(const fs::path& dir, const std::vector<GraphInput>& inputs) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const GraphInput& in = inputs[k];
    // Input names may hold '/' or ':' (PyTorch's "onnx::Flatten_0"); the positional names cover them.
    const fs::path candidates[] = {dir / (in.name + ".npy"), dir / str_cat("input_", k, ".npy"),
                                   dir / str_cat("input_", k, ".pb")};
    const fs::path* found = nullptr;
    for (const fs::path& c : candidates) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) {
        found = &c;
        break;
      }
    }
    if (!found)
      return not_found("calibration sample ", dir.string(), ": no file for input \"", in.name, "\" (expected ",
                       candidates[0].filename().string(), ", ", candidates[1].filename().string(), " or ",
                       candidates[2].filename().string(), ")");
    const std::string file = found->string();
    Expected<Tensor> t = found->extension() == ".pb" ? onnx_import::read_tensor_proto_file(file) : io::read_npy_file(file);
    if (!t.ok()) return t.status().with_context(file);
    if (in.elem_type != 0 && t->dtype() != onnx_import::dtype_from_onnx(in.elem_type))
      return invalid_argument(file, ": dtype ", dtype_name(t->dtype()), " for input \"", in.name, "\" of dtype ",
                              dtype_name(onnx_import::dtype_from_onnx(in.elem_type)));
    bool shape_ok = in.dims.empty() || static_cast<size_t>(t->rank()) == in.dims.size();
    for (size_t d = 0; shape_ok && d < in.dims.size(); ++d)
      shape_ok = in.dims[d] < 0 || in.dims[d] == t->dim(static_cast<int64_t>(d));
    if (!shape_ok) {
      std::string want, got;
      for (int64_t d : in.dims) {
        if (!want.empty()) want += ",";
        want += d < 0 ? std::string("?") : std::to_string(d);
      }
      for (int64_t d : t->shape()) {
        if (!got.empty()) got += ",";
        got += std::to_string(d);
      }
      return invalid_argument(file, ": shape [", got, "] for input \"", in.name, "\" of shape [", want, "]");
    }
    out.push_back(std::move(t).value());
  }
  return out;
}

// Running min/max, or every value for the percentile method.
struct Accumulator {
  float lo = 0.f, hi = 0.f;
  bool any = false;
  std::vector<float> values;
};

Status accumulate(Accumulator& acc, const Tensor& t, const std::string& name, bool keep_values) {
  if (t.dtype() != DType::kF32)
    return invalid_argument("calibration: \"", name, "\" is ", dtype_name(t.dtype()), ", not float32");
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!std::isfinite(p[i])) continue;
    if (!acc.any) acc.lo = acc.hi = p[i], acc.any = true;
    acc.lo = std::min(acc.lo, p[i]);
    acc.hi = std::max(acc.hi, p[i]);
  }
  if (keep_values) acc.values.insert(acc.values.end(), p, p + t.numel());
  return ok_status();
}

float percentile_of(std::vector<float>& v, double p) {
  const size_t k = static_cast<size_t>(std::llround(p / 100.0 * static_cast<double>(v.size() - 1)));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

Expected<Ranges> calibrate(const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                           const Options& options, size_t* samples) {
  const fs::path root(options.calibration_dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return not_found(options.calibration_dir, ": no such calibration folder");
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) dirs.push_back(root);  // the folder itself is the one sample

  const std::vector<GraphInput> inputs = graph_inputs(model.graph());
  std::unordered_set<std::string> input_names, outputs;
  for (const auto& in : inputs) input_names.insert(in.name);
  for (const auto& o : model.graph().output()) outputs.insert(o.name());
  onnx::ModelProto copy = model;
  for (const std::string& t : tensors)
    if (!input_names.count(t) && !outputs.count(t)) copy.mutable_graph()->add_output()->set_name(t);
  std::string bytes;
  if (!copy.SerializeToString(&bytes)) return internal_error("calibration: cannot serialize the model");
  enable_onnx_import();
  auto m = Model::load_bytes(bytes.data(), bytes.size(), "calibration model");
  if (!m.ok()) return m.status();
  SessionOptions so;
  so.num_threads = options.threads;
  auto session = Session::create(*m, so);
  if (!session.ok()) return session.status();

  const bool keep = options.calibration == Calibration::kPercentile;
  std::unordered_set<std::string> wanted(tensors.begin(), tensors.end());
  std::unordered_map<std::string, Accumulator> acc;
  for (const fs::path& dir : dirs) {
    auto feed = read_sample(dir, inputs);
    if (!feed.ok()) return feed.status();
    NamedTensors named;
    for (size_t k = 0; k < inputs.size(); ++k) {
      named.emplace_back(inputs[k].name, (*feed)[k]);
      if (wanted.count(inputs[k].name))
        if (Status s = accumulate(acc[inputs[k].name], (*feed)[k], inputs[k].name, keep); !s.ok()) return s;
    }
    auto out = (*session)->run(named);
    if (!out.ok()) return out.status().with_context(str_cat("calibration sample ", dir.string()));
    for (const auto& [name, t] : *out)
      if (wanted.count(name))
        if (Status s = accumulate(acc[name], t, name, keep); !s.ok()) return s;
  }
  if (samples) *samples = dirs.size();
  Ranges ranges;
  for (const std::string& t : tensors) {
    auto it = acc.find(t);
    if (it == acc.end()) return internal_error("calibration: no value for \"", t, "\"");
    Accumulator& a = it->second;
    if (keep && !a.values.empty()) {
      std::erase_if(a.values, [](float v) { return !std::isfinite(v); });
      if (!a.values.empty()) {
        const float hi = percentile_of(a.values, options.percentile);
        const float lo = percentile_of(a.values, 100.0 - options.percentile);
        ranges[t] = {lo, hi};
        continue;
      }
    }
    ranges[t] = {a.lo, a.hi};
  }
  return ranges;
}

}  // namespace tsr::onnx_quantize
