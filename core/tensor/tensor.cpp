#include "core/tensor/tensor.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

// clang spells "this is a sanitizer build" with __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TSR_HAS_SANITIZER 1
#endif
#endif
#ifndef TSR_HAS_SANITIZER
#define TSR_HAS_SANITIZER 0
#endif

namespace tsr {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += s[i] < 0 ? std::string("?") : std::to_string(s[i]);
  }
  return out + "]";
}

Shape shape_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db) out[i] = da;
    else if (da == 1) out[i] = db;
    else if (db == 1) out[i] = da;
    else if (da < 0) out[i] = db;  // dynamic against a known dim: the known one must win
    else if (db < 0) out[i] = da;
    else
      return invalid_argument("shapes ", shape_str(a), " and ", shape_str(b),
                              " cannot be broadcast (dim ", i, ": ", da, " vs ", db, ")");
  }
  return out;
}

Expected<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  const int64_t lo = rank == 0 ? -1 : -rank;
  const int64_t hi = rank == 0 ? 0 : rank - 1;
  if (axis < lo || axis > hi)
    return invalid_argument("axis ", axis, " out of range for rank ", rank);
  return axis < 0 ? axis + std::max<int64_t>(rank, 1) : axis;
}

size_t max_tensor_bytes() {
  return sizeof(void*) >= 8 ? (size_t{16} << 30) : (size_t{1} << 30);
}

namespace {

// Bytes held by tensor storage (relaxed atomics: two per allocation, no lock).
std::atomic<size_t> g_live_bytes{0}, g_peak_bytes{0};
std::atomic<size_t> g_system_allocations{0};

// A block from Tensor::empty: this header, then (64 bytes in, so 64-byte aligned) the data. The
// reference count of Tensor::Storage lives here, so a tensor costs one block and no control
// block; a freed block goes back to the BlockCache header and all.
struct BlockHeader : Tensor::Storage {
  size_t cls = 0;          // data bytes (the size class)
  bool counted = false;    // counted in live bytes (and charged to `budget`): tensors over 64 bytes
  bool cached = false;     // returns to the BlockCache when freed (else to the system)
  std::shared_ptr<MemoryBudget> budget;
  BlockHeader* next_free = nullptr;  // the BlockCache's free list
  unsigned char* data() { return reinterpret_cast<unsigned char*>(this) + kHeaderBytes; }
  static constexpr size_t kHeaderBytes = 64;
};
static_assert(sizeof(BlockHeader) <= BlockHeader::kHeaderBytes);

// Recycles freed tensor blocks by size class. Running a graph allocates and frees the same
// intermediate sizes over and over; handing a block straight back avoids the malloc/mmap/munmap
// churn and the page faults of touching fresh pages (which dominated small models), and makes a
// steady-state run allocation-free. Bounded: at most kMaxCachedBytes are held idle in total and
// blocks over kMaxBlockBytes are never cached. The free lists run through the blocks' headers
// (no bookkeeping allocations). Thread-safe (one mutex; a run does a few hundred allocations).
class BlockCache {
 public:
  static constexpr size_t kMaxBlockBytes = size_t{64} << 20;
  static constexpr size_t kMaxCachedBytes = size_t{128} << 20;

  static BlockCache& get() {
    // Leaked on purpose: tensors held by other static objects may be freed after main returns.
    static BlockCache* cache = new BlockCache();
    return *cache;
  }
  // Size class of a request: rounded up to a quarter of its power of two (<= 25% waste), at
  // least 64 bytes.
  static size_t size_class(size_t bytes) {
    const size_t q = std::max<size_t>(64, std::bit_floor(std::max<size_t>(bytes, 1)) / 4);
    return (std::max<size_t>(bytes, 1) + q - 1) / q * q;
  }
  BlockHeader* take(size_t cls) {
    const size_t i = index(cls);
    std::lock_guard<std::mutex> lock(mu_);
    BlockHeader* h = free_[i];
    if (!h) return nullptr;
    free_[i] = h->next_free;
    cached_ -= cls;
    return h;
  }
  // False when the cache is full (the caller frees the block).
  bool give(BlockHeader* h) {
    const size_t i = index(h->cls);
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + h->cls > kMaxCachedBytes) return false;
    h->next_free = free_[i];
    free_[i] = h;
    cached_ += h->cls;
    return true;
  }

 private:
  // Classes up to 256 bytes are multiples of 64 (4 of them); above, 4 per power of two: for
  // 2^k < cls <= 2^(k+1), cls = 2^k + j * 2^(k-2) with j in 1..4.
  static size_t index(size_t cls) {
    if (cls <= 256) return cls / 64 - 1;
    const int k = std::bit_width(cls - 1) - 1;
    const size_t j = (cls - (size_t{1} << k)) >> (k - 2);
    return 4 + static_cast<size_t>(k - 8) * 4 + (j - 1);
  }
  static constexpr size_t kClasses = 4 + (26 - 8) * 4;  // up to kMaxBlockBytes = 2^26

  std::mutex mu_;
  BlockHeader* free_[kClasses] = {};
  size_t cached_ = 0;
};

// Large blocks come straight from the OS (mmap) and go straight back (munmap). Through malloc,
// freeing one raises glibc's mmap threshold, after which large blocks come from its heap and stay
// resident when freed: the first run of a memory plan, which frees its planned values as it
// goes, peaked at 4x the resident memory of later runs (PP-OCRv4 rec: 200 MB for 20 MB of
// live data). Sanitizer builds keep malloc, which they check; WASM has no separate mappings.
#if (defined(__linux__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__) && !TSR_HAS_SANITIZER
constexpr size_t kMapBytes = size_t{256} << 10;
#else
constexpr size_t kMapBytes = ~size_t{0};
#endif

void* system_block(size_t total) {
  if (total >= kMapBytes) {
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;  // page-aligned
  }
  return std::aligned_alloc(64, total);
}

void free_block(void* p, size_t total) {
  if (total >= kMapBytes) munmap(p, total);
  else std::free(p);
}

void destroy_block(Tensor::Storage* s) {
  auto* h = static_cast<BlockHeader*>(s);
  if (h->counted) {
    g_live_bytes.fetch_sub(h->cls, std::memory_order_relaxed);
    if (h->budget) h->budget->credit(h->cls);
  }
  h->budget.reset();
  if (h->cached && BlockCache::get().give(h)) return;
  const size_t total = BlockHeader::kHeaderBytes + h->cls;
  h->~BlockHeader();
  free_block(h, total);
}

void count_alloc(size_t bytes) {
  const size_t live = g_live_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  size_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

// The calling thread's MemoryBudgetScope (null: no cap).
thread_local const std::shared_ptr<MemoryBudget>* t_budget = nullptr;

// Charges `bytes` to the thread's budget, if any; returns it for the block to credit.
Expected<std::shared_ptr<MemoryBudget>> charge_budget(size_t bytes, const Shape& shape, DType dtype) {
  if (!t_budget || !*t_budget) return std::shared_ptr<MemoryBudget>();
  const std::shared_ptr<MemoryBudget>& b = *t_budget;
  if (!b->try_charge(bytes))
    return resource_error("tensor of shape ", shape_str(shape), " (", dtype_name(dtype), ", ", bytes,
                          " bytes) exceeds the session's memory limit of ", b->limit(), " bytes (",
                          b->used(), " in use; raise it with --max-memory / max_memory_bytes)");
  return b;
}

// A block of `cls` data bytes with its header: from the cache when it has one (and `take`),
// else from the system (counted in system_allocations). Null when the system has no memory.
// `cached`: the block returns to the cache when freed.
BlockHeader* new_block(size_t cls, bool cached, bool take) {
  BlockHeader* h = take ? BlockCache::get().take(cls) : nullptr;
  if (!h) {
    void* p = system_block(BlockHeader::kHeaderBytes + cls);
    if (!p) return nullptr;
    g_system_allocations.fetch_add(1, std::memory_order_relaxed);
    h = new (p) BlockHeader();
    h->destroy = destroy_block;
  }
  h->refs.store(1, std::memory_order_relaxed);
  h->cls = cls;
  h->cached = cached;
  return h;
}

// Storage allocated on its own: strings, sequences, wrapped memory's owner.
template <typename T>
struct HeapStorage : Tensor::Storage {
  T value;
  static HeapStorage* create() {
    auto* s = new HeapStorage();
    s->destroy = [](Tensor::Storage* p) { delete static_cast<HeapStorage*>(p); };
    return s;
  }
};
using StringStorage = HeapStorage<std::vector<std::string>>;

}  // namespace

Expected<Tensor> Tensor::empty(DType dtype, const Shape& shape) { return empty(dtype, shape, Recycling{}); }

Expected<Tensor> Tensor::empty(DType dtype, const Shape& shape, Recycling recycling) {
  if (dtype_size(dtype) == 0) return invalid_argument("cannot allocate a tensor of dtype ", dtype_name(dtype));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return invalid_argument("cannot allocate shape ", shape_str(shape), ": negative dim");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return resource_error("shape ", shape_str(shape), " overflows int64");
    n *= d;
  }
  const size_t esize = dtype_size(dtype);
  if (static_cast<uint64_t>(n) > max_tensor_bytes() / esize)
    return resource_error("tensor of shape ", shape_str(shape), " (", dtype_name(dtype),
                          ") exceeds the ", max_tensor_bytes() >> 20, " MiB allocation limit");
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.numel_ = n;
  if (dtype == DType::kString) {
    StringStorage* s = StringStorage::create();
    s->value.resize(static_cast<size_t>(n));
    t.data_ = s->value.data();
    t.storage_ = StorageRef(s);
    return t;
  }
  const size_t bytes = static_cast<size_t>(n) * esize;
  // Scalars and tiny tensors (shapes, indices, loop counters) are neither counted nor charged.
  const bool tiny = bytes <= 64;
  // Blocks up to kMaxBlockBytes come in size classes and may be recycled; larger ones never are.
  const bool recyclable = bytes <= BlockCache::kMaxBlockBytes;
  const size_t cls = recyclable ? BlockCache::size_class(bytes) : (bytes + 63) / 64 * 64;
  std::shared_ptr<MemoryBudget> budget;
  if (!tiny) {
    TSR_ASSIGN_OR_RETURN(budget, charge_budget(cls, shape, dtype));
  }
  BlockHeader* h = new_block(cls, recyclable && recycling.give, recyclable && recycling.take);
  if (!h) {
    if (budget) budget->credit(cls);
    return resource_error("out of memory allocating ", cls, " bytes");
  }
  h->counted = !tiny;
  if (!tiny) {
    count_alloc(cls);
    h->budget = std::move(budget);
  }
  t.data_ = h->data();
  t.storage_ = StorageRef(h);
  return t;
}

bool MemoryBudget::try_charge(size_t bytes) {
  size_t cur = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || cur > limit_ - bytes) return false;
  } while (!used_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  return true;
}

MemoryBudgetScope::MemoryBudgetScope(std::shared_ptr<MemoryBudget> budget)
    : budget_(std::move(budget)), previous_(t_budget) {
  t_budget = &budget_;
}

MemoryBudgetScope::~MemoryBudgetScope() { t_budget = previous_; }

size_t default_memory_limit() {
#if defined(__EMSCRIPTEN__) || UINTPTR_MAX == 0xffffffffu
  return size_t{2} << 30;
#else
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return size_t{8} << 30;  // unknown: a conservative 8 GiB
  return static_cast<size_t>(pages) / 4 * 3 * static_cast<size_t>(page);
#endif
}

TensorMemoryStats tensor_memory_stats() {
  return {g_live_bytes.load(std::memory_order_relaxed), g_peak_bytes.load(std::memory_order_relaxed),
          g_system_allocations.load(std::memory_order_relaxed)};
}

void reset_tensor_memory_peak() { g_peak_bytes.store(g_live_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed); }

std::string_view value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::kTensor: return "tensor";
    case ValueKind::kSequence: return "sequence";
    case ValueKind::kNone: return "none";
  }
  return "unknown";
}

namespace {
using SequenceStorage = HeapStorage<std::vector<Tensor>>;
}  // namespace

Tensor Tensor::sequence(DType elem, std::vector<Tensor> elements) {
  Tensor t;
  t.dtype_ = elem;
  t.kind_ = ValueKind::kSequence;
  SequenceStorage* s = SequenceStorage::create();
  s->value = std::move(elements);
  t.numel_ = static_cast<int64_t>(s->value.size());
  t.data_ = &s->value;
  t.read_only_ = true;
  t.storage_ = StorageRef(s);
  return t;
}

Tensor Tensor::none(DType elem, ValueKind would_be) {
  Tensor t;
  t.dtype_ = elem;
  t.kind_ = ValueKind::kNone;
  t.none_of_ = would_be;
  return t;
}

const std::vector<Tensor>& Tensor::elements() const {
  static const std::vector<Tensor> kEmpty;
  return kind_ == ValueKind::kSequence ? *static_cast<const std::vector<Tensor>*>(data_) : kEmpty;
}

Expected<Tensor> Tensor::zeros(DType dtype, const Shape& shape) {
  TSR_ASSIGN_OR_RETURN(Tensor t, empty(dtype, shape));
  if (dtype != DType::kString) std::memset(t.raw_mut(), 0, t.nbytes());
  return t;
}

Tensor Tensor::wrap(DType dtype, const Shape& shape, const void* data,
                    std::shared_ptr<const void> keep_alive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.numel_ = shape_numel(shape);
  t.data_ = data;
  t.read_only_ = true;
  if (keep_alive) {
    auto* s = HeapStorage<std::shared_ptr<const void>>::create();
    s->value = std::move(keep_alive);
    t.storage_ = StorageRef(s);
  }
  return t;
}

Tensor Tensor::alias(const Tensor& owner, size_t byte_offset, DType dtype, const Shape& shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.numel_ = shape_numel(shape);
  t.data_ = static_cast<const char*>(owner.data_) + byte_offset;
  t.read_only_ = owner.read_only_;
  t.storage_ = owner.storage_;
  return t;
}

Expected<Tensor> Tensor::reshaped(const Shape& shape) const {
  if (shape_numel(shape) != numel_)
    return invalid_argument("cannot reshape ", shape_str(shape_), " to ", shape_str(shape));
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::index0(int64_t i) const {
  Tensor t = *this;
  t.shape_.erase(t.shape_.begin());
  t.numel_ = shape_numel(t.shape_);
  t.data_ = static_cast<const char*>(data_) + static_cast<size_t>(i * t.numel_) * dtype_size(dtype_);
  return t;
}

Expected<Tensor> Tensor::clone() const {
  TSR_ASSIGN_OR_RETURN(Tensor t, empty(dtype_, shape_));
  if (dtype_ == DType::kString) {
    const auto* src = data<std::string>();
    auto* dst = t.mut_data<std::string>();
    for (int64_t i = 0; i < numel_; ++i) dst[i] = src[i];
  } else if (numel_ > 0) {
    std::memcpy(t.raw_mut(), data_, nbytes());
  }
  return t;
}

double Tensor::scalar_f64(int64_t i) const {
  double v = 0;
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T x = data<T>()[i];
    if constexpr (std::is_same_v<T, Half>) v = f16_to_f32(x.bits);
    else if constexpr (std::is_same_v<T, BFloat16>) v = bf16_to_f32(x.bits);
    else v = static_cast<double>(x);
  });
  return v;
}

int64_t Tensor::scalar_i64(int64_t i) const {
  if (dtype_is_integer(dtype_) || dtype_ == DType::kBool) {
    int64_t v = 0;
    dispatch_dtype(dtype_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>) v = static_cast<int64_t>(data<T>()[i]);
    });
    return v;
  }
  return static_cast<int64_t>(scalar_f64(i));
}

Shape Tensor::to_shape() const {
  Shape out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = scalar_i64(i);
  return out;
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = scalar_i64(i);
  return out;
}

}  // namespace tsr
