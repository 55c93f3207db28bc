#include "scratch.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <utility>

namespace hypercomm::detail {

namespace {

// Per thread: one list of free blocks per power-of-two size, at most kKeptBytes in all.
constexpr std::size_t kKeptBytes = std::size_t{64} << 20;
constexpr int kClasses = 48;

struct ScratchCache {
  std::vector<void*> free[kClasses];
  std::size_t kept = 0;
  ScratchCache() noexcept { tl_small_scratch.open = true; }
  ~ScratchCache() {
    tl_small_scratch.open = false;
    for (void*& slot : tl_small_scratch.slot) ::operator delete(std::exchange(slot, nullptr));
    for (auto& list : free)
      for (void* block : list) ::operator delete(block);
  }
};

thread_local ScratchCache cache;

// kSmallScratchBytes: every block that fits a slot (scratch.hpp) fits every such request.
constexpr int kSmallestClass = std::bit_width(kSmallScratchBytes - 1);
static_assert(std::size_t{1} << kSmallestClass == kSmallScratchBytes);
int size_class(std::size_t bytes) noexcept {
  return std::max(kSmallestClass,
                  static_cast<int>(std::bit_width(std::max<std::size_t>(bytes, 1) - 1)));
}

}  // namespace

void* take_scratch_block(std::size_t bytes) {
  const int k = size_class(bytes);
  auto& list = cache.free[k];
  if (!list.empty()) {
    void* block = list.back();
    list.pop_back();
    cache.kept -= std::size_t{1} << k;
    return block;
  }
  return ::operator new (std::size_t{1} << k);
}

void give_scratch_block(void* block, std::size_t bytes) noexcept {
  const int k = size_class(bytes);
  const std::size_t size = std::size_t{1} << k;
  if (cache.kept + size <= kKeptBytes) {
    try {
      cache.free[k].push_back(block);
      cache.kept += size;
      return;
    } catch (...) {  // no room to remember it: let it go
    }
  }
  ::operator delete(block);
}

}  // namespace hypercomm::detail
