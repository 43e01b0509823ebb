// SmallVector<T, N>: a vector of trivially copyable T that keeps up to N elements inside itself.
//
// Every tensor, every inferred type and every step of the executor carries shapes and small int
// lists (axes, pads, strides). As std::vector each copy was a heap allocation, several per node
// per run; kept inline, creating, copying and comparing them allocates nothing, so a steady-state
// run can be allocation-free (issue 12). Longer contents spill to the heap and behave the same.
// `SmallVector` (core/tensor/tensor.h) and `Ints` below are SmallVector<T, 6>: rank <= 6 covers
// the real models of tests/models.
//
// The API is the subset of std::vector that the code base uses (iterators are pointers), with
// implicit conversions from and to std::vector<T> for interfaces that take vectors (the
// conversion to a vector allocates). A small-vector library (absl::InlinedVector,
// boost::container::small_vector) would do the same, but neither is available to every build
// (WASM, the aarch64 and mobile cross builds use only header-only Debian packages), and trivially
// copyable elements need little.
//
// Thread safety: like std::vector (distinct objects may be used concurrently).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <vector>

namespace tsr {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T> && N > 0);

 public:
  static constexpr size_t kInline = N;
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  SmallVector() noexcept : data_(inline_) {}
  explicit SmallVector(size_t n, T value = T()) : SmallVector() { assign(n, value); }
  SmallVector(std::initializer_list<T> dims) : SmallVector() { assign(dims.begin(), dims.end()); }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  SmallVector(It first, It last) : SmallVector() {
    assign(first, last);
  }
  SmallVector(const std::vector<T>& v) : SmallVector() { assign(v.begin(), v.end()); }  // NOLINT: implicit
  SmallVector(const SmallVector& o) : SmallVector() { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept : SmallVector() { take(o); }
  ~SmallVector() { release(); }

  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT: implicit
  std::vector<T> to_vector() const { return *this; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void clear() { size_ = 0; }
  void resize(size_t n, T value = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = static_cast<uint32_t>(n);
  }
  void assign(size_t n, T value) {
    size_ = 0;
    resize(n, value);
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    if (n > cap_) {
      size_ = 0;  // nothing to keep: grow without copying
      grow(n);
    }
    std::copy(first, last, data_);
    size_ = static_cast<uint32_t>(n);
  }
  void assign(std::initializer_list<T> dims) { assign(dims.begin(), dims.end()); }
  void push_back(T v) {
    if (size_ == cap_) grow(size_ * 2);
    data_[size_++] = v;
  }
  T& emplace_back(T v) {
    push_back(v);
    return back();
  }
  void pop_back() { --size_; }
  iterator insert(const_iterator pos, T v) { return insert(pos, size_t{1}, v); }
  iterator insert(const_iterator pos, size_t n, T v) {
    const size_t at = make_room(pos, n);
    std::fill(data_ + at, data_ + at + n, v);
    return data_ + at;
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    if (n == 0) return data_ + (pos - data_);
    if constexpr (std::is_pointer_v<It>) {
      if (first >= data_ && first < data_ + size_) {  // inserting from itself
        const SmallVector copy(first, last);
        return insert(pos, copy.begin(), copy.end());
      }
    }
    const size_t at = make_room(pos, n);
    std::copy(first, last, data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> dims) {
    return insert(pos, dims.begin(), dims.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - data_), n = static_cast<size_t>(last - first);
    std::copy(data_ + at + n, data_ + size_, data_ + at);
    size_ -= static_cast<uint32_t>(n);
    return data_ + at;
  }
  void swap(SmallVector& o) noexcept {
    SmallVector t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }
  friend bool operator<(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return data_ != inline_; }
  void release() {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    cap_ = N;
    size_ = 0;
  }
  // Takes o's dims (and its heap buffer if any), leaving o empty.
  void take(SmallVector& o) noexcept {
    if (o.on_heap()) {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = N;
    } else {
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
    }
    size_ = o.size_;
    o.size_ = 0;
  }
  void grow(size_t n) {
    n = std::max<size_t>(n, N * 2);
    T* p = new T[n];
    std::copy(data_, data_ + size_, p);
    if (on_heap()) delete[] data_;
    data_ = p;
    cap_ = static_cast<uint32_t>(n);
  }
  // Opens a gap of n dims at pos; returns its index.
  size_t make_room(const_iterator pos, size_t n) {
    const size_t at = static_cast<size_t>(pos - data_);
    reserve(size_ + n);
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += static_cast<uint32_t>(n);
    return at;
  }

  T* data_;
  uint32_t size_ = 0;
  uint32_t cap_ = N;
  T inline_[N];
};

}  // namespace tsr

namespace tsr {
// Small int lists: attribute values (axes, pads, perm), strides, shape-valued inputs.
using Ints = SmallVector<int64_t, 8>;
}  // namespace tsr
