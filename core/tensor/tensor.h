// Shape and Tensor: dense, row-major (C order) n-dimensional arrays.
//
// A Tensor is a cheap handle: dtype + shape + shared ownership of its storage. Copying a Tensor
// shares the data (like a numpy view of the whole array); clone() deep-copies. Data is always
// contiguous and 64-byte aligned when Tensor allocates it. A Tensor may also wrap memory it does
// not own (memory-mapped weights in a .tsr file): `keep_alive` then holds the owner and the data
// must not be written.
//
// Allocation: storage is reference-counted intrusively, the count living in a 64-byte header in
// front of the data of the same block, and blocks are recycled by size class (see
// TensorMemoryStats). Creating, copying and destroying a tensor of rank <= kInlineDims
// therefore makes no heap allocation once the block cache holds a block of its size class: a
// steady-state run of a graph allocates nothing (issue 12; tests/models/alloc_test.cpp counts it).
//
// Thread safety: distinct Tensors may be used concurrently; writing one Tensor's data while
// another thread reads a Tensor sharing the same storage is a data race.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/small_vector.h"
#include "core/base/status.h"
#include "core/tensor/dtype.h"

namespace tsr {

// The dims of a tensor (dynamic dims are -1 in inferred types). Up to kInlineDims dims are
// stored inline (no heap allocation); see core/base/small_vector.h.
inline constexpr size_t kInlineDims = 8;
using Shape = SmallVector<int64_t, kInlineDims>;
static_assert(std::is_same_v<Shape, Ints>);

// Product of dims; 1 for a scalar (rank 0). Dims must be >= 0.
int64_t shape_numel(const Shape& s);
// "[2, 3, ?]" (negative dims print as "?").
std::string shape_str(const Shape& s);
// Row-major strides in elements.
Shape shape_strides(const Shape& s);
// Multidirectional (numpy) broadcasting of two shapes (ONNX "Broadcasting in ONNX"). Dynamic
// dims (-1) stay dynamic unless the other side decides them. Error names both shapes.
Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// Normalizes a possibly-negative axis into [0, rank); error if out of range.
Expected<int64_t> normalize_axis(int64_t axis, int64_t rank);

// Largest tensor, in bytes, that a single allocation may request (bounds allocations driven by
// untrusted files or inputs). 16 GiB on 64-bit hosts, 1 GiB on 32-bit (WASM).
size_t max_tensor_bytes();

// Bytes of tensor data allocated by Tensor::empty/zeros and not yet freed (tensors of 64 bytes
// or less and string tensors are not counted), and the highest value since the last reset: how
// benchmarks measure the peak memory of a run. `system_allocations` counts the blocks of
// Tensor::empty/zeros (tiny ones included) that came from the system allocator rather than from
// the recycled blocks of earlier tensors (a steady-state run of a graph takes every block from
// the recycled ones: 0). Process-wide, thread-safe.
struct TensorMemoryStats {
  size_t live_bytes = 0;
  size_t peak_bytes = 0;
  size_t system_allocations = 0;
};
TensorMemoryStats tensor_memory_stats();
// Sets the peak to the current live bytes.
void reset_tensor_memory_peak();

// A cap on the tensor bytes live at once for one user of the allocator (a Session). While a
// MemoryBudgetScope is active on a thread, Tensor::empty/zeros on that thread charge the budget
// and fail with kResource (naming the request, the limit and the bytes in use) instead of
// allocating past it; the bytes are credited back when the storage is freed, on any thread and
// even after the scope ended (tensors keep their budget alive). Tiny tensors (<= 64 bytes) and
// string tensors are not charged. Allocations made by intra-op worker threads inside a kernel
// (scratch) are not charged either: the cap bounds what a graph keeps alive, not kernel scratch.
// Thread-safe (atomic counter).
class MemoryBudget {
 public:
  explicit MemoryBudget(size_t limit_bytes) : limit_(limit_bytes) {}
  size_t limit() const { return limit_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  // Reserves `bytes`; false (nothing reserved) when that would exceed the limit.
  bool try_charge(size_t bytes);
  void credit(size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

 private:
  size_t limit_;
  std::atomic<size_t> used_{0};
};

// Makes `budget` the calling thread's current budget for its lifetime (scopes nest; the previous
// one is restored). `budget` may be null (no cap). Not movable.
class MemoryBudgetScope {
 public:
  explicit MemoryBudgetScope(std::shared_ptr<MemoryBudget> budget);
  ~MemoryBudgetScope();
  MemoryBudgetScope(const MemoryBudgetScope&) = delete;
  MemoryBudgetScope& operator=(const MemoryBudgetScope&) = delete;

 private:
  std::shared_ptr<MemoryBudget> budget_;
  const std::shared_ptr<MemoryBudget>* previous_;
};

// The default memory cap of a session: three quarters of the physical memory (2 GiB in the
// 32-bit WASM build, whose heap cannot exceed 4 GiB).
size_t default_memory_limit();

// What a runtime value holds. ONNX sequences (seq(tensor)) and optionals share the Tensor handle
// so that the executor, kernels and control flow pass them like any value: a sequence carries its
// element dtype and a shared, immutable list of element tensors; an empty optional is kNone. An
// optional that holds a value is represented by that value itself.
enum class ValueKind : uint8_t { kTensor = 0, kSequence = 1, kNone = 2 };
std::string_view value_kind_name(ValueKind k);

class Tensor {
 public:
  Tensor() = default;

  // A sequence of tensors of dtype `elem` (all elements must have that dtype).
  static Tensor sequence(DType elem, std::vector<Tensor> elements);
  // An empty optional ("none"), optionally remembering the dtype it would hold.
  static Tensor none(DType elem = DType::kUndefined, ValueKind would_be = ValueKind::kTensor);

  // Allocates an uninitialized tensor (zero-filled for kString). Fails with kResource if the size
  // overflows or exceeds max_tensor_bytes(), kInvalidArgument for negative dims.
  static Expected<Tensor> empty(DType dtype, const Shape& shape);
  static Expected<Tensor> zeros(DType dtype, const Shape& shape);
  // How Tensor::empty takes and gives back its block (the recycling of TensorMemoryStats).
  struct Recycling {
    bool take = true;   // may take a recycled block
    bool give = true;   // gives the block back for recycling when freed (else to the system)
  };
  // empty with explicit recycling. {take = false}: for long-lived buffers (the executor's
  // arenas), which would otherwise take a block that the next run's short-lived tensors expect to
  // find, making that run allocate. {give = false}: for a value that will not be allocated this
  // way again (the first run of a memory plan, an arena), whose block would then sit idle.
  static Expected<Tensor> empty(DType dtype, const Shape& shape, Recycling recycling);
  // A long-lived buffer (an arena): from the system and back to it when freed. Given to the
  // cache instead, the arenas of disposed sessions piled up there (a new session's arena takes
  // none of them), up to the cache's bound.
  static Expected<Tensor> empty_fresh(DType dtype, const Shape& shape) { return empty(dtype, shape, {false, false}); }
  // Wraps external memory without copying. `data` must stay valid while keep_alive lives and be
  // aligned to dtype_size(dtype). Not for kString.
  static Tensor wrap(DType dtype, const Shape& shape, const void* data,
                     std::shared_ptr<const void> keep_alive);
  // A tensor with the given values (copies them): Tensor::from<float>({2,2}, {1,2,3,4}).
  template <typename T>
  static Tensor from(const Shape& shape, const std::vector<T>& values);
  // A rank-0 tensor holding `value` (no heap allocation once the block cache is warm).
  template <typename T>
  static Tensor scalar(T value);

  bool defined() const { return dtype_ != DType::kUndefined || kind_ != ValueKind::kTensor; }
  ValueKind kind() const { return kind_; }
  bool is_sequence() const { return kind_ == ValueKind::kSequence; }
  bool is_none() const { return kind_ == ValueKind::kNone; }
  // For kNone: the kind the optional would hold (kTensor or kSequence).
  ValueKind none_of() const { return none_of_; }
  // The elements of a sequence (empty for other kinds).
  const std::vector<Tensor>& elements() const;
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  const void* raw() const { return data_; }
  // Writable pointer. Calling it on a wrapped (read-only) tensor is a contract violation.
  void* raw_mut() { return const_cast<void*>(data_); }
  template <typename T> const T* data() const { return static_cast<const T*>(data_); }
  template <typename T> T* mut_data() { return static_cast<T*>(raw_mut()); }
  bool read_only() const { return read_only_; }

  // Same data, new shape with the same element count (a view: no copy).
  Expected<Tensor> reshaped(const Shape& shape) const;
  // Element i along axis 0, as a view sharing this tensor's storage (rank - 1). Requires
  // rank >= 1 and 0 <= i < dim(0).
  Tensor index0(int64_t i) const;
  // Deep copy into freshly allocated, writable storage.
  Expected<Tensor> clone() const;
  // Element i converted to double / int64 (for small host-side reads: shapes, axes, scalars).
  double scalar_f64(int64_t i = 0) const;
  int64_t scalar_i64(int64_t i = 0) const;
  // All elements as int64 (for shape-like inputs such as Reshape's shape or Slice's starts).
  std::vector<int64_t> to_i64_vector() const;
  // The same, into a Shape (no heap allocation for up to kInlineDims elements).
  Shape to_shape() const;

  // A tensor of `dtype` and `shape` over the bytes of `owner` starting at `byte_offset`, sharing
  // owner's storage (it keeps the whole storage alive). The range must lie inside owner's data and
  // `byte_offset` be aligned to the dtype; writable when owner is. Not for kString. (The executor's
  // memory plan places intermediate values in one arena tensor this way.)
  static Tensor alias(const Tensor& owner, size_t byte_offset, DType dtype, const Shape& shape);
  // Whether both tensors hold (part of) the same storage.
  bool shares_storage(const Tensor& other) const { return storage_.get() && storage_.get() == other.storage_.get(); }

  // The owner of a tensor's bytes: a header with an atomic reference count, allocated with the
  // data (recycled blocks) or on its own (strings, sequences, wrapped memory). Internal.
  struct Storage {
    std::atomic<int32_t> refs{1};
    void (*destroy)(Storage*) = nullptr;  // called when the last reference goes
  };

 private:
  // An intrusive reference to a Storage (like std::shared_ptr, without a separate control block).
  class StorageRef {
   public:
    StorageRef() = default;
    explicit StorageRef(Storage* s) : s_(s) {}  // adopts the reference s was created with
    StorageRef(const StorageRef& o) : s_(o.s_) {
      if (s_) s_->refs.fetch_add(1, std::memory_order_relaxed);
    }
    StorageRef(StorageRef&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
    StorageRef& operator=(const StorageRef& o) {
      StorageRef(o).swap(*this);
      return *this;
    }
    StorageRef& operator=(StorageRef&& o) noexcept {
      StorageRef(std::move(o)).swap(*this);
      return *this;
    }
    ~StorageRef() {
      if (s_ && s_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) s_->destroy(s_);
    }
    void swap(StorageRef& o) noexcept { std::swap(s_, o.s_); }
    Storage* get() const { return s_; }

   private:
    Storage* s_ = nullptr;
  };

  DType dtype_ = DType::kUndefined;
  ValueKind kind_ = ValueKind::kTensor;
  ValueKind none_of_ = ValueKind::kTensor;
  Shape shape_;
  int64_t numel_ = 0;
  const void* data_ = nullptr;
  bool read_only_ = false;
  StorageRef storage_;
};

template <typename T>
Tensor Tensor::scalar(T value) {
  Tensor out = empty(DTypeOf<T>::value, Shape()).value();
  *out.mut_data<T>() = value;
  return out;
}

template <typename T>
Tensor Tensor::from(const Shape& shape, const std::vector<T>& values) {
  Expected<Tensor> t = empty(DTypeOf<T>::value, shape);
  Tensor out = std::move(t).value();
  T* p = out.mut_data<T>();
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < out.numel(); ++i) p[i] = values[i];
  return out;
}

}  // namespace tsr
