// The peer programs' own pinning (they do not link hypercomm): the CPUs this process may use
// and pinning the calling thread to one of them, as hypercomm's Pinning::compact does.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <vector>

namespace peers {

// The process's CPUs, read once (before its first thread pins itself); {0} when unknown.
inline const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> all;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) all.push_back(c);
    if (all.empty()) all.push_back(0);
    return all;
  }();
  return cpus;
}

inline void pin(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

}  // namespace peers
