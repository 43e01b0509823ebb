// .npy reading/writing. Reference bytes come from numpy 1.24 (np.save into a BytesIO), noted in
// comments: header text, total file length and the data bytes.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "core/io/npy.h"

namespace {

using tsr::DType;
using tsr::Tensor;

std::vector<uint8_t> bytes_of(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// Builds a .npy image: preamble for `major`, then `header` padded with spaces + '\n' to `total`
// (the padded header length numpy uses), then `data`.
std::vector<uint8_t> make_npy(int major, const std::string& header, size_t total, const std::vector<uint8_t>& data) {
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const size_t pre = major == 1 ? 10 : 12;
  const size_t hl = total - pre;
  out.push_back(static_cast<char>(hl & 0xff));
  out.push_back(static_cast<char>(hl >> 8));
  if (major != 1) { out.push_back(0); out.push_back(0); }
  std::string h = header;
  h.append(hl - h.size() - 1, ' ');
  h.push_back('\n');
  out += h;
  std::vector<uint8_t> v = bytes_of(out);
  v.insert(v.end(), data.begin(), data.end());
  return v;
}

tsr::Expected<Tensor> parse(const std::vector<uint8_t>& b) { return tsr::io::parse_npy(b.data(), b.size(), "t.npy"); }

}  // namespace

TEST_CASE("npy: serialize matches numpy's np.save bytes", "[npy]") {
  // np.save(np.array([[1,2,3],[4,5,6]], dtype='<f4')): 152 bytes, header
  // "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data 0000803f 00000040 ...
  auto t = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = tsr::io::serialize_npy(t);
  REQUIRE(b.ok());
  const auto expected = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 128,
                                 {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40,
                                  0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40, 0x00, 0x00, 0xc0, 0x40});
  CHECK(b->size() == 152);
  CHECK(*b == expected);

  // np.save(np.array([True, False, True])): 131 bytes, "(3,)", '|b1', data 010001.
  auto tb = Tensor::from<bool>({3}, {true, false, true});
  auto bb = tsr::io::serialize_npy(tb);
  REQUIRE(bb.ok());
  CHECK(*bb == make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 128, {1, 0, 1}));

  // np.save(np.array(7, dtype=np.int64)): 136 bytes, shape ().
  auto ts = Tensor::scalar<int64_t>(7);
  auto bs = tsr::io::serialize_npy(ts);
  REQUIRE(bs.ok());
  CHECK(*bs == make_npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 128,
                        {7, 0, 0, 0, 0, 0, 0, 0}));
}

TEST_CASE("npy: parse f16, bool, v2 and v3 headers", "[npy]") {
  // np.save(np.array([1.5, -2], dtype=np.float16)): data 003e 00c0.
  auto t = parse(make_npy(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", 128, {0x00, 0x3e, 0x00, 0xc0}));
  REQUIRE(t.ok());
  CHECK(t->dtype() == DType::kF16);
  CHECK(t->shape() == tsr::Shape{2});
  CHECK(tsr::f16_to_f32(t->data<uint16_t>()[0]) == 1.5f);
  CHECK(tsr::f16_to_f32(t->data<uint16_t>()[1]) == -2.0f);

  // Bools other than 0/1 are normalized.
  auto b = parse(make_npy(2, "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 1), }", 128, {0, 5}));
  REQUIRE(b.ok());
  CHECK(b->shape() == tsr::Shape{2, 1});
  CHECK(static_cast<const uint8_t*>(b->raw())[1] == 1);

  auto u = parse(make_npy(3, "{\"descr\": \"|u1\", \"shape\": (3,), \"fortran_order\": False}", 128, {9, 8, 7}));
  REQUIRE(u.ok());
  CHECK(u->dtype() == DType::kU8);
  CHECK(u->data<uint8_t>()[2] == 7);
}

TEST_CASE("npy: round trip through a file for every numeric dtype", "[npy]") {
  const std::string path = "npy_test_roundtrip.npy";
  for (DType d : {DType::kF16, DType::kF32, DType::kF64, DType::kI8, DType::kI16, DType::kI32, DType::kI64,
                  DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kBool}) {
    auto t = Tensor::zeros(d, {2, 3, 1});
    REQUIRE(t.ok());
    auto* p = static_cast<uint8_t*>(t->raw_mut());
    for (size_t i = 0; i < t->nbytes(); ++i) p[i] = d == DType::kBool ? (i % 2) : static_cast<uint8_t>(i * 7 + 1);
    REQUIRE(tsr::io::write_npy_file(*t, path).ok());
    auto r = tsr::io::read_npy_file(path);
    REQUIRE(r.ok());
    CHECK(r->dtype() == d);
    CHECK(r->shape() == t->shape());
    CHECK(std::vector<uint8_t>(p, p + t->nbytes()) ==
          std::vector<uint8_t>(static_cast<const uint8_t*>(r->raw()), static_cast<const uint8_t*>(r->raw()) + r->nbytes()));
  }
  std::remove(path.c_str());
  auto missing = tsr::io::read_npy_file("does/not/exist.npy");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == tsr::StatusCode::kNotFound);
  CHECK(missing.status().message().find("does/not/exist.npy") != std::string::npos);
}

TEST_CASE("npy: malformed and unsupported inputs are errors", "[npy]") {
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  const std::vector<uint8_t> four(4, 0);
  CHECK(parse(make_npy(1, ok_header, 128, four)).ok());

  auto code_of = [](const std::vector<uint8_t>& b) { return parse(b).status().code(); };
  using tsr::StatusCode;
  CHECK(code_of(make_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", 128, four)) ==
        StatusCode::kUnsupported);
  CHECK(code_of(make_npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 128, four)) ==
        StatusCode::kUnsupported);
  CHECK(code_of(make_npy(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", 128, four)) !=
        StatusCode::kOk);
  CHECK(code_of(make_npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 128, four)) ==
        StatusCode::kUnsupported);
  // Truncated data, trailing data, missing key, unknown key, negative dim, garbage.
  CHECK(code_of(make_npy(1, ok_header, 128, {0, 0})) == StatusCode::kInvalidModel);
  CHECK(code_of(make_npy(1, ok_header, 128, std::vector<uint8_t>(8, 0))) == StatusCode::kInvalidModel);
  CHECK(code_of(make_npy(1, "{'descr': '<f4', 'shape': (1,), }", 128, four)) == StatusCode::kInvalidModel);
  CHECK(code_of(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 128, four)) ==
        StatusCode::kInvalidModel);
  CHECK(code_of(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 128, four)) ==
        StatusCode::kInvalidModel);
  CHECK(code_of(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,", 128, four)) ==
        StatusCode::kInvalidModel);
  CHECK(code_of(bytes_of("\x93NUMPX\x01\x00\x00\x00")) == StatusCode::kInvalidModel);
  CHECK(code_of(bytes_of("\x93NUMPY")) == StatusCode::kInvalidModel);
  // A header length pointing past the end of the file.
  auto b = make_npy(1, ok_header, 128, four);
  b[9] = 0x7f;
  CHECK(code_of(b) == StatusCode::kInvalidModel);
  // Huge shapes: overflow and the allocation limit, without allocating.
  CHECK(code_of(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }",
                         128, four)) != StatusCode::kOk);
  CHECK(code_of(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                         128, four)) == StatusCode::kInvalidModel);
  CHECK(code_of(make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", 128,
                         four)) == StatusCode::kResource);
  // bf16 has no numpy dtype.
  auto bf = Tensor::zeros(DType::kBF16, {1});
  REQUIRE(bf.ok());
  CHECK(tsr::io::serialize_npy(*bf).status().code() == StatusCode::kUnsupported);
}

TEST_CASE("npy: unicode strings match numpy's '<U' arrays", "[npy]") {
  // np.save(np.array(['ab', 'ü'])): 144 bytes, '<U2', data 61000000 62000000 fc000000 00000000.
  const auto expected = make_npy(1, "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", 128,
                                 {0x61, 0, 0, 0, 0x62, 0, 0, 0, 0xfc, 0, 0, 0, 0, 0, 0, 0});
  Tensor t = Tensor::empty(DType::kString, {2}).value();
  t.mut_data<std::string>()[0] = "ab";
  t.mut_data<std::string>()[1] = "\xc3\xbc";  // ü in UTF-8
  auto b = tsr::io::serialize_npy(t);
  REQUIRE(b.ok());
  CHECK(*b == expected);
  auto back = parse(expected);
  REQUIRE(back.ok());
  REQUIRE(back->dtype() == DType::kString);
  CHECK(back->data<std::string>()[0] == "ab");
  CHECK(back->data<std::string>()[1] == "\xc3\xbc");

  // Not UTF-8: an error naming the element, not a garbled file.
  t.mut_data<std::string>()[1] = "\xff";
  CHECK(tsr::io::serialize_npy(t).status().code() == tsr::StatusCode::kInvalidArgument);
  // A code point past U+10FFFF in the file; a zero width.
  auto bad = expected;
  bad[128 + 11] = 0x7f;
  CHECK(parse(bad).status().code() == tsr::StatusCode::kInvalidModel);
  CHECK(parse(make_npy(1, "{'descr': '<U0', 'fortran_order': False, 'shape': (2,), }", 128, {})).status().code() ==
        tsr::StatusCode::kInvalidModel);
}
