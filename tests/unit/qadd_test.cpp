// com.microsoft::QLinearAdd (backends/cpu/kernels/qadd.cpp) against onnxruntime's x86 formula,
// written out here per element: odd lengths (whole vectors, tails, lengths under one vector), u8
// and s8, a single-element A or B, saturation at both ends, and the broadcasts it refuses.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "tests/unit/op_case.h"

using namespace tsr;
using namespace tsr::test;

namespace {

// onnxruntime's value for codes a, b (qadd.cpp's header): fma(a, ra, fma(b, rb, fixed)), or with a
// single-element input folded into fixed. `fused`: real fmas (FMA targets); else each product and
// sum rounded (targets without FMA), accepted too, since the test runs on both.
int ref_code(float a, float b, float sa, float za, float sb, float zb, float sc, float zc, int mode, bool fused,
             bool is_signed) {
  float ra = sa / sc, rb = sb / sc;
  const float pa = ra * za, pb = rb * zb;
  float fixed = zc - (pa + pb);
  auto madd = [&](float x, float r, float t) { return fused ? std::fma(x, r, t) : x * r + t; };
  float v;
  if (mode == 1) {  // single-element A
    const float term = a * ra;
    fixed = fixed + term;
    v = madd(b, rb, fixed);
  } else if (mode == 2) {  // single-element B
    const float term = b * rb;
    fixed = fixed + term;
    v = madd(a, ra, fixed);
  } else {
    v = madd(a, ra, madd(b, rb, fixed));
  }
  const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
  return static_cast<int>(std::nearbyint(std::min(hi, std::max(lo, v))));
}

template <typename Q>
Tensor codes(const Shape& s, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(std::is_signed_v<Q> ? -128 : 0, std::is_signed_v<Q> ? 127 : 255);
  std::vector<Q> v(static_cast<size_t>(shape_numel(s)));
  for (auto& x : v) x = static_cast<Q>(u(rng));
  return Tensor::from<Q>(s, v);
}

template <typename Q>
void check_qadd(const Shape& sa_shape, const Shape& sb_shape, std::mt19937& rng, int threads = 1) {
  std::uniform_real_distribution<float> scale(0.01f, 0.2f);
  std::uniform_int_distribution<int> zp(std::is_signed_v<Q> ? -128 : 0, std::is_signed_v<Q> ? 127 : 255);
  const float sa = scale(rng), sb = scale(rng), sc = scale(rng) * 0.5f;  // sc small: some codes saturate
  const Q za = static_cast<Q>(zp(rng)), zb = static_cast<Q>(zp(rng)), zc = static_cast<Q>(zp(rng));
  OpCase c;
  c.op = "com.microsoft::QLinearAdd";
  c.inputs = {codes<Q>(sa_shape, rng), Tensor::scalar<float>(sa), Tensor::scalar<Q>(za),
              codes<Q>(sb_shape, rng), Tensor::scalar<float>(sb), Tensor::scalar<Q>(zb),
              Tensor::scalar<float>(sc), Tensor::scalar<Q>(zc)};
  auto y = run_case(c, threads);
  REQUIRE(y.ok());
  const Tensor& out = (*y)[0];
  const int64_t na = shape_numel(sa_shape), nb = shape_numel(sb_shape);
  const int mode = na == 1 ? 1 : (nb == 1 && sa_shape != sb_shape ? 2 : 0);
  REQUIRE(out.numel() == std::max(na, nb));
  int lo_hits = 0, hi_hits = 0;
  for (int64_t i = 0; i < out.numel(); ++i) {
    const float a = c.inputs[0].data<Q>()[na == 1 ? 0 : i], b = c.inputs[3].data<Q>()[nb == 1 ? 0 : i];
    const int got = out.data<Q>()[i];
    const int want = ref_code(a, b, sa, za, sb, zb, sc, zc, mode, true, std::is_signed_v<Q>);
    const int unfused = ref_code(a, b, sa, za, sb, zb, sc, zc, mode, false, std::is_signed_v<Q>);
    INFO("element " << i << " of " << out.numel() << " a " << a << " b " << b);
    CHECK((got == want || got == unfused));
    lo_hits += got == (std::is_signed_v<Q> ? -128 : 0);
    hi_hits += got == (std::is_signed_v<Q> ? 127 : 255);
  }
  if (out.numel() > 1000 && mode == 0) CHECK((lo_hits > 0 && hi_hits > 0));  // both saturations exercised
}

}  // namespace

TEST_CASE("QLinearAdd: onnxruntime's rounding on odd lengths, single-element inputs, u8 and s8") {
  std::mt19937 rng(7);
  for (const Shape& s : {Shape{1}, Shape{3}, Shape{15}, Shape{16}, Shape{17}, Shape{2, 33}, Shape{1, 24, 56, 57}}) {
    INFO("shape " << shape_str(s));
    check_qadd<uint8_t>(s, s, rng);
    check_qadd<int8_t>(s, s, rng);
    check_qadd<uint8_t>(s, Shape{}, rng);
    check_qadd<int8_t>(Shape{1}, s, rng);
  }
  // Large tensors split into pieces over the pool (a partial last piece).
  check_qadd<uint8_t>(Shape{1, 24, 56, 57}, Shape{1, 24, 56, 57}, rng, 2);
  check_qadd<int8_t>(Shape{1, 40000}, Shape{}, rng, 2);
}

TEST_CASE("QLinearAdd: ties to even, and refused broadcasts") {
  // (a - za) * sa / sc + (b - zb) * sb / sc = 0.5 * 1 + 0.5 * 2 = 1.5 and 0.5 * 1 + 0.5 * 4 = 2.5,
  // plus zc 11: 12.5 and 13.5, ties to even after the zero point (onnxruntime's order; rounding
  // before it, as QuantizeLinear does, would give 13 and 13).
  OpCase c;
  c.op = "com.microsoft::QLinearAdd";
  c.inputs = {Tensor::from<uint8_t>({2}, {1, 1}), Tensor::scalar<float>(0.5f), Tensor::scalar<uint8_t>(0),
              Tensor::from<uint8_t>({2}, {2, 4}), Tensor::scalar<float>(0.5f), Tensor::scalar<uint8_t>(0),
              Tensor::scalar<float>(1.0f), Tensor::scalar<uint8_t>(11)};
  auto y = run_case(c);
  REQUIRE(y.ok());
  CHECK((*y)[0].data<uint8_t>()[0] == 12);
  CHECK((*y)[0].data<uint8_t>()[1] == 14);
  // [2, 3] + [1, 3]: a broadcast the kernel does not run, a clear error.
  c.inputs[0] = Tensor::from<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  c.inputs[3] = Tensor::from<uint8_t>({1, 3}, {1, 2, 3});
  auto e = run_case(c);
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().message().find("single-element") != std::string::npos);
}
