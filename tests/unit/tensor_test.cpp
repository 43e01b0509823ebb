#include <catch2/catch.hpp>

#include "core/tensor/tensor.h"

using namespace tsr;

TEST_CASE("f16 conversion round-trips representable values and rounds to nearest even") {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f, 0.333251953125f})
    CHECK(f16_to_f32(f32_to_f16(f)) == f);
  CHECK(f32_to_f16(1e6f) == 0x7c00);              // overflow to +inf
  CHECK(f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00);  // halfway between 1 and next: ties to even
  CHECK(f32_to_f16(1.0f + 3.0f / 2048) == 0x3c02);
  CHECK(bf16_to_f32(f32_to_bf16(1.5f)) == 1.5f);
}

TEST_CASE("broadcast_shapes follows numpy rules and names both shapes on error") {
  CHECK(*broadcast_shapes({2, 1, 3}, {4, 1}) == Shape{2, 4, 3});
  CHECK(*broadcast_shapes({}, {5}) == Shape{5});
  CHECK(*broadcast_shapes({-1, 3}, {2, 3}) == Shape{2, 3});
  auto bad = broadcast_shapes({2, 3}, {4});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("[2, 3] and [4]") != std::string::npos);
}

TEST_CASE("Tensor allocation is aligned, bounded and shares data on copy") {
  auto t = Tensor::zeros(DType::kF32, {3, 5});
  REQUIRE(t.ok());
  CHECK(reinterpret_cast<uintptr_t>(t->raw()) % 64 == 0);
  CHECK(t->numel() == 15);
  Tensor u = *t;
  u.mut_data<float>()[4] = 7;
  CHECK(t->data<float>()[4] == 7);
  auto c = t->clone();
  c->mut_data<float>()[4] = 1;
  CHECK(t->data<float>()[4] == 7);
  auto huge = Tensor::empty(DType::kF32, {1 << 20, 1 << 20, 1 << 10});
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == StatusCode::kResource);
  auto neg = Tensor::empty(DType::kF32, {2, -1});
  CHECK(neg.status().code() == StatusCode::kInvalidArgument);
  auto r = t->reshaped({15});
  REQUIRE(r.ok());
  CHECK(r->data<float>() == t->data<float>());
  CHECK_FALSE(t->reshaped({4, 4}).ok());
}

TEST_CASE("normalize_axis accepts -r <= axis < r only") {
  CHECK(*normalize_axis(-1, 3) == 2);
  CHECK(*normalize_axis(0, 3) == 0);
  CHECK_FALSE(normalize_axis(3, 3).ok());
  CHECK_FALSE(normalize_axis(-4, 3).ok());
}

TEST_CASE("Tensor buffers are recycled: a freed size class serves the next request without the system allocator") {
  const void* first = nullptr;
  size_t after_first = 0;
  {
    auto a = Tensor::empty(DType::kF32, {3, 1237});  // 14844 bytes: size class 16384
    REQUIRE(a.ok());
    first = a->raw();
    after_first = tensor_memory_stats().system_allocations;
  }
  for (int i = 0; i < 5; ++i) {
    auto b = Tensor::empty(DType::kF32, {3, 1200});  // 14400 bytes: the same size class
    REQUIRE(b.ok());
    CHECK(b->raw() == first);
  }
  CHECK(tensor_memory_stats().system_allocations == after_first);
}

TEST_CASE("SmallVector keeps up to N elements inline, spills beyond, and behaves like std::vector") {
  using V = SmallVector<int64_t, 4>;
  V v = {1, 2, 3};
  CHECK(v.size() == 3);
  CHECK(v.capacity() == 4);
  v.push_back(4);
  CHECK(v.capacity() == 4);  // still inline
  v.push_back(5);             // spills to the heap
  CHECK(v.capacity() >= 5);
  CHECK(v == V{1, 2, 3, 4, 5});
  v.insert(v.begin() + 1, 9);
  CHECK(v == V{1, 9, 2, 3, 4, 5});
  v.insert(v.begin(), v.begin() + 4, v.end());  // from itself
  CHECK(v == V{4, 5, 1, 9, 2, 3, 4, 5});
  v.erase(v.begin(), v.begin() + 5);
  CHECK(v == V{3, 4, 5});
  V moved = std::move(v);
  CHECK(moved == V{3, 4, 5});
  CHECK(v.empty());
  const std::vector<int64_t> as_vector = moved;
  CHECK(as_vector == std::vector<int64_t>{3, 4, 5});
  const V back(as_vector);
  CHECK(back == moved);
  CHECK(V{1, 2} < V{1, 3});
  V big(10, 7);
  V copy = big;
  copy[9] = 8;
  CHECK(big[9] == 7);
  copy = V{1};
  CHECK(copy.size() == 1);
  copy.resize(3, -1);
  CHECK(copy == V{1, -1, -1});
}

TEST_CASE("Tensor storage: copies and views share one reference-counted block, recycled when the last goes") {
  auto t = Tensor::empty(DType::kF32, {4, 100});
  REQUIRE(t.ok());
  const void* block = t->raw();
  Tensor view = Tensor::alias(*t, 64, DType::kF32, {16});
  CHECK(view.raw() == static_cast<const char*>(block) + 64);
  CHECK(view.shares_storage(*t));
  CHECK_FALSE(view.shares_storage(*Tensor::empty(DType::kF32, {4, 100})));
  *t = Tensor();  // the view keeps the block alive
  view.mut_data<float>()[0] = 3;
  CHECK(view.data<float>()[0] == 3);
  view = Tensor();  // the last reference: the block goes back to the cache
  auto again = Tensor::empty(DType::kF32, {4, 100});
  CHECK(again->raw() == block);
  // empty_fresh never takes a recycled block.
  const void* recycled = again->raw();
  *again = Tensor();
  auto fresh = Tensor::empty_fresh(DType::kF32, {4, 100});
  CHECK(fresh->raw() != recycled);
}

TEST_CASE("A freed empty_fresh block (an arena) goes back to the system, not into the block cache") {
  // Hold blocks of one size class until one comes from the system: the cache then has none of
  // that class (whatever earlier tests left there).
  const Shape shape{3, 4099};  // 49188 bytes
  std::vector<Tensor> held;
  for (size_t s0 = 0; held.size() < 10000;) {
    s0 = tensor_memory_stats().system_allocations;
    auto t = Tensor::empty(DType::kF32, shape);
    REQUIRE(t.ok());
    held.push_back(std::move(t).value());
    if (tensor_memory_stats().system_allocations > s0) break;
  }
  const size_t before = tensor_memory_stats().system_allocations;
  { auto arena = Tensor::empty_fresh(DType::kF32, shape); }
  CHECK(tensor_memory_stats().system_allocations == before + 1);
  // Had the arena's block gone into the cache, this request would take it (no system allocation):
  // every disposed session's arena piled up there.
  auto next = Tensor::empty(DType::kF32, shape);
  CHECK(tensor_memory_stats().system_allocations == before + 2);
}

TEST_CASE("Tiny tensors (scalars, shapes) are recycled too: creating them again allocates nothing") {
  {
    // Warm the 64-byte class with two blocks: the loop below holds two tiny tensors at once.
    Tensor a = Tensor::scalar<int64_t>(0), b = Tensor::scalar<int64_t>(1);
  }
  const size_t before = tensor_memory_stats().system_allocations;
  for (int i = 0; i < 100; ++i) {
    Tensor s = Tensor::scalar<int64_t>(i);
    CHECK(s.data<int64_t>()[0] == i);
    Tensor shape = Tensor::from<int64_t>({4}, {1, 2, 3, 4});
    CHECK(shape.rank() == 1);
  }
  CHECK(tensor_memory_stats().system_allocations == before);
}
