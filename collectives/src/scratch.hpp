// The algorithms' temporary buffers (Buffer: a std::vector in all but its allocator).
// A collective would otherwise allocate its temporaries on every call: for large messages it
// would map fresh pages, fault them in and zero them, which costs more than the copy it serves,
// and for small ones malloc and free would cost as much as the message. Blocks go back to a
// per-thread cache (VP threads live as long as their Machine) and come out of it again for the
// next call, already in this VP's cache and on its NUMA node; and a Buffer's bytes start
// uninitialized, since every algorithm writes them before it reads them.
#pragma once

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace hypercomm::detail {

// A cached block of at least `bytes` (rounded up to a power of two, kSmallScratchBytes at
// least), or a new one.
[[nodiscard]] void* take_scratch_block(std::size_t bytes);
// Returns a block from take_scratch_block; the thread keeps a bounded number of bytes.
void give_scratch_block(void* block, std::size_t bytes) noexcept;

// The smallest blocks, those of a small message's temporaries, also pass through two slots of
// the thread's own that the allocator reads inline: the cache's lists cost about 100
// instructions a block taken and given back (callgrind: the root of a reduce of 8 bytes over
// 2 VPs, once a call). The slots hold blocks only while the thread's cache lives (its
// destructor frees them), so a block that another thread gives back goes to the lists.
inline constexpr std::size_t kSmallScratchBytes = 256;
struct SmallScratch {
  void* slot[2] = {nullptr, nullptr};
  bool open = false;  // the thread's cache is constructed and not yet destroyed
};
inline constinit thread_local SmallScratch tl_small_scratch;

[[nodiscard]] inline void* take_scratch(std::size_t bytes) {
  if (bytes <= kSmallScratchBytes) {
    SmallScratch& small = tl_small_scratch;
    for (void*& slot : small.slot)
      if (slot != nullptr) return std::exchange(slot, nullptr);
  }
  return take_scratch_block(bytes);
}
inline void give_scratch(void* block, std::size_t bytes) noexcept {
  if (bytes <= kSmallScratchBytes) {
    SmallScratch& small = tl_small_scratch;
    if (small.open)
      for (void*& slot : small.slot)
        if (slot == nullptr) {
          slot = block;
          return;
        }
  }
  give_scratch_block(block, bytes);
}

template <class T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() noexcept = default;
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}

  [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(take_scratch(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { give_scratch(p, n * sizeof(T)); }
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
