// Where VP threads run (Options::pinning).
#pragma once

#include <vector>

namespace hypercomm::detail {

// The CPUs this process may run on, ascending (at least one).
[[nodiscard]] std::vector<int> allowed_cpus();
// Pins the calling thread to one CPU; best effort (a failure leaves it unpinned).
void pin_current_thread(int cpu) noexcept;

}  // namespace hypercomm::detail
