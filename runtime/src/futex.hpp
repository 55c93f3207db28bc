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
// standalone fences, so under it a seq_cst read-modify-write on one shared word stands in. On
// x86-64 a locked no-op on the stack's top is the full barrier, as GCC emits for the seq_cst
// fence: Clang emits mfence, 23 ns against 6 on the AMD EPYC (a release store, the fence and a
// load in a loop), paid in every meeting's wake-up (p = 8, scan of 8 B: 1.17x GCC's build).
inline void store_load_fence() noexcept {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<int> tsan_fence{0};
  tsan_fence.fetch_add(0, std::memory_order_seq_cst);
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("lock orq $0, (%%rsp)" ::: "memory", "cc");
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// The two halves of that handshake where Linux's membarrier (MEMBARRIER_CMD_PRIVATE_EXPEDITED)
// is there: asymmetric. The sender, once per message, only keeps the compiler from moving the
// flag's load above its stores (the fence waited for the message's stores to leave the store
// buffer); the sleeper, rarely, makes every running thread of the process pass a full fence (a
// system call and interrupts). Either a sender's stores drain before its thread's fence and the
// sleeper's look finds the message, or its load of the flag comes after that fence and sees the
// flag. Decided once in a process (the first call); both halves must agree, so a Fabric reads
// it once and passes it to both.
bool asymmetric_fences() noexcept;  // libhypercomm's own: not exported
// The sender's half: after publishing, before looking at the flag.
inline void publish_fence(bool asymmetric) noexcept {
  if (asymmetric)
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    store_load_fence();
}
// The sleeper's half: after setting its flag, before looking for the message.
void sleep_fence(bool asymmetric) noexcept;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace hypercomm::detail
