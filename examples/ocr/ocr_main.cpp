// tessera-ocr: recognizes one line of text per image with PaddleOCR's PP-OCRv4 recognition
// model (CRNN-style SVTR net + CTC), run through tsr::Session.
//
//   tessera-ocr [--model rec.tsr] [--keys ppocr_keys_v1.txt] [--verbose] IMAGE...
//
// Preprocessing (examples/ocr/ocr_image.h) follows PaddleOCR's resize_norm_img: a 48-px-high,
// bilinear-resized BGR image in [-1, 1], zero-padded on the right.
//
// Decoding (PaddleOCR CTCLabelDecode, greedy): argmax per time step, merge repeats, drop the
// blank class 0; class k in 1..N is line k of the keys file, class N+1 is a space. The
// confidence is the mean of the kept steps' probabilities (the model ends in a Softmax).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/io/npy.h"
#include "examples/ocr/ocr_image.h"
#include "tessera/onnx.h"
#include "tessera/session.h"

#ifndef TSR_OCR_DEFAULT_MODEL
#define TSR_OCR_DEFAULT_MODEL "third_party/models/ch_PP-OCRv4_rec_infer.tsr"
#endif
#ifndef TSR_OCR_DEFAULT_KEYS
#define TSR_OCR_DEFAULT_KEYS "third_party/models/ppocr_keys_v1.txt"
#endif

namespace {

using tsr::Expected;
using tsr::Status;
using tsr::Tensor;

Expected<std::vector<std::string>> load_keys(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return tsr::not_found(path, ": cannot open the keys file");
  std::vector<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    keys.push_back(line);
  }
  if (keys.empty()) return tsr::invalid_argument(path, ": the keys file is empty");
  keys.push_back(" ");  // PaddleOCR's use_space_char: the last class
  return keys;
}

struct Decoded {
  std::string text;
  double confidence = 0;
};

// Greedy CTC decode of probs [1, T, C] (C = keys.size() + 1 with the blank).
Expected<Decoded> ctc_decode(const Tensor& probs, const std::vector<std::string>& keys) {
  if (probs.dtype() != tsr::DType::kF32 || probs.rank() != 3 || probs.dim(0) != 1)
    return tsr::invalid_argument("unexpected model output ", tsr::dtype_name(probs.dtype()), " ",
                                 tsr::shape_str(probs.shape()), ", expected f32 [1, T, C]");
  const int64_t steps = probs.dim(1), classes = probs.dim(2);
  if (classes != static_cast<int64_t>(keys.size()) + 1)
    return tsr::invalid_argument("the model has ", classes, " classes but the keys file gives ", keys.size() - 1,
                                 " characters + space + blank = ", keys.size() + 1);
  Decoded d;
  double conf_sum = 0;
  int64_t kept = 0, prev = -1;
  const float* p = probs.data<float>();
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = p + t * classes;
    int64_t best = 0;
    for (int64_t k = 1; k < classes; ++k)
      if (row[k] > row[best]) best = k;
    if (best != 0 && best != prev) {
      d.text += keys[static_cast<size_t>(best - 1)];
      conf_sum += row[best];
      ++kept;
    }
    prev = best;
  }
  d.confidence = kept ? conf_sum / static_cast<double>(kept) : 0;
  return d;
}

void usage(std::ostream& os) {
  os << "Usage: tessera-ocr [--model REC.tsr] [--keys KEYS.txt] [--threads N] [--verbose] IMAGE...\n"
        "Recognizes one line of text per image (PNG/JPEG) with PaddleOCR PP-OCRv4 recognition and\n"
        "prints it, one line per image.\n"
        "  --model    recognition model (.tsr"
#ifdef TSR_HAVE_ONNX_IMPORT
        " or .onnx"
#endif
        "), default " TSR_OCR_DEFAULT_MODEL "\n"
        "  --keys     character list, one per line, default " TSR_OCR_DEFAULT_KEYS "\n"
        "  --threads  intra-op threads (default 1; 0 = all cores)\n"
        "  --verbose  also print the mean confidence and the time per image\n"
        "  --save-input DIR  write each preprocessed input tensor to DIR/input_<i>.npy (to compare\n"
        "             with other runtimes, or to run it with `tessera run --input`)\n"
        "Exit codes: 0 ok, 1 error, 2 usage error.\n";
}

int fail(const Status& s) {
  std::cerr << "tessera-ocr: error: " << s.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path = TSR_OCR_DEFAULT_MODEL, keys_path = TSR_OCR_DEFAULT_KEYS, save_dir;
  bool verbose = false;
  int threads = 1;
  std::vector<std::string> images;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      usage(std::cout);
      return 0;
    } else if (a == "--model") {
      if (!value(&model_path)) { usage(std::cerr); return 2; }
    } else if (a == "--keys") {
      if (!value(&keys_path)) { usage(std::cerr); return 2; }
    } else if (a == "--save-input") {
      if (!value(&save_dir)) { usage(std::cerr); return 2; }
    } else if (a == "--threads") {
      if (!value(&v) || v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos) {
        usage(std::cerr);
        return 2;
      }
      threads = std::stoi(v);
    } else if (a == "--verbose" || a == "-v") {
      verbose = true;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "tessera-ocr: unknown option " << a << "\n";
      usage(std::cerr);
      return 2;
    } else {
      images.push_back(a);
    }
  }
  if (images.empty()) {
    usage(std::cerr);
    return 2;
  }

  auto keys = load_keys(keys_path);
  if (!keys.ok()) return fail(keys.status());
#ifdef TSR_HAVE_ONNX_IMPORT
  tsr::enable_onnx_import();
#endif
  auto model = tsr::Model::load(model_path);
  if (!model.ok()) return fail(model.status());
  tsr::SessionOptions opts;
  opts.num_threads = threads;
  auto session = tsr::Session::create(*model, opts);
  if (!session.ok()) return fail(session.status());

  int rc = 0;
  for (size_t i = 0; i < images.size(); ++i) {
    const std::string& image = images[i];
    auto x = tsr::ocr::preprocess_image_file(image);
    if (!x.ok()) { rc = fail(x.status()); continue; }
    if (!save_dir.empty()) {
      Status s = tsr::io::write_npy_file(*x, save_dir + "/input_" + std::to_string(i) + ".npy");
      if (!s.ok()) { rc = fail(s); continue; }
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto out = (*session)->run({*x});
    const auto t1 = std::chrono::steady_clock::now();
    if (!out.ok()) { rc = fail(out.status().with_context(image)); continue; }
    if (out->empty()) { rc = fail(tsr::invalid_argument("the model has no outputs")); continue; }
    auto d = ctc_decode(out->front(), *keys);
    if (!d.ok()) { rc = fail(d.status().with_context(image)); continue; }
    std::cout << d->text;
    if (verbose)
      std::cout << "\t(" << image << ": confidence " << d->confidence << ", "
                << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms)";
    std::cout << "\n";
  }
  return rc;
}
