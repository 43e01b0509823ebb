// The executor's per-call scratch memory (core/exec/scratch_arena.h).
#include <catch2/catch.hpp>

#include <cstdint>

#include "core/exec/scratch_arena.h"

using namespace tsr;

TEST_CASE("ScratchArena: aligned pieces, reused after reset, no allocation once it holds the largest call") {
  exec::ScratchArena arena;
  // One "call" asking for several pieces, the second larger than the first block.
  auto call = [&] {
    for (size_t bytes : {100u, 5000u, 70u, 20000u}) {
      auto p = arena.allocate(bytes);
      REQUIRE(p.ok());
      CHECK(reinterpret_cast<uintptr_t>(*p) % exec::ScratchArena::kAlign == 0);
      static_cast<char*>(*p)[bytes - 1] = 1;  // the whole piece is usable
    }
    arena.reset();
  };
  call();
  const size_t capacity = arena.capacity();
  const size_t system = tensor_memory_stats().system_allocations;
  for (int i = 0; i < 5; ++i) call();
  CHECK(arena.capacity() == capacity);
  CHECK(tensor_memory_stats().system_allocations == system);
  // Pieces of one call never overlap.
  char* a = static_cast<char*>(*arena.allocate(256));
  char* b = static_cast<char*>(*arena.allocate(256));
  CHECK((b >= a + 256 || a >= b + 256));
  arena.reset();
}

TEST_CASE("ScratchArena: requests are charged to the memory budget and fail with kResource past it") {
  auto budget = std::make_shared<MemoryBudget>(size_t{1} << 20);
  MemoryBudgetScope scope(budget);
  exec::ScratchArena arena;
  REQUIRE(arena.allocate(size_t{256} << 10).ok());
  CHECK(budget->used() >= (size_t{256} << 10));
  auto too_big = arena.allocate(size_t{4} << 20);
  REQUIRE_FALSE(too_big.ok());
  CHECK(too_big.status().code() == StatusCode::kResource);
}
