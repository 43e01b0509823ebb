// `tessera quantize MODEL.onnx -o OUT.onnx [--mode dynamic|static]`: writes an int8 ONNX model
// (tools/onnx/onnx_quantize.h, docs/quantization.md) that onnxruntime and Tessera both run.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <iostream>
#include <memory>

#include "tools/cli/cli_common.h"
#ifdef TSR_HAVE_ONNX_IMPORT
#include "tools/onnx/onnx_quantize.h"
#endif

namespace tsr::cli {

namespace {

struct QuantizeCliOptions {
  std::string input, output, mode = "dynamic", weight_type = "s8", calibration, method = "minmax";
  bool per_channel = false;
  std::vector<std::string> nodes_exclude, op_types;
  int64_t min_weight_elements = 0;
  double percentile = 99.99;
  int threads = 1;
};

#ifdef TSR_HAVE_ONNX_IMPORT
std::string mib(size_t bytes) {
  std::ostringstream s;
  if (bytes < 1024 * 1024)
    s << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / 1024.0 << " KiB";
  else
    s << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

int quantize_command(const QuantizeCliOptions& c) {
  onnx_quantize::Options o;
  o.mode = c.mode == "static" ? onnx_quantize::Mode::kStatic : onnx_quantize::Mode::kDynamic;
  o.per_channel = c.per_channel;
  o.weight_signed = c.weight_type == "s8";
  o.nodes_exclude = c.nodes_exclude;
  o.op_types = c.op_types;
  o.min_weight_elements = c.min_weight_elements;
  o.calibration_dir = c.calibration;
  o.calibration = c.method == "percentile" ? onnx_quantize::Calibration::kPercentile : onnx_quantize::Calibration::kMinMax;
  o.percentile = c.percentile;
  o.threads = c.threads;
  if (o.mode == onnx_quantize::Mode::kStatic && !c.weight_type.empty() && c.weight_type != "s8")
    return report_error(invalid_argument("--mode static writes s8 weights; --weight-type u8 is for --mode dynamic"));
  auto model = onnx_quantize::read_model(c.input);
  if (!model.ok()) return report_error(model.status());
  auto report = onnx_quantize::quantize(*model, o);
  if (!report.ok()) return report_error(report.status().with_context(c.input));
  std::string bytes;
  if (!model->SerializeToString(&bytes)) return report_error(internal_error("cannot serialize the quantized model"));
  std::ofstream f(c.output, std::ios::binary);
  if (!f || !f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !f.flush())
    return report_error(not_found(c.output, ": cannot write the file"));
  // The reasons nodes stayed f32, grouped ("12 node(s): weight is not a constant initializer").
  std::vector<std::pair<std::string, std::vector<std::string>>> why;
  for (const std::string& s : report->skipped) {
    const size_t colon = s.find("): ");
    const std::string node = s.substr(0, colon + 1), reason = colon == std::string::npos ? s : s.substr(colon + 3);
    auto it = std::find_if(why.begin(), why.end(), [&](const auto& w) { return w.first == reason; });
    if (it == why.end()) it = why.insert(why.end(), {reason, {}});
    it->second.push_back(node);
  }
  for (const auto& [reason, nodes] : why) {
    std::cerr << "tessera: note: left in f32: " << nodes.size() << " node(s): " << reason << " (" << nodes[0];
    if (nodes.size() > 1) std::cerr << ", ...";
    std::cerr << ")\n";
  }
  if (report->converted_from_opset > 0)
    std::cerr << "tessera: note: converted from opset " << report->converted_from_opset << " to 13 (ONNX version converter)\n";
  std::cout << "quantized " << report->quantized << " of " << report->candidates << " node(s) (" << c.mode;
  if (o.mode == onnx_quantize::Mode::kDynamic)
    std::cout << ", " << c.weight_type << " weights " << (c.per_channel ? "per channel" : "per tensor");
  else
    std::cout << ", " << report->samples << " calibration sample(s), " << report->calibrated_tensors << " activation ranges ("
              << c.method << "), " << report->residual_adds << " residual Add(s) on the codes";
  std::cout << "); weights " << mib(report->weight_bytes_before) << " -> " << mib(report->weight_bytes_after)
            << "; wrote " << c.output << "\n";
  return kExitOk;
}
#else
int quantize_command(const QuantizeCliOptions&) {
  return report_error(unsupported("this build has no ONNX support (tools/onnx): `tessera quantize` needs it"));
}
#endif

}  // namespace

Subcommand register_quantize(CLI::App& app) {
  auto o = std::make_shared<QuantizeCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "quantize",
      "Write an int8 ONNX model: dynamic (DynamicQuantizeLinear + MatMulInteger / ConvInteger for MatMul/Gemm/Conv "
      "weights, as onnxruntime's quantize_dynamic) or static QDQ (calibrated QuantizeLinear/DequantizeLinear around Conv/MatMul/Gemm, "
      "per-channel s8 weights). docs/quantization.md");
  sub->add_option("model", o->input, "Model file (.onnx)")->required();
  sub->add_option("-o,--output", o->output, "Output .onnx file")->required();
  sub->add_option("--mode", o->mode, "dynamic (default) or static")->check(CLI::IsMember({"dynamic", "static"}));
  sub->add_flag("--per-channel", o->per_channel, "Dynamic: one weight scale per output column of MatMul/Gemm, and per output channel of "
                                                  "a Conv with s8 weights (static always is per channel)");
  sub->add_option("--weight-type", o->weight_type, "Dynamic: s8 (symmetric, default) or u8 (asymmetric) weights")
      ->check(CLI::IsMember({"s8", "u8"}));
  sub->add_option("--nodes-exclude", o->nodes_exclude, "Node names to leave in f32, comma-separated")->delimiter(',');
  sub->add_option("--op-types", o->op_types,
                  "Op types to quantize, comma-separated (default: dynamic MatMul,Gemm; static Conv,MatMul,Gemm). "
                  "Dynamic also takes Conv (ConvInteger, per-tensor weights), which onnxruntime's quantize_dynamic "
                  "includes by default: --op-types MatMul,Gemm,Conv writes what it writes")
      ->delimiter(',');
  sub->add_option("--min-weight-elements", o->min_weight_elements,
                  "Leave weights with fewer elements in f32 (default 0: all, as onnxruntime)");
  sub->add_option("--calibration", o->calibration,
                  "Static: folder of samples, DIR/<sample>/<input>.npy or input_<k>.pb (or DIR itself as one sample)");
  sub->add_option("--calibrate", o->method, "Static: minmax (default) or percentile")
      ->check(CLI::IsMember({"minmax", "percentile"}));
  sub->add_option("--percentile", o->percentile, "Static, --calibrate percentile: keep [P(100-p), P(p)] (default 99.99)");
  sub->add_option("--threads", o->threads, "Threads for the calibration runs (default 1)");
  return {sub, [o] { return quantize_command(*o); }};
}

}  // namespace tsr::cli
