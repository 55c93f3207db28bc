// Where VP threads run (Options::pinning).
#pragma once

#include <vector>

namespace hypercomm::detail {

// The CPUs this process may run on, ascending (at least one): its affinity when it started
// (taskset, cgroups), not the calling thread's, which a program may have pinned since.
[[nodiscard]] const std::vector<int>& allowed_cpus();
// Pins the calling thread to one CPU; best effort (a failure leaves it unpinned).
void pin_current_thread(int cpu) noexcept;

}  // namespace hypercomm::detail
