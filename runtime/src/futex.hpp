// Sleeping on a 32-bit atomic word: Linux futex with a timeout (C++20 atomic::wait has none,
// and the deadlock watchdog and abort need bounded sleeps).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace hypercomm::detail {

// Sleeps while word == expected, at most `timeout`; returns on wake, timeout or spurious wake-up.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept;
// Wakes up to `count` threads sleeping on word.
void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace hypercomm::detail
