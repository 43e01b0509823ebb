// tools/train: IDX files (valid and malformed), dataset loading, the built-in architectures and
// the PNG loss plot.
#include <catch2/catch.hpp>
#include <stb_image.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tessera/session.h"
#include "core/passes/verify_model.h"
#include "tools/train/architectures.h"
#include "tools/train/idx.h"
#include "tools/train/plot.h"
#include "tools/train/trainer.h"

using namespace tsr;

namespace {

std::string temp_dir() {
  const auto d = std::filesystem::temp_directory_path() / ("tsr_train_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// An IDX header: magic {0, 0, type, rank} and big-endian u32 dims.
std::vector<uint8_t> idx_header(uint8_t type, const std::vector<uint32_t>& dims) {
  std::vector<uint8_t> b{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  return b;
}

std::string error_of(const std::string& path) {
  auto t = train::read_idx(path);
  REQUIRE_FALSE(t.ok());
  return t.status().message();
}

}  // namespace

TEST_CASE("IDX: u8 and big-endian i32 files read with their shapes and values", "[train]") {
  const std::string dir = temp_dir();
  auto b = idx_header(0x08, {2, 3});
  for (uint8_t v = 0; v < 6; ++v) b.push_back(v * 10);
  write_bytes(dir + "/u8.idx", b);
  auto t = train::read_idx(dir + "/u8.idx");
  REQUIRE(t.ok());
  CHECK(t->dtype() == DType::kU8);
  CHECK(t->shape() == Shape{2, 3});
  CHECK(t->data<uint8_t>()[5] == 50);

  b = idx_header(0x0C, {2});
  for (uint8_t v : {0x00, 0x00, 0x01, 0x02, 0xFF, 0xFF, 0xFF, 0xFE}) b.push_back(v);
  write_bytes(dir + "/i32.idx", b);
  t = train::read_idx(dir + "/i32.idx");
  REQUIRE(t.ok());
  CHECK(t->dtype() == DType::kI32);
  CHECK(t->data<int32_t>()[0] == 258);
  CHECK(t->data<int32_t>()[1] == -2);
}

TEST_CASE("IDX: malformed files give errors naming the file and the problem", "[train]") {
  const std::string dir = temp_dir();
  CHECK(train::read_idx(dir + "/missing.idx").status().code() == StatusCode::kNotFound);
  write_bytes(dir + "/short.idx", {0, 0});
  CHECK(error_of(dir + "/short.idx").find("shorter than the 4-byte IDX magic") != std::string::npos);
  write_bytes(dir + "/magic.idx", {1, 2, 8, 1, 0, 0, 0, 1, 7});
  CHECK(error_of(dir + "/magic.idx").find("not an IDX file") != std::string::npos);
  write_bytes(dir + "/type.idx", {0, 0, 0x42, 1, 0, 0, 0, 1, 7});
  CHECK(error_of(dir + "/type.idx").find("unknown IDX element type") != std::string::npos);
  write_bytes(dir + "/rank.idx", {0, 0, 8, 0});
  CHECK(error_of(dir + "/rank.idx").find("IDX rank 0") != std::string::npos);
  auto b = idx_header(0x08, {4});
  b.push_back(1);
  write_bytes(dir + "/trunc.idx", b);
  const std::string trunc = error_of(dir + "/trunc.idx");
  CHECK(trunc.find("trunc.idx") != std::string::npos);
  CHECK(trunc.find("shorter than the header's [4]") != std::string::npos);
  b = idx_header(0x08, {1});
  b.push_back(1);
  b.push_back(2);
  write_bytes(dir + "/trail.idx", b);
  CHECK(error_of(dir + "/trail.idx").find("trailing bytes") != std::string::npos);
  // A header claiming 2^32-1 x 2^32-1 elements is refused before allocating: the file cannot hold them.
  write_bytes(dir + "/huge.idx", idx_header(0x08, {0xFFFFFFFF, 0xFFFFFFFF}));
  CHECK(train::read_idx(dir + "/huge.idx").status().code() == StatusCode::kInvalidArgument);
  CHECK(error_of(dir + "/huge.idx").find("shorter than the header's [4294967295, 4294967295]") != std::string::npos);
}

TEST_CASE("IDX datasets: images scaled to [0, 1] as [N, 1, H, W], counts must agree", "[train]") {
  const std::string dir = temp_dir() + "/ds";
  std::filesystem::create_directories(dir);
  auto img = idx_header(0x08, {3, 2, 2});
  for (int i = 0; i < 12; ++i) img.push_back(static_cast<uint8_t>(i == 0 ? 255 : i));
  write_bytes(dir + "/train-images-idx3-ubyte", img);
  auto lab = idx_header(0x08, {3});
  for (uint8_t l : {0, 4, 2}) lab.push_back(l);
  write_bytes(dir + "/train-labels-idx1-ubyte", lab);
  auto d = train::load_idx_dataset(dir, "train");
  INFO(d.status().to_string());
  REQUIRE(d.ok());
  CHECK(d->images.shape() == Shape{3, 1, 2, 2});
  CHECK(d->images.data<float>()[0] == 1.0f);
  CHECK(d->images.data<float>()[7] == 7.0f / 255.0f);  // divided, as torch's x / 255 (not * (1 / 255))
  CHECK(d->labels.data<int64_t>()[1] == 4);
  CHECK(d->num_classes == 5);
  lab = idx_header(0x08, {2});
  lab.push_back(0);
  lab.push_back(1);
  write_bytes(dir + "/train-labels-idx1-ubyte", lab);
  auto bad = train::load_idx_dataset(dir, "train");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("has 3 images but") != std::string::npos);
  auto none = train::load_idx_dataset(dir, "t10k");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message().find("t10k-images-idx3-ubyte.gz") != std::string::npos);
}

TEST_CASE("architectures: lenet and mlp verify and map [N, 1, 28, 28] to [N, 10] logits", "[train]") {
  for (const std::string name : train::architecture_names()) {
    INFO(name);
    auto m = train::build_architecture(name, 28, 28, 10, 1);
    REQUIRE(m.ok());
    REQUIRE(passes::verify_model(*m).ok());
    auto s = Session::create(std::make_shared<ir::Model>(std::move(m).value()));
    REQUIRE(s.ok());
    auto x = Tensor::zeros(DType::kF32, {3, 1, 28, 28});
    auto out = (*s)->run({*x});
    REQUIRE(out.ok());
    CHECK(out->at(0).shape() == Shape{3, 10});
  }
  auto m = train::build_architecture("resnet", 28, 28, 10, 1);
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().message().find("known: lenet, mlp") != std::string::npos);
  CHECK_FALSE(train::build_architecture("lenet", 8, 8, 10, 1).ok());
}

TEST_CASE("loss plot: a PNG of the requested size, mismatched series are refused", "[train]") {
  const std::string path = temp_dir() + "/plot.png";
  std::vector<train::Series> s{{"loss", {31, 119, 180}, {0, 1, 2, 3}, {2.3, 1.0, 0.6, 0.5}}};
  REQUIRE(train::write_line_plot_png(path, s, "Training loss", "epoch", "loss", 640, 400).ok());
  int w = 0, h = 0, c = 0;
  REQUIRE(stbi_info(path.c_str(), &w, &h, &c) == 1);
  CHECK(w == 640);
  CHECK(h == 400);
  s[0].y.pop_back();
  CHECK(train::write_line_plot_png(path, s, "t", "x", "y").code() == StatusCode::kInvalidArgument);
}

TEST_CASE("shuffle: Fisher-Yates over mt19937_64 gives bench/train/shuffle.py's orders", "[train]") {
  // Printed by `python3 bench/train/shuffle.py 10 7 2` and `shuffle.py 20 3` (the Python mirror
  // that bench/train/torch_train.py shuffles with), not by this code.
  std::mt19937_64 rng(7);
  std::vector<int64_t> order{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  train::shuffle_order(order, rng);
  CHECK(order == std::vector<int64_t>{0, 7, 4, 9, 3, 1, 2, 8, 6, 5});
  train::shuffle_order(order, rng);  // the next epoch shuffles the previous order again
  CHECK(order == std::vector<int64_t>{1, 2, 6, 8, 4, 5, 9, 7, 3, 0});
  std::mt19937_64 rng3(3);
  std::vector<int64_t> twenty(20);
  for (int64_t i = 0; i < 20; ++i) twenty[static_cast<size_t>(i)] = i;
  train::shuffle_order(twenty, rng3);
  CHECK(twenty == std::vector<int64_t>{19, 6, 2, 18, 1, 4, 14, 16, 3, 0, 11, 10, 9, 15, 8, 5, 12, 13, 17, 7});
  std::vector<int64_t> one{4};
  train::shuffle_order(one, rng3);
  CHECK(one == std::vector<int64_t>{4});
}
