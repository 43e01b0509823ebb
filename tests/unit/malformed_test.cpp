// Loads every file of the malformed corpus (tests/malformed/expected.txt) and checks the error
// code and message; also fuzzes the valid base model with bit flips and truncations (no crash,
// no hang: any result is either ok or a clean error with a message).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "tessera/session.h"
#include "core/io/tsr_io.h"
#include "tests/malformed/corpus.h"

namespace {

const std::string kDir = std::string(TSR_SOURCE_DIR) + "/tests/malformed/";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : line) {
    if (ch == '\t') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

// The enumerator name used in expected.txt.
std::string code_name(tsr::StatusCode c) {
  switch (c) {
    case tsr::StatusCode::kOk: return "kOk";
    case tsr::StatusCode::kInvalidModel: return "kInvalidModel";
    case tsr::StatusCode::kInvalidArgument: return "kInvalidArgument";
    case tsr::StatusCode::kUnsupported: return "kUnsupported";
    case tsr::StatusCode::kNotFound: return "kNotFound";
    case tsr::StatusCode::kResource: return "kResource";
    case tsr::StatusCode::kBackend: return "kBackend";
    case tsr::StatusCode::kInternal: return "kInternal";
  }
  return "?";
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("malformed corpus: every file fails with the expected code and message", "[io][malformed]") {
  std::ifstream expected(kDir + "expected.txt");
  REQUIRE(expected.good());
  std::string line;
  int checked = 0;
  while (std::getline(expected, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto fields = split_tabs(line);
    REQUIRE(fields.size() >= 2);
    INFO("file " << fields[0]);
    auto r = tsr::io::load_model_file(kDir + fields[0]);
    if (fields[1] == "kOk") {
      // A bit flip the format tolerates (a name, a float): the load verified it, so a Session
      // must prepare on it.
      INFO("message: " << r.status().message());
      REQUIRE(r.ok());
      auto s = tsr::Session::create(std::make_shared<tsr::ir::Model>(std::move(r).value()));
      INFO("session: " << s.status().message());
      CHECK(s.ok());
    } else {
      REQUIRE_FALSE(r.ok());
      INFO("message: " << r.status().message());
      CHECK(code_name(r.status().code()) == fields[1]);
      for (size_t k = 2; k < fields.size(); ++k) CHECK(r.status().message().find(fields[k]) != std::string::npos);
    }
    ++checked;
  }
  CHECK(checked >= 30);
}

TEST_CASE("malformed corpus: committed files match the generator", "[io][malformed]") {
  // Regenerate with the tsr_make_malformed target when this fails (see tests/malformed/CMakeLists.txt).
  for (const auto& c : tsr::corpus::all_cases()) {
    INFO("file " << c.name << ".tsr");
    CHECK(read_file(kDir + c.name + ".tsr") == c.bytes);
  }
}

TEST_CASE("malformed corpus: the base models load", "[io][malformed]") {
  auto a = tsr::io::load_model_buffer(nullptr, 0, nullptr);
  CHECK_FALSE(a.ok());
  for (const auto& m : {tsr::corpus::base_model(), tsr::corpus::if_model()}) {
    auto bytes = tsr::corpus::ser(m);
    REQUIRE_FALSE(bytes.empty());
    auto r = tsr::io::load_model_buffer(bytes.data(), bytes.size(), nullptr);
    INFO(r.status().to_string());
    CHECK(r.ok());
  }
}

TEST_CASE("malformed: every truncation and many bit flips load or fail cleanly", "[io][malformed]") {
  const auto base = tsr::corpus::ser(tsr::corpus::base_model());
  REQUIRE_FALSE(base.empty());
  for (size_t n = 0; n < base.size(); ++n) {
    std::vector<uint8_t> cut(base.begin(), base.begin() + static_cast<long>(n));
    auto r = tsr::io::load_model_buffer(cut.data(), cut.size(), nullptr);
    INFO("length " << n);
    // Nothing shorter than the constant segment's end can be a complete model.
    REQUIRE_FALSE(r.ok());
    CHECK_FALSE(r.status().message().empty());
  }
  int loaded = 0;
  for (uint32_t seed = 100; seed < 1100; ++seed) {
    const auto b = tsr::corpus::bit_flips(base, seed, 1 + static_cast<int>(seed % 4));
    auto r = tsr::io::load_model_buffer(b.data(), b.size(), nullptr);
    if (r.ok()) ++loaded;
    else CHECK_FALSE(r.status().message().empty());
  }
  // Flips in the padding or the constant data leave a valid model; most flips must not.
  CHECK(loaded < 1000);
  // The model with subgraphs and graph attributes, with flips and overwritten 8-byte words.
  const auto with_if = tsr::corpus::ser(tsr::corpus::if_model());
  REQUIRE_FALSE(with_if.empty());
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    auto b = tsr::corpus::bit_flips(with_if, seed, 1 + static_cast<int>(seed % 3));
    if (seed % 2) {
      std::mt19937 rng(seed);
      const size_t at = rng() % (b.size() - 8);
      const uint64_t v = (static_cast<uint64_t>(rng()) << 32) | rng();
      std::memcpy(b.data() + at, &v, 8);
    }
    auto r = tsr::io::load_model_buffer(b.data(), b.size(), nullptr);
    if (!r.ok()) CHECK_FALSE(r.status().message().empty());
  }
}
