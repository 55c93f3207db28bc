// Sleeping on a 32-bit atomic word: Linux futex with a timeout (C++20 atomic::wait has none,
// and the deadlock watchdog and abort need bounded sleeps).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <hypercomm/export.hpp>

namespace hypercomm::detail {

// Sleeps while word == expected, at most `timeout`; returns on wake, timeout or spurious wake-up.
HYPERCOMM_INTERNAL void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                                   std::chrono::nanoseconds timeout) noexcept;
// Wakes up to `count` threads sleeping on word.
HYPERCOMM_INTERNAL void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

// The store-load fence of the sleep/wake handshake (a sleeper sets its flag then looks for a
// message; a sender publishes a message then looks at the flag). ThreadSanitizer does not model
// standalone fences, so under it a seq_cst read-modify-write on one shared word stands in.
inline void store_load_fence() noexcept {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<int> tsan_fence{0};
  tsan_fence.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace hypercomm::detail
