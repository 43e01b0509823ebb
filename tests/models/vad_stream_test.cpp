// Streaming Silero VAD against onnxruntime: converts silero_vad_legacy.onnx (LSTM inside nested
// If), then runs 100 consecutive 512-sample chunks through one Session, feeding the LSTM state
// (hn, cn) back each step as a VAD is used, and compares every chunk's speech probability and
// the final state with onnxruntime-node's (gen_stream_refs.js) at rtol = atol = 1e-4.
// Usage: tessera_vad_stream_test MODEL.onnx REF_DIR   (exit 77: model or references absent)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "tessera/session.h"
#include "core/io/npy.h"
#include "tools/onnx/onnx_import.h"

using namespace tsr;

namespace {

// Largest violation of |got - want| <= tol + tol * |want| as a ratio (<= 1 passes); also the max abs error.
double check(const Tensor& got, const Tensor& want, double* max_abs) {
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.scalar_f64(i), w = want.scalar_f64(i), err = std::fabs(g - w);
    *max_abs = std::max(*max_abs, err);
    worst = std::max(worst, err / (1e-4 + 1e-4 * std::fabs(w)));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tessera_vad_stream_test MODEL.onnx REF_DIR\n");
    return 2;
  }
  const std::string ref = argv[2];
  if (!std::filesystem::exists(argv[1]) || !std::filesystem::exists(ref + "/prob.npy")) {
    std::fprintf(stderr, "skipped: %s or its references are absent\n", argv[1]);
    return 77;
  }
  auto model = onnx_import::import_onnx_file(argv[1]);
  if (!model.ok()) return std::fprintf(stderr, "%s\n", model.status().to_string().c_str()), 1;
  auto session = Session::create(std::make_shared<ir::Model>(std::move(model).value()));
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().to_string().c_str()), 1;
  auto audio = io::read_npy_file(ref + "/audio.npy");
  auto prob = io::read_npy_file(ref + "/prob.npy");
  auto hn_ref = io::read_npy_file(ref + "/hn.npy");
  auto cn_ref = io::read_npy_file(ref + "/cn.npy");
  if (!audio.ok() || !prob.ok() || !hn_ref.ok() || !cn_ref.ok()) return std::fprintf(stderr, "bad reference files\n"), 1;

  const int64_t chunks = audio->dim(0), len = audio->dim(1);
  auto h = Tensor::zeros(DType::kF32, {2, 1, 64});
  auto c = Tensor::zeros(DType::kF32, {2, 1, 64});
  Tensor state_h = *h, state_c = *c;
  double max_abs = 0, worst = 0;
  for (int64_t k = 0; k < chunks; ++k) {
    auto chunk = audio->index0(k).reshaped({1, len});
    auto outs = (*session)->run({*chunk, Tensor::scalar<int64_t>(16000), state_h, state_c});
    if (!outs.ok()) return std::fprintf(stderr, "chunk %lld: %s\n", static_cast<long long>(k), outs.status().to_string().c_str()), 1;
    worst = std::max(worst, check((*outs)[0], prob->index0(k), &max_abs));
    state_h = (*outs)[1];  // the state goes back in, as a streaming VAD does
    state_c = (*outs)[2];
  }
  double state_abs = 0;
  const double state_worst = std::max(check(state_h, *hn_ref, &state_abs), check(state_c, *cn_ref, &state_abs));
  const bool pass = worst <= 1 && state_worst <= 1;
  std::printf("model silero_vad_stream: %lld chunks, speech prob max abs err %.3g, final state max abs err %.3g "
              "(rtol=0.0001, atol=0.0001): %s\n",
              static_cast<long long>(chunks), max_abs, state_abs, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
