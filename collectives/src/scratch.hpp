// The algorithms' temporary buffers (Buffer: a Buffer in all but its allocator).
// A collective on large messages would otherwise map fresh pages for every temporary on every
// call, fault them in and zero them, which costs more than the copy it serves. Large blocks go
// back to a per-thread cache (VP threads live as long as their Machine) and come out of it again
// for the next call, already in this VP's cache and on its NUMA node; and a Buffer's bytes start
// uninitialized, since every algorithm writes them before it reads them.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace hypercomm::detail {

// Blocks of at least this many bytes are cached; smaller ones come from operator new.
inline constexpr std::size_t kCachedBlockBytes = 64 * 1024;

// A cached block of at least `bytes` (rounded up to a power of two), or a new one.
[[nodiscard]] void* take_scratch_block(std::size_t bytes);
// Returns a block from take_scratch_block; the thread keeps a bounded number of bytes.
void give_scratch_block(void* block, std::size_t bytes) noexcept;

template <class T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() noexcept = default;
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}

  [[nodiscard]] T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kCachedBlockBytes) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(take_scratch_block(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kCachedBlockBytes) return ::operator delete(p);
    give_scratch_block(p, bytes);
  }
  // Default-initialization: no zeroing of bytes that are about to be overwritten.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const ScratchAllocator&, const ScratchAllocator&) noexcept { return true; }
};

using Buffer = std::vector<std::byte, ScratchAllocator<std::byte>>;

}  // namespace hypercomm::detail
