#include "pinning.hpp"

#include <pthread.h>
#include <sched.h>

#include <thread>

namespace hypercomm::detail {

namespace {

std::vector<int> affinity_of_this_thread() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  if (cpus.empty()) {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned cpu = 0; cpu < n; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

}  // namespace

const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = affinity_of_this_thread();
  return cpus;
}

namespace {
// Read while the library is loaded, before main can pin its thread.
[[maybe_unused]] const bool read_at_load = !allowed_cpus().empty();
}  // namespace

void pin_current_thread(int cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

}  // namespace hypercomm::detail
