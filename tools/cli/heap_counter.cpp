#include "tools/cli/heap_counter.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#if defined(__GLIBC__)
#include <execinfo.h>
#endif

namespace tsr::cli {

namespace {

std::atomic<size_t> g_allocations{0};
std::atomic<void (*)(size_t)> g_hook{nullptr};
thread_local bool t_in_hook = false;

void count(size_t bytes) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  void (*hook)(size_t) = g_hook.load(std::memory_order_relaxed);
  if (hook && !t_in_hook) {
    t_in_hook = true;
    hook(bytes);
    t_in_hook = false;
  }
}

void* checked(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}

void* aligned(size_t n, std::align_val_t a) {
  const size_t al = static_cast<size_t>(a);
  return std::aligned_alloc(al, (n + al - 1) / al * al);  // aligned_alloc wants a multiple
}

}  // namespace

size_t heap_allocations() { return g_allocations.load(std::memory_order_relaxed); }

void set_heap_allocation_hook(void (*hook)(size_t)) { g_hook.store(hook, std::memory_order_relaxed); }

namespace {

void print_backtrace(size_t bytes) {
  std::fprintf(stderr, "--- operator new(%zu)\n", bytes);
#if defined(__GLIBC__)
  void* frames[24];
  backtrace_symbols_fd(frames, backtrace(frames, 24), 2);
#endif
}

}  // namespace

void print_allocation_backtraces(bool on) { set_heap_allocation_hook(on ? print_backtrace : nullptr); }

}  // namespace tsr::cli

using tsr::cli::aligned;
using tsr::cli::checked;
using tsr::cli::count;

void* operator new(size_t n) { count(n); return checked(std::malloc(n ? n : 1)); }
void* operator new[](size_t n) { count(n); return checked(std::malloc(n ? n : 1)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { count(n); return std::malloc(n ? n : 1); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { count(n); return std::malloc(n ? n : 1); }
void* operator new(size_t n, std::align_val_t a) { count(n); return checked(aligned(n, a)); }
void* operator new[](size_t n, std::align_val_t a) { count(n); return checked(aligned(n, a)); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { count(n); return aligned(n, a); }
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { count(n); return aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
