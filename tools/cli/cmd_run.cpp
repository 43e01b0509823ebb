// `tessera run MODEL [--input ...] [--random-inputs] [--output-dir DIR] [--repeat N]`.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/base/rng.h"
#include "core/io/npy.h"
#include "tessera/session.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/heap_counter.h"
#include "tools/cli/json_writer.h"
#include "tools/cli/model_loader.h"

namespace tsr::cli {
namespace {

std::string input_names(const std::vector<ValueInfo>& inputs) {
  std::string s;
  for (const ValueInfo& v : inputs) s += str_cat(s.empty() ? "" : ", ", v.name);
  return s.empty() ? "(none)" : s;
}

// "f32 [1, 3, -1]" (sequences: "sequence(f32 [2])").
std::string describe(const ValueInfo& t) {
  const std::string d = str_cat(dtype_name(t.dtype), " ", t.has_shape ? shape_str(t.shape) : std::string("[*]"));
  return t.kind == ValueKind::kTensor ? d : str_cat(value_kind_name(t.kind), "(", d, ")");
}

int find_input(const std::vector<ValueInfo>& inputs, std::string_view name) {
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].name == name) return int(k);
  return -1;
}

// "NAME=1,3,48,320" → name and dims; false if malformed.
bool parse_shape_spec(const std::string& spec, std::string* name, Shape* shape) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) return false;
  *name = spec.substr(0, eq);
  shape->clear();
  const std::string dims = spec.substr(eq + 1);
  if (dims.empty()) return true;  // a scalar
  size_t pos = 0;
  while (pos <= dims.size()) {
    const size_t comma = std::min(dims.find(',', pos), dims.size());
    const std::string d = dims.substr(pos, comma - pos);
    if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos) return false;
    shape->push_back(std::stoll(d));
    if (shape->size() > 64) return false;
    pos = comma + 1;
  }
  return true;
}

Expected<Tensor> random_tensor(DType dtype, const Shape& shape, uint64_t seed, size_t index) {
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(dtype, shape));
  SplitMix64 rng{seed ^ (0x632be59bd9b4e019ull * (index + 1))};
  const int64_t n = t.numel();
  const bool ok = dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.mut_data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, Half>) p[i] = Half{f32_to_f16(rng.uniform_pm1_f32())};
      else if constexpr (std::is_same_v<T, BFloat16>) p[i] = BFloat16{f32_to_bf16(rng.uniform_pm1_f32())};
      else if constexpr (std::is_floating_point_v<T>) p[i] = static_cast<T>(rng.uniform_pm1_f32());
      else if constexpr (std::is_same_v<T, bool>) p[i] = (rng.next() >> 63) != 0;
      else p[i] = static_cast<T>(rng.next() % 10);
    }
  });
  if (!ok) return unsupported("--random-inputs cannot generate dtype ", dtype_name(dtype));
  return t;
}

int usage_error(const std::string& msg) {
  std::cerr << "tessera: usage error: " << msg << "\nRun 'tessera run --help' for usage.\n";
  return kExitUsage;
}

template <typename T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, Half>) return f16_to_f32(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return bf16_to_f32(v.bits);
  else return static_cast<double>(v);
}

std::string format_value(double v, bool is_float) {
  char buf[40];
  if (is_float) std::snprintf(buf, sizeof buf, "%.6g", v);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

Expected<Tensor> to_npy_compatible(const Tensor& t) {
  if (t.dtype() != DType::kBF16) return t;
  TSR_ASSIGN_OR_RETURN(Tensor f, Tensor::empty(DType::kF32, t.shape()));
  const auto* src = t.data<BFloat16>();
  float* dst = f.mut_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = bf16_to_f32(src[i].bits);
  return f;
}

}  // namespace

// min, max, mean and the first values of a numeric tensor.
std::string summary(const Tensor& t) {
  constexpr int64_t kShow = 8;
  if (t.is_none()) return "none (empty optional)";
  if (t.is_sequence()) {
    std::string s = str_cat("sequence of ", t.elements().size(), " tensor(s)");
    for (size_t i = 0; i < t.elements().size() && i < size_t(kShow); ++i)
      s += str_cat(i ? "; " : ": ", shape_str(t.elements()[i].shape()), " ", summary(t.elements()[i]));
    return s + (t.elements().size() > size_t(kShow) ? "; ..." : "");
  }
  if (t.dtype() == DType::kString) {
    std::string s = str_cat(t.numel(), " strings: [");
    const auto* p = t.data<std::string>();
    for (int64_t i = 0; i < std::min(t.numel(), kShow); ++i) s += str_cat(i ? ", " : "", '"', p[i], '"');
    return s + (t.numel() > kShow ? ", ...]" : "]");
  }
  std::string out;
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    const int64_t n = t.numel();
    const bool fl = dtype_is_float(t.dtype());
    if (n == 0) {
      out = "(empty)";
      return;
    }
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    int64_t nan = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = to_double(p[i]);
      if (std::isnan(v)) { ++nan; continue; }
      mn = std::min(mn, v);
      mx = std::max(mx, v);
      sum += v;
    }
    const int64_t counted = n - nan;
    out = counted ? str_cat("min=", format_value(mn, fl), " max=", format_value(mx, fl),
                            " mean=", format_value(sum / double(counted), true))
                  : std::string("all NaN");
    if (nan && counted) out += str_cat(" nan=", nan);
    out += " first=[";
    for (int64_t i = 0; i < std::min(n, kShow); ++i) out += str_cat(i ? ", " : "", format_value(to_double(p[i]), fl));
    out += n > kShow ? ", ...]" : "]";
  });
  return out;
}

void print_output(size_t i, const std::string& name, const Tensor& t) {
  std::cout << "output[" << i << "] \"" << name << "\": " << dtype_name(t.dtype());
  if (t.kind() == ValueKind::kTensor) std::cout << " " << shape_str(t.shape());
  std::cout << "  " << summary(t) << "\n";
}

Status write_outputs(const std::string& dir, const std::vector<std::string>& names, const std::vector<Tensor>& outs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return invalid_argument("--output-dir ", dir, ": cannot create directory: ", ec.message());
  std::ofstream js(dir + "/outputs.json");
  if (!js) return invalid_argument("--output-dir ", dir, ": cannot write outputs.json");
  JsonWriter w(js);
  w.begin_object().key("outputs").begin_array();
  for (size_t i = 0; i < outs.size(); ++i) {
    const std::string file = str_cat("output_", i, ".npy");
    const std::string name = i < names.size() ? names[i] : "";
    w.begin_object().key("index").value(i).key("name").value(name).key("dtype").value(dtype_name(outs[i].dtype()));
    if (outs[i].kind() != ValueKind::kTensor) {
      // Sequences: one file per element, output_<i>_<j>.npy; an empty optional: no file.
      w.key("kind").value(value_kind_name(outs[i].kind())).key("files").begin_array();
      for (size_t j = 0; j < outs[i].elements().size(); ++j) {
        const std::string ef = str_cat("output_", i, "_", j, ".npy");
        TSR_ASSIGN_OR_RETURN(Tensor saved, to_npy_compatible(outs[i].elements()[j]));
        TSR_RETURN_IF_ERROR(io::write_npy_file(saved, dir + "/" + ef));
        w.value(ef);
      }
      w.end_array().end_object();
      continue;
    }
    w.key("shape").value(outs[i].shape());
    // String tensors become numpy unicode ('<U<n>') arrays.
    TSR_ASSIGN_OR_RETURN(Tensor saved, to_npy_compatible(outs[i]));
    TSR_RETURN_IF_ERROR(io::write_npy_file(saved, dir + "/" + file).with_context(str_cat("output[", i, "] \"", name, "\"")));
    w.key("file").value(file);
    if (saved.dtype() != outs[i].dtype()) w.key("file_dtype").value(dtype_name(saved.dtype()));
    w.end_object();
  }
  w.end_array().end_object().finish();
  if (!js.flush()) return resource_error(dir, "/outputs.json: write failed");
  return ok_status();
}

namespace {

// The shape a random input gets: --shape NAME=..., or its static shape.
Expected<Shape> random_input_shape(const ValueInfo& info, size_t k, const std::map<std::string, Shape>& shapes) {
  auto it = shapes.find(info.name);
  if (it == shapes.end()) {
    if (!info.has_shape)
      return invalid_argument("input[", k, "] \"", info.name, "\" has unknown rank: pass --shape ", info.name, "=D0,D1,...");
    for (size_t d = 0; d < info.shape.size(); ++d)
      if (info.shape[d] < 0) {
        const std::string dim_name =
            d < info.dim_names.size() && !info.dim_names[d].empty() ? str_cat(" \"", info.dim_names[d], "\"") : "";
        return invalid_argument("input[", k, "] \"", info.name, "\" ", describe(info), " has dynamic dim ", d, dim_name,
                                ": pass --shape ", info.name, "=D0,D1,...");
      }
    return info.shape;
  }
  if (info.has_shape && it->second.size() != info.shape.size())
    return invalid_argument("--shape ", info.name, ": rank ", it->second.size(), ", but input[", k, "] \"", info.name,
                            "\" is ", describe(info));
  for (size_t d = 0; info.has_shape && d < info.shape.size(); ++d)
    if (info.shape[d] >= 0 && info.shape[d] != it->second[d])
      return invalid_argument("--shape ", info.name, ": dim ", d, " is ", it->second[d], ", but input[", k, "] \"",
                              info.name, "\" is ", describe(info));
  return it->second;
}

// The --input files (NAME=FILE by name, then bare files to the remaining inputs in order) and,
// with --random-inputs, random values for the inputs still missing: named inputs for
// Session::bind, which checks that each input is given once.
Expected<NamedTensors> gather_inputs(const std::vector<ValueInfo>& wanted, const RunOptions& o,
                                     const std::map<std::string, Shape>& shapes) {
  const size_t n = wanted.size();
  std::vector<Tensor> inputs(n);
  std::vector<std::string> bare;
  std::error_code ec;
  for (const auto& spec : o.inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || std::filesystem::exists(spec, ec)) {
      bare.push_back(spec);
      continue;
    }
    const std::string name = spec.substr(0, eq);
    const int k = find_input(wanted, name);
    if (k < 0)
      return not_found("--input ", spec, ": the model has no input named \"", name, "\" (its inputs are: ",
                       input_names(wanted), ")");
    if (inputs[size_t(k)].defined()) return invalid_argument("input[", k, "] \"", name, "\" is given twice");
    TSR_ASSIGN_OR_RETURN(inputs[size_t(k)], load_tensor_file(spec.substr(eq + 1), wanted[size_t(k)].kind));
  }
  size_t next = 0;
  for (const auto& file : bare) {
    while (next < n && inputs[next].defined()) ++next;
    if (next == n)
      return invalid_argument("too many --input files: the model has ", n, " input(s) (", input_names(wanted),
                              "), extra file ", file);
    TSR_ASSIGN_OR_RETURN(inputs[next], load_tensor_file(file, wanted[next].kind));
  }
  for (const auto& [name, shape] : shapes) {
    const int k = find_input(wanted, name);
    if (k < 0)
      return not_found("--shape ", name, ": the model has no input named \"", name, "\" (its inputs are: ",
                       input_names(wanted), ")");
    if (inputs[size_t(k)].defined())
      std::cerr << "tessera: warning: --shape " << name << " ignored: that input comes from a file\n";
  }
  std::string missing;
  for (size_t k = 0; k < n; ++k) {
    const ValueInfo& info = wanted[k];
    if (inputs[k].defined()) continue;
    if (!o.random_inputs) {
      missing += str_cat(missing.empty() ? "" : ", ", "input[", k, "] \"", info.name, "\" (", describe(info), ")");
      continue;
    }
    TSR_ASSIGN_OR_RETURN(Shape shape, random_input_shape(info, k, shapes));
    if (info.kind != ValueKind::kTensor)
      return unsupported("input[", k, "] \"", info.name, "\" is a ", describe(info),
                         ": --random-inputs makes tensors only");
    auto t = random_tensor(info.dtype, shape, o.seed, k);
    if (!t.ok()) return t.status().with_context(str_cat("input[", k, "] \"", info.name, "\""));
    inputs[k] = std::move(t).value();
  }
  if (!missing.empty())
    return invalid_argument("the model has ", n, " input(s) (", input_names(wanted), "); missing ", missing,
                            ": pass --input NAME=FILE or --random-inputs");
  NamedTensors named;
  for (size_t k = 0; k < n; ++k) named.emplace_back(wanted[k].name, std::move(inputs[k]));
  return named;
}

SessionOptions session_options(const RunOptions& o) {
  SessionOptions so;
  so.optimization = o.no_optimize ? OptimizationLevel::kNone : OptimizationLevel::kAll;
  so.skip_passes = o.skip_passes;
  so.backend = o.backend;
  so.num_threads = o.threads;
  so.inter_op = o.inter_op;
  so.max_memory_bytes = o.max_memory;
  so.max_loop_iterations = o.max_loop_iterations;
  so.device = o.device;
  parse_fast_math(o.fast_math, &so.fast_math);  // the option's choices are the valid names
  if (!fast_math_supported(so.fast_math))
    std::fprintf(stderr, "note: --fast-math %s: this CPU (or build) lacks AVX512_BF16; attention runs in f32\n",
                 o.fast_math.c_str());
  return so;
}

// The share of main-graph nodes on the device (subgraphs are placed when they first run).
void print_placement(const Session& session, const RunOptions& o) {
  const PlacementSummary p = session.placement();
  if (!p.device.empty()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "placement: %zu of %zu nodes on %s (%.1f%%), %zu copies", p.device_nodes,
                  p.total_nodes, p.device.c_str(),
                  p.total_nodes ? 100.0 * double(p.device_nodes) / double(p.total_nodes) : 0.0, p.copies);
    std::cout << buf << "\n";
  } else if (o.device == "auto") {
    std::cout << "placement: no device found, running on the CPU\n";
  }
}

// Warm-up runs, then the --repeat timed runs; prints the latency and, after a warm-up, what the
// timed runs allocated. The outputs go into one vector kept from run to run (the allocation-free
// form of Session::run).
Status timed_runs(Session& session, const std::vector<Tensor>& inputs, const RunOptions& o,
                  std::vector<Tensor>* outputs) {
  for (int r = 0; r < o.warmup; ++r) TSR_RETURN_IF_ERROR(session.run(inputs, outputs));
  if (o.profile) session.enable_profiling();
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(std::max(o.repeat, 0)));
  const size_t system_allocations = tensor_memory_stats().system_allocations;
  const size_t heap_allocations = cli::heap_allocations();
  for (int r = 0; r < o.repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    Status st = session.run(inputs, outputs);
    const auto t1 = std::chrono::steady_clock::now();
    TSR_RETURN_IF_ERROR(st);
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  const size_t heap_in_runs = cli::heap_allocations() - heap_allocations;
  const size_t system_in_runs = tensor_memory_stats().system_allocations - system_allocations;
  for (size_t i = 0; i < outputs->size(); ++i) print_output(i, session.outputs()[i].name, (*outputs)[i]);
  std::sort(ms.begin(), ms.end());
  const double median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  char buf[128];
  std::snprintf(buf, sizeof buf, "latency: median %.3f ms, min %.3f ms over %zu run(s)", median, ms.front(), ms.size());
  std::cout << buf << "\n";
  // After a warm-up run, every tensor buffer of a run should come from those the previous run
  // freed (the recycling allocator, core/tensor/tensor.h) and nothing else should be allocated:
  // the allocation-free steady state (heap allocations: operator new, tools/cli/heap_counter.h).
  if (o.warmup > 0)
    std::cout << "steady state: " << system_in_runs << " tensor buffers from the system allocator and " << heap_in_runs
              << " heap allocations in " << ms.size() << " run(s) after warm-up\n";
  if (o.profile) std::cout << session.profile_report(o.profile_top);
  return ok_status();
}

}  // namespace

int run_command(const RunOptions& o) {
  // Parse the option values that need no model first, so usage errors come before slow loads.
  std::map<std::string, Shape> shapes;
  for (const auto& spec : o.shapes) {
    std::string name;
    Shape shape;
    if (!parse_shape_spec(spec, &name, &shape))
      return usage_error(str_cat("--shape ", spec, ": expected NAME=D0,D1,... with non-negative integer dims"));
    shapes[name] = shape;
  }
  auto model = load_model(o.model);
  if (!model.ok()) return report_error(model.status());
  // Inputs before the session: a wrong input is reported before the graph is optimized.
  auto named = gather_inputs(model->inputs(), o, shapes);
  if (!named.ok()) return report_error(named.status());
  if (!o.check_against.empty()) {
    std::vector<Tensor> ordered;
    for (auto& [name, value] : *named) ordered.push_back(std::move(value));
    return check_against(model->graph_ptr(), ordered, o);
  }
  auto session = Session::create(*model, session_options(o));
  if (!session.ok()) return report_error(session.status());
  print_placement(**session, o);
  auto inputs = (*session)->bind(*named);
  if (!inputs.ok()) return report_error(inputs.status());
  std::vector<Tensor> outputs;
  if (Status s = timed_runs(**session, *inputs, o, &outputs); !s.ok()) return report_error(s);
  if (!o.output_dir.empty()) {
    std::vector<std::string> names;
    for (const ValueInfo& v : (*session)->outputs()) names.push_back(v.name);
    if (Status s = write_outputs(o.output_dir, names, outputs); !s.ok()) return report_error(s);
  }
  return kExitOk;
}

}  // namespace tsr::cli
