// Counts this program's heap allocations: heap_counter.cpp replaces the replaceable global
// operator new (every form, [new.delete]) with versions that count each call and forward to
// malloc / aligned_alloc. Linked into `tessera` (run --warmup reports the allocations of the runs
// after the warm-up) and tests/models/alloc_test.cpp. Tensor buffers are not allocated with
// operator new: tensor_memory_stats().system_allocations counts those (core/tensor/tensor.h).
// Thread-safe (one relaxed atomic add per allocation).
#pragma once

#include <cstddef>

namespace tsr::cli {

// operator new calls since the program started, on every thread.
size_t heap_allocations();

// `hook` (null: none) is called with the size of every counted allocation, on the allocating
// thread, while `heap_allocations()` increases; it may itself allocate (calls made from inside
// the hook are counted but not hooked). For debugging: alloc_test --trace prints backtraces.
void set_heap_allocation_hook(void (*hook)(size_t bytes));

// The allocation tests' --trace (tests/models/alloc_test.cpp, tests/train/step_alloc_test.cpp):
// while on, each counted allocation prints "--- operator new(BYTES)" and a backtrace of the
// allocating thread to stderr (glibc's backtrace; elsewhere only the first line). Turn it on
// around the counted calls only. Replaces any hook set with set_heap_allocation_hook.
void print_allocation_backtraces(bool on);

}  // namespace tsr::cli
