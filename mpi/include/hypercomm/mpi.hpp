// The same hypercomm program across processes and nodes, on MPI (API.md, "Across processes and
// nodes"). CMake: find_package(hypercomm CONFIG REQUIRED COMPONENTS mpi), link hypercomm::mpi.
//
// The p VPs of the topology are spread over the n processes of the communicator in contiguous
// blocks (process k runs VPs [k*p/n, (k+1)*p/n), the first p mod n processes one more: p >= n),
// each process running its VPs as pinned threads. VPs of one process exchange messages through
// the lock-free channels; a message to a VP of another process is carried by MPI point-to-point
// from the thread that called run (which serves as the process's communication thread while the
// VPs run), so the program needs MPI_THREAD_FUNNELED from MPI_Init_thread when it calls run from
// the main thread, MPI_THREAD_SERIALIZED otherwise. The body, Proc, groups, collectives, errors
// and model clocks are those of hypercomm::run; the shared-memory meetings of small collectives
// are off when the machine spans more than one process.
#pragma once

#include <mpi.h>

#include <functional>
#include <hypercomm/export.hpp>
#include <hypercomm/hypercomm.hpp>
#include <memory>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm::mpi {

class Machine {
 public:
  // Collective over comm: every process passes the same topology and options (else Error, on
  // every process). Throws Error when MPI is not initialised or grants too low a thread level,
  // TopologyError when the topology has fewer VPs than comm has processes.
  Machine(MPI_Comm comm, Topology topology, Options options = {});
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // Called by every process of the communicator: runs body once on every VP of every process
  // and returns on every process the same Report of the whole machine (wall time: the longest
  // process's). An exception in any VP releases every VP of every process: run rethrows the
  // original exception on its process and Aborted (naming the VP and its process) on the
  // others; a deadlock across processes raises Deadlock (or CollectiveMismatch, when VPs entered
  // one collective call with different headers, or every waiting VP waits inside a collective)
  // on every process, and so does a VP's wait for one that has finished (Deadlock). The machine
  // stays usable.
  Report run(const std::function<void(Proc&)>& body);

  [[nodiscard]] const Topology& topology() const noexcept;
  [[nodiscard]] const Options& options() const noexcept;
  [[nodiscard]] int process() const noexcept;    // this process's rank in the communicator
  [[nodiscard]] int processes() const noexcept;  // the communicator's size
  // The VPs this process runs: [first_vp(), last_vp()).
  [[nodiscard]] int first_vp() const noexcept;
  [[nodiscard]] int last_vp() const noexcept;
  // The cores Algo::automatic takes the VPs to share (hypercomm::Machine::shared_core_count):
  // those of every node the processes run on (each node's the union of its processes'), when
  // the machine's VPs outnumber them, else 0; every process the same.
  [[nodiscard]] int shared_core_count() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One run on a fresh machine, on every process of comm.
Report run(MPI_Comm comm, const Topology& topology, const std::function<void(Proc&)>& body,
           Options options = {});

}  // namespace hypercomm::mpi

HYPERCOMM_PUBLIC_END
