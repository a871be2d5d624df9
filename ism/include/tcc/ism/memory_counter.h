// Byte accounting for the ISM's own storage. Every container the workspace
// allocates (accumulation arrays, all arrays, merge temporaries, map nodes)
// goes through CountingAllocator, so `memoryCounter().peakBytes()` is the
// workspace's true high-water mark, excluding the caller's inputs. Relaxed
// atomics: the pipelining thread allocates too.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace tcc::ism {

class MemoryCounter {
 public:
  void allocated(std::size_t bytes) {
    int64_t now = current_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
                  static_cast<int64_t>(bytes);
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void freed(std::size_t bytes) {
    current_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  }
  int64_t currentBytes() const { return current_.load(std::memory_order_relaxed); }
  int64_t peakBytes() const { return peak_.load(std::memory_order_relaxed); }
  // Starts a new measurement: the peak restarts from what is live now.
  void resetPeak() { peak_.store(current_.load(std::memory_order_relaxed), std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> current_{0};
  std::atomic<int64_t> peak_{0};
};

// One counter per process (an inline variable: one instance across all
// translation units).
inline MemoryCounter& memoryCounter() {
  static MemoryCounter counter;
  return counter;
}

template <class T>
struct CountingAllocator {
  using value_type = T;

  CountingAllocator() = default;
  template <class U>
  CountingAllocator(const CountingAllocator<U>&) {}

  T* allocate(std::size_t n) {
    T* p = static_cast<T*>(::operator new(n * sizeof(T)));
    memoryCounter().allocated(n * sizeof(T));
    return p;
  }
  void deallocate(T* p, std::size_t n) {
    memoryCounter().freed(n * sizeof(T));
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const CountingAllocator<U>&) const { return true; }
};

}  // namespace tcc::ism
