// A growable array of trivially copyable elements whose buffer comes from
// the malloc family, so it can be handed to a generated kernel through the
// C ABI and taken back from one (kernels grow buffers with realloc). Arrays
// of at least hugePageMinBytes() bytes are allocated in 2 MB pages
// (tcc/runtime/array_alloc.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "tcc/runtime/array_alloc.h"

namespace tcc::rt {

// The size from which the runtime's arrays (tensor storage: pos, crd and
// values, inputs read from files, tensors built by the library, outputs
// allocated for a kernel) go to 2 MB pages advised MADV_HUGEPAGE; 0: never.
// The default is TCC_HUGE_PAGE_DEFAULT_MIN_BYTES (4 MB), or 0 when the
// environment sets TCC_HUGE_PAGES=0 (or "off") as the process starts. A
// kernel's own allocations follow CompileOptions::hugePages instead.
int64_t hugePageMinBytes();
void setHugePageMinBytes(int64_t bytes);

template <typename T>
class MallocArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  MallocArray() = default;
  explicit MallocArray(int64_t size, T fill = T{}) {
    resize(size);
    for (int64_t i = 0; i < size; ++i) data_[i] = fill;
  }
  MallocArray(const MallocArray& other) { *this = other; }
  MallocArray(MallocArray&& other) noexcept { swap(other); }
  MallocArray& operator=(const MallocArray& other) {
    if (this == &other) return *this;
    resize(0);
    resize(other.size_);
    if (other.size_ > 0) std::memcpy(data_, other.data_, sizeof(T) * other.size_);
    return *this;
  }
  MallocArray& operator=(MallocArray&& other) noexcept {
    MallocArray moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~MallocArray() { std::free(data_); }

  // Takes ownership of a buffer from the malloc family holding `size` valid elements.
  static MallocArray adopt(T* data, int64_t size, int64_t capacity) {
    MallocArray array;
    array.data_ = data;
    array.size_ = size;
    array.capacity_ = capacity < size ? size : capacity;
    return array;
  }
  // Gives up ownership; the caller frees the buffer with free().
  T* release() {
    T* data = data_;
    data_ = nullptr;
    size_ = capacity_ = 0;
    return data;
  }

  void reserve(int64_t capacity) {
    if (capacity <= capacity_) return;
    void* grown = tcc_array_realloc(data_, static_cast<long long>(sizeof(T) * size_),
                                    static_cast<long long>(sizeof(T) * capacity), hugePageMinBytes());
    if (grown == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(grown);
    capacity_ = capacity;
  }
  // New elements are left unset: for a buffer about to be overwritten whole.
  void resizeForOverwrite(int64_t size) {
    if (size > capacity_) reserve(size);
    size_ = size;
  }
  // New elements are zero-initialized.
  void resize(int64_t size) {
    if (size > capacity_) reserve(size);
    if (size > size_) std::memset(static_cast<void*>(data_ + size_), 0, sizeof(T) * (size - size_));
    size_ = size;
  }
  void push_back(T value) {
    if (size_ == capacity_) reserve(capacity_ < 8 ? 8 : capacity_ * 2);
    data_[size_++] = value;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  int64_t size() const { return size_; }
  int64_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::span<T> span() { return {data_, static_cast<size_t>(size_)}; }
  std::span<const T> span() const { return {data_, static_cast<size_t>(size_)}; }

  void swap(MallocArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
  int64_t capacity_ = 0;
};

}  // namespace tcc::rt
