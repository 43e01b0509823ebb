// tessera-ocr: PaddleOCR's PP-OCRv4 models through tsr::Session, on PNG/JPEG images.
//
//   tessera-ocr [--model rec] [--keys ppocr_keys_v1.txt] [--verbose] IMAGE...        one line each
//   tessera-ocr --page [--det det] [--cls cls | --no-cls] [--json] IMAGE...         whole pages
//
// Line mode: each image holds one line of text (examples/ocr/ocr_image.h preprocesses it as
// PaddleOCR's resize_norm_img; ocr_recognize.h decodes it). Page mode: text boxes are detected,
// cropped, turned when upside down and recognized (ocr_page.h); each line is printed with its box
// (4 corners, page pixels) and confidence, in reading order, or the whole result as JSON.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/io/npy.h"
#include "examples/ocr/ocr_image.h"
#include "examples/ocr/ocr_page.h"
#include "examples/ocr/ocr_recognize.h"
#include "tessera/onnx.h"
#include "tessera/session.h"
#include "tools/cli/json_writer.h"

#ifndef TSR_OCR_DEFAULT_MODEL
#define TSR_OCR_DEFAULT_MODEL "third_party/models/ch_PP-OCRv4_rec_infer.tsr"
#endif
#ifndef TSR_OCR_DEFAULT_DET
#define TSR_OCR_DEFAULT_DET "third_party/models/ch_PP-OCRv4_det_infer.onnx"
#endif
#ifndef TSR_OCR_DEFAULT_CLS
#define TSR_OCR_DEFAULT_CLS "third_party/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
#endif
#ifndef TSR_OCR_DEFAULT_KEYS
#define TSR_OCR_DEFAULT_KEYS "third_party/models/ppocr_keys_v1.txt"
#endif

namespace {

using tsr::Expected;
using tsr::Status;
using tsr::Tensor;
using Clock = std::chrono::steady_clock;

void usage(std::ostream& os) {
  os << "Usage: tessera-ocr [options] IMAGE...\n"
        "Reads text in PNG/JPEG images with PaddleOCR's PP-OCRv4 models.\n"
        "Without --page, each image is one line of text, printed as one line.\n"
        "With --page, each image is a page: every text line found is printed as\n"
        "  x0,y0 x1,y1 x2,y2 x3,y3<TAB>confidence<TAB>text\n"
        "(the box's corners in image pixels from its top-left, clockwise), in reading order.\n"
        "  --model    recognition model (.tsr"
#ifdef TSR_HAVE_ONNX_IMPORT
        " or .onnx"
#endif
        "), default " TSR_OCR_DEFAULT_MODEL "\n"
        "  --keys     character list, one per line, default " TSR_OCR_DEFAULT_KEYS "\n"
        "  --page     whole pages: detect, (classify,) recognize\n"
        "  --det      text detection model (--page), default " TSR_OCR_DEFAULT_DET "\n"
        "  --cls      180-degree direction classifier (--page), default " TSR_OCR_DEFAULT_CLS "\n"
        "  --no-cls   skip the direction classifier\n"
        "  --crop-margin F  (--page) grow each box by F x its height before cropping (default 0.15;\n"
        "             0 crops the detected box as PaddleOCR does)\n"
        "  --limit-side N  longest side of the detector input (--page; default 960)\n"
        "  --json     (--page) print one JSON document: per image its lines, boxes, timings\n"
        "  --threads  intra-op threads (default 1; 0 = all cores)\n"
        "  --verbose  also print the mean confidence and the time per image (page: per stage, on stderr)\n"
        "  --save-input DIR  write each preprocessed line input to DIR/input_<i>.npy (line mode; to\n"
        "             compare with other runtimes, or to run it with `tessera run --input`)\n"
        "Exit codes: 0 ok, 1 error, 2 usage error.\n";
}

int fail(const Status& s) {
  std::cerr << "tessera-ocr: error: " << s.message() << "\n";
  return 1;
}

Expected<std::unique_ptr<tsr::Session>> open_session(const std::string& path, int threads) {
  auto model = tsr::Model::load(path);
  if (!model.ok()) return model.status();
  tsr::SessionOptions opts;
  opts.num_threads = threads;
  return tsr::Session::create(*model, opts);
}

std::string quad_text(const tsr::ocr::Quad& q) {
  std::ostringstream os;
  for (int k = 0; k < 4; ++k) os << (k ? " " : "") << q[k].x << "," << q[k].y;
  return os.str();
}

void write_page_json(tsr::cli::JsonWriter& j, const std::string& image, const tsr::ocr::Image& img,
                     const tsr::ocr::PageResult& r) {
  j.begin_object();
  j.key("image").value(image);
  j.key("width").value(img.width).key("height").value(img.height);
  j.key("det_input").begin_array().value(r.det_width).value(r.det_height).end_array();
  j.key("boxes").value(r.boxes);
  j.key("timings_ms").begin_object();
  j.key("det").value(r.timings.det_ms).key("post").value(r.timings.post_ms).key("crop").value(r.timings.crop_ms);
  j.key("cls").value(r.timings.cls_ms).key("rec").value(r.timings.rec_ms).key("total").value(r.timings.total());
  j.end_object();
  j.key("lines").begin_array();
  for (const auto& line : r.lines) {
    j.begin_object();
    j.key("text").value(line.text).key("confidence").value(line.confidence);
    j.key("box").begin_array();
    for (const auto& p : line.quad) j.begin_array().value(double(p.x)).value(double(p.y)).end_array();
    j.end_array();
    j.key("box_score").value(double(line.box_score)).key("turned").value(line.turned);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

struct Args {
  std::string model = TSR_OCR_DEFAULT_MODEL, det = TSR_OCR_DEFAULT_DET, cls = TSR_OCR_DEFAULT_CLS;
  std::string keys = TSR_OCR_DEFAULT_KEYS, save_dir;
  bool verbose = false, page = false, json = false, no_cls = false;
  int threads = 1, limit_side = 960;
  float crop_margin = tsr::ocr::PageOptions{}.crop_margin;
  std::vector<std::string> images;
};

int run_pages(const Args& a, const std::vector<std::string>& keys, tsr::Session& rec) {
  auto det = open_session(a.det, a.threads);
  if (!det.ok()) return fail(det.status());
  std::unique_ptr<tsr::Session> cls;
  if (!a.no_cls) {
    auto c = open_session(a.cls, a.threads);
    if (!c.ok()) return fail(c.status().with_context("the direction classifier (--no-cls skips it)"));
    cls = std::move(*c);
  }
  tsr::ocr::PageOptions opts;
  opts.det.limit_side = a.limit_side;
  opts.crop_margin = a.crop_margin;
  tsr::ocr::PageReader reader(**det, cls.get(), rec, keys, opts);
  tsr::cli::JsonWriter j(std::cout);
  if (a.json) j.begin_array();
  int rc = 0;
  for (const std::string& image : a.images) {
    auto t0 = Clock::now();
    auto img = tsr::ocr::load_image_file(image, tsr::ocr::kOcrMaxPagePixels);
    if (!img.ok()) { rc = fail(img.status()); continue; }
    const double decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    auto r = reader.read(*img);
    if (!r.ok()) { rc = fail(r.status().with_context(image)); continue; }
    if (a.json) {
      write_page_json(j, image, *img, *r);
    } else {
      for (const auto& line : r->lines)
        std::cout << quad_text(line.quad) << "\t" << std::fixed << std::setprecision(3) << line.confidence
                  << std::defaultfloat << "\t" << line.text << "\n";
    }
    if (a.verbose) {
      const auto& t = r->timings;
      std::cerr << image << ": " << img->width << " x " << img->height << ", detector input " << r->det_width << " x "
                << r->det_height << ", " << r->boxes << " boxes, " << r->lines.size() << " lines; decode " << decode_ms
                << " ms, det " << t.det_ms << " ms, post " << t.post_ms << " ms, crop " << t.crop_ms << " ms, cls "
                << t.cls_ms << " ms, rec " << t.rec_ms << " ms, total " << t.total() + decode_ms << " ms\n";
    }
  }
  if (a.json) {
    j.end_array();
    j.finish();
  }
  return rc;
}

int run_lines(const Args& a, const std::vector<std::string>& keys, tsr::Session& session) {
  int rc = 0;
  for (size_t i = 0; i < a.images.size(); ++i) {
    const std::string& image = a.images[i];
    auto x = tsr::ocr::preprocess_image_file(image);
    if (!x.ok()) { rc = fail(x.status()); continue; }
    if (!a.save_dir.empty()) {
      Status s = tsr::io::write_npy_file(*x, a.save_dir + "/input_" + std::to_string(i) + ".npy");
      if (!s.ok()) { rc = fail(s); continue; }
    }
    const auto t0 = Clock::now();
    auto out = session.run({*x});
    const auto t1 = Clock::now();
    if (!out.ok()) { rc = fail(out.status().with_context(image)); continue; }
    if (out->empty()) { rc = fail(tsr::invalid_argument("the model has no outputs")); continue; }
    auto d = tsr::ocr::ctc_decode(out->front(), keys);
    if (!d.ok()) { rc = fail(d.status().with_context(image)); continue; }
    std::cout << d->text;
    if (a.verbose)
      std::cout << "\t(" << image << ": confidence " << d->confidence << ", "
                << std::chrono::duration<double, std::milli>(t1 - t0).count() << " ms)";
    std::cout << "\n";
  }
  return rc;
}

bool parse_count(const std::string& v, int* out) {
  if (v.empty() || v.size() > 5 || v.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoi(v);
  return true;
}

bool parse_fraction(const std::string& v, float* out) {
  char* end = nullptr;
  const float f = std::strtof(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(f >= 0 && f <= 2)) return false;
  *out = f;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    bool ok = true;
    if (arg == "-h" || arg == "--help") {
      usage(std::cout);
      return 0;
    } else if (arg == "--model") {
      ok = value(&a.model);
    } else if (arg == "--det") {
      ok = value(&a.det);
    } else if (arg == "--cls") {
      ok = value(&a.cls);
    } else if (arg == "--keys") {
      ok = value(&a.keys);
    } else if (arg == "--save-input") {
      ok = value(&a.save_dir);
    } else if (arg == "--threads") {
      ok = value(&v) && parse_count(v, &a.threads) && a.threads <= 1024;
    } else if (arg == "--limit-side") {
      ok = value(&v) && parse_count(v, &a.limit_side) && a.limit_side >= 32 && a.limit_side <= 4096;
    } else if (arg == "--crop-margin") {
      ok = value(&v) && parse_fraction(v, &a.crop_margin);
    } else if (arg == "--page") {
      a.page = true;
    } else if (arg == "--no-cls") {
      a.no_cls = true;
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--verbose" || arg == "-v") {
      a.verbose = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "tessera-ocr: unknown option " << arg << "\n";
      ok = false;
    } else {
      a.images.push_back(arg);
    }
    if (!ok) {
      usage(std::cerr);
      return 2;
    }
  }
  if (a.images.empty() || (a.json && !a.page) || (!a.save_dir.empty() && a.page)) {
    if (a.json && !a.page) std::cerr << "tessera-ocr: --json needs --page\n";
    if (!a.save_dir.empty() && a.page) std::cerr << "tessera-ocr: --save-input is for line mode\n";
    usage(std::cerr);
    return 2;
  }

  auto keys = tsr::ocr::load_keys(a.keys);
  if (!keys.ok()) return fail(keys.status());
#ifdef TSR_HAVE_ONNX_IMPORT
  tsr::enable_onnx_import();
#endif
  auto rec = open_session(a.model, a.threads);
  if (!rec.ok()) return fail(rec.status());
  return a.page ? run_pages(a, *keys, **rec) : run_lines(a, *keys, **rec);
}
