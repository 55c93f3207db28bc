// The message-passing machine: one pinned OS thread per VP, kept across runs (API.md,
// "Running virtual processors").
#pragma once

#include <functional>
#include <hypercomm/export.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/proc.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <memory>

// Internal (hidden in a shared library): declared before the public region.
namespace hypercomm::detail {
class Fabric;
}  // namespace hypercomm::detail

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

class Machine {
 public:
  explicit Machine(Topology topology, Options options = {});
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // Runs body once on every VP and returns when all finished. If a VP throws, every other VP's
  // blocked call is released with Aborted and the first original exception is rethrown; a
  // deadlock raises Deadlock. The machine stays usable afterwards.
  Report run(const std::function<void(Proc&)>& body);

  [[nodiscard]] const Topology& topology() const noexcept;
  [[nodiscard]] const Options& options() const noexcept;
  // The cores this process may run on when the machine's VPs outnumber them, else 0
  // (hypercomm::shared_core_count below). Algo::automatic then weighs the work of all VPs spread
  // over those cores beside the critical path (hypercomm::CallShape::shared_cores,
  // collectives/ALGORITHMS.md); a machine over several MPI processes takes the cores of all
  // their nodes (hypercomm::mpi::Machine::shared_core_count).
  [[nodiscard]] int shared_core_count() const noexcept;

 private:
  std::unique_ptr<detail::Fabric> fabric_;
};

// What Machine::shared_core_count() is for a machine of `topology` in this process: the CPUs the
// process may run on when the topology's VPs outnumber them, else 0.
[[nodiscard]] int shared_core_count(const Topology& topology) noexcept;

// One run on a machine of `topology` and `options`. The last one is kept, its threads asleep, for
// the next run() of the same topology, options and transport (as an OpenMP runtime keeps its
// threads): one machine at most, none over 1024 VPs, none whose run failed (docs/api.md).
Report run(const Topology& topology, const std::function<void(Proc&)>& body, Options options = {});

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
