// core/base/mapped_pages.h: a kernel that packed constant weights drops the pages of a .tsr
// mapping it read, and nothing else; the bytes read the same afterwards, and a Conv model run
// from a mapped .tsr gives what the same model gives from memory.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/base/mapped_pages.h"
#include "core/io/tsr_io.h"
#include "core/ir/single_node.h"
#include "core/passes/infer_types.h"
#include "tessera/session.h"

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

using namespace tsr;

namespace {

std::string temp_file(const char* stem) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + stem + "_" + std::to_string(reinterpret_cast<uintptr_t>(&temp_file)) +
         ".tsr";
}

std::vector<float> uniform(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

Tensor run_model(std::shared_ptr<ir::Model> model, const std::vector<Tensor>& feeds) {
  REQUIRE(passes::infer_types(*model).ok());
  SessionOptions opt;
  opt.num_threads = 1;
  auto session = Session::create(model, opt);
  REQUIRE(session.ok());
  auto out = (*session)->run(feeds);
  REQUIRE(out.ok());
  return (*out)[0];
}

}  // namespace

TEST_CASE("release_mapped_pages: heap memory is left alone", "[io]") {
  std::vector<float> v(1 << 16, 3.0f);
  CHECK(release_mapped_pages(v.data(), v.size() * sizeof(float)) == 0);
  CHECK(v.front() == 3.0f);
  CHECK(v.back() == 3.0f);
}

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
TEST_CASE("release_mapped_pages: a registered file mapping's whole pages are dropped, the bytes kept", "[io]") {
  const std::string path = temp_file("mapped_pages_test");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<uint8_t> bytes(8 * page);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  {
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  void* p = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  REQUIRE(p != MAP_FAILED);
  const auto* m = static_cast<const uint8_t*>(p);
  CHECK(std::memcmp(m, bytes.data(), bytes.size()) == 0);  // every page resident
  // Not registered yet: nothing dropped.
  CHECK(release_mapped_pages(m, bytes.size()) == 0);
  register_file_mapping(p, bytes.size());
  // From mid page 1 to mid page 5: pages 2..4 only, the partial ones are kept.
  CHECK(release_mapped_pages(m + page + 10, 4 * page) == 3 * page);
  CHECK(release_mapped_pages(m + 10, 20) == 0);                      // within one page
  CHECK(release_mapped_pages(m + page, 16 * page) == 0);             // past the mapping's end
  CHECK(std::memcmp(m, bytes.data(), bytes.size()) == 0);            // read back from the file
  unregister_file_mapping(p);
  CHECK(release_mapped_pages(m, bytes.size()) == 0);
  ::munmap(p, bytes.size());
  std::remove(path.c_str());
}
#endif

TEST_CASE("Conv from a mapped .tsr (weights packed, their pages dropped) equals the in-memory model", "[io]") {
  std::mt19937 rng(5);
  // 3x3 stride 1 on 14x14 (Winograd), on 7x7 (im2col, packed SGEMM: Winograd does not pay), 1x1 with
  // 96 rows (packed), and 3x3 stride 2 (no Winograd): ResNet's kinds of conv, each its own model.
  struct Case {
    Shape x, w;
    int64_t stride;
  };
  const std::vector<Case> cases = {{{1, 16, 14, 14}, {72, 16, 3, 3}, 1},
                                   {{1, 32, 7, 7}, {80, 32, 3, 3}, 1},
                                   {{1, 40, 9, 9}, {96, 40, 1, 1}, 1},
                                   {{1, 24, 15, 15}, {70, 24, 3, 3}, 2}};
  const std::string path = temp_file("mapped_conv_test");
  for (const Case& c : cases) {
    const int64_t pad = c.w[2] / 2;
    ir::Node node;
    node.op = "Conv";
    node.name = "conv";
    node.attributes = {ir::Attribute::make_ints("strides", {c.stride, c.stride}),
                       ir::Attribute::make_ints("pads", {pad, pad, pad, pad})};
    node.outputs = {0};
    const Tensor x = Tensor::from<float>(c.x, uniform(static_cast<size_t>(shape_numel(c.x)), rng));
    // 4 pages and more of weights, so that whole pages lie inside them.
    const Tensor w = Tensor::from<float>(c.w, uniform(static_cast<size_t>(shape_numel(c.w)), rng));
    const Tensor b = Tensor::from<float>({c.w[0]}, uniform(static_cast<size_t>(c.w[0]), rng));
    ir::SingleNodeModel built = ir::single_node_model(node, {{x, false}, {w, true}, {b, true}});
    INFO("x " << shape_str(c.x) << " w " << shape_str(c.w) << " stride " << c.stride);
    REQUIRE(io::save_model_file(built.model, path).ok());
    auto loaded = io::load_model_file(path);
    REQUIRE(loaded.ok());
    const Tensor want = run_model(std::make_shared<ir::Model>(std::move(built.model)), built.feeds);
    auto mapped = std::make_shared<ir::Model>(std::move(*loaded));
    const Tensor got = run_model(mapped, built.feeds);
    REQUIRE(got.shape() == want.shape());
    CHECK(std::memcmp(got.data<float>(), want.data<float>(), want.nbytes()) == 0);
    // And again from the same mapping, the weight pages dropped by the first session's kernels.
    const Tensor again = run_model(mapped, built.feeds);
    CHECK(std::memcmp(again.data<float>(), want.data<float>(), want.nbytes()) == 0);
  }
  std::remove(path.c_str());
}
