// hypercomm::mpi::Machine: a Fabric for this process's block of VPs, with an MpiRemote for the
// others (mpi_remote.hpp).
#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <hypercomm/errors.hpp>
#include <hypercomm/machine.hpp>
#include <hypercomm/mpi.hpp>
#include <string>
#include <vector>

#include "fabric.hpp"
#include "mpi_remote.hpp"

namespace hypercomm::mpi {

namespace {

// What every process must pass alike: the topology and the options that shape the run.
std::array<std::uint64_t, 4> fingerprint(const Topology& topology, const Options& options) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the topology's name
  for (const char c : topology.name()) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  auto bits = [](double v) {
    std::uint64_t b = 0;
    static_assert(sizeof b == sizeof v);
    __builtin_memcpy(&b, &v, sizeof b);
    return b;
  };
  const CostModel& m = options.model;
  const std::uint64_t flags =
      static_cast<std::uint64_t>(options.links) | static_cast<std::uint64_t>(options.trace) << 4 |
      static_cast<std::uint64_t>(options.record) << 5 |
      static_cast<std::uint64_t>(m.contention) << 6 | static_cast<std::uint64_t>(m.all_port) << 7;
  return {h, bits(m.ts) ^ (bits(m.tw) * 3) ^ (bits(m.th) * 7), flags,
          static_cast<std::uint64_t>(options.deadlock_timeout.count())};
}

// The environment's choices (the tests run each way), read before any collective call: a value
// that a variable does not take is an error on every process (Machine's constructor agrees on
// it), where one process throwing between two collective calls would leave the others waiting in
// the next.
struct Environment {
  // HYPERCOMM_MPI_RINGS: on (default), small (large messages over MPI, not read in place) or
  // off (every message over MPI).
  bool rings = true;
  bool in_place = true;
  int progress = 0;   // HYPERCOMM_MPI_PROGRESS: 0 hypercomm chooses, 1 vps, 2 server
  std::string error;  // what is wrong with them here, or empty
};

Environment read_environment() {
  Environment env;
  if (const char* rings = std::getenv("HYPERCOMM_MPI_RINGS")) {
    const std::string choice = rings;
    if (choice == "off")
      env.rings = env.in_place = false;
    else if (choice == "small")
      env.in_place = false;
    else if (choice != "on" && !choice.empty())
      env.error = "HYPERCOMM_MPI_RINGS is '" + choice +
                  "'; it takes on (the default: shared memory between the processes of a node, "
                  "large messages read in place), small (large messages over MPI) or off (every "
                  "message over MPI)";
  }
  if (const char* progress = std::getenv("HYPERCOMM_MPI_PROGRESS")) {
    const std::string choice = progress;
    if (choice == "vps")
      env.progress = 1;
    else if (choice == "server")
      env.progress = 2;
    else if (!choice.empty())
      env.error += (env.error.empty() ? "" : "; ") + std::string("HYPERCOMM_MPI_PROGRESS is '") +
                   choice +
                   "'; it takes vps (the VPs call MPI) or server (the thread that calls run does)";
  }
  return env;
}

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS)
    throw Error(std::string("hypercomm::mpi::Machine: ") + call + " failed (error " +
                std::to_string(rc) + ")");
}

}  // namespace

struct Machine::Impl {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the user's: its messages never meet ours
  int rank = 0;
  int processes = 1;
  detail::Blocks blocks;
  std::unique_ptr<detail::MpiRemote> remote;  // outlives the fabric, whose VPs call it
  std::unique_ptr<hypercomm::detail::Fabric> fabric;

  ~Impl() {
    fabric.reset();
    remote.reset();
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (comm != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&comm);
  }
};

Machine::Machine(MPI_Comm comm, Topology topology, Options options)
    : impl_(std::make_unique<Impl>()) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0)
    throw Error(
        "hypercomm::mpi::Machine: MPI is not initialised (or already finalised): call "
        "MPI_Init_thread before and MPI_Finalize after");
  int provided = MPI_THREAD_SINGLE, main_thread = 0;
  MPI_Query_thread(&provided);
  MPI_Is_thread_main(&main_thread);
  // At least: only this thread calls MPI while the VP threads run, funneled from the main
  // thread, serialized from another. Serialized or more: the VPs call MPI themselves, one at a
  // time, and move their own messages (mpi_remote.hpp).
  const int needed = main_thread != 0 ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED;
  if (provided < needed)
    throw Error(std::string("hypercomm::mpi::Machine: MPI grants thread level ") +
                std::to_string(provided) + " but hypercomm needs " +
                (main_thread != 0 ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SERIALIZED") +
                " (call MPI_Init_thread with it)");
  Impl& m = *impl_;
  check(MPI_Comm_rank(comm, &m.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &m.processes), "MPI_Comm_size");

  // Every process must run the same machine: compare before any VP starts. The last word says
  // whether this process's environment is wrong; the others need not agree (differing choices
  // are each process's own, and the rings are used only where every process of a node wants
  // them).
  const Environment env = read_environment();
  const auto shape = fingerprint(topology, options);
  std::array<std::uint64_t, std::tuple_size_v<decltype(shape)> + 1> mine{};
  std::copy(shape.begin(), shape.end(), mine.begin());
  mine.back() = env.error.empty() ? 0 : 1;
  std::vector<std::uint64_t> all(mine.size() * static_cast<std::size_t>(m.processes));
  check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(),
                      static_cast<int>(mine.size()), MPI_UINT64_T, comm),
        "MPI_Allgather");
  if (!env.error.empty())
    throw Error("hypercomm::mpi::Machine: process " + std::to_string(m.rank) + ": " + env.error);
  for (int k = 0; k < m.processes; ++k)
    if (all[static_cast<std::size_t>(k) * mine.size() + shape.size()] != 0)
      throw Error("hypercomm::mpi::Machine: process " + std::to_string(k) +
                  " has a HYPERCOMM_MPI_RINGS or HYPERCOMM_MPI_PROGRESS that it does not take "
                  "(its own error says which); process " +
                  std::to_string(m.rank) + " stops with it");
  for (int k = 0; k < m.processes; ++k)
    for (std::size_t i = 0; i < shape.size(); ++i)
      if (all[static_cast<std::size_t>(k) * mine.size() + i] != mine[i])
        throw Error("hypercomm::mpi::Machine: process " + std::to_string(m.rank) + " runs " +
                    topology.name() + " but process " + std::to_string(k) +
                    " passes another topology or other options: every process must pass the "
                    "same");
  const int p = topology.size();
  if (p < m.processes)
    throw TopologyError("hypercomm::mpi::Machine: " + topology.name() + " has " +
                        std::to_string(p) + " VPs, fewer than the " + std::to_string(m.processes) +
                        " processes of the communicator (each process runs at least one VP)");

  check(MPI_Comm_dup(comm, &m.comm), "MPI_Comm_dup");
  m.blocks = detail::Blocks{p, m.processes};
  if (m.processes == 1) {
    m.fabric = std::make_unique<hypercomm::detail::Fabric>(std::move(topology), options);
    return;
  }
  // The processes of this node: their VPs and communication threads share its cores.
  const int here = m.blocks.first(m.rank + 1) - m.blocks.first(m.rank);
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(m.comm, MPI_COMM_TYPE_SHARED, m.rank, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  int node_vps = 0, node_processes = 1, node_offset = 0, node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_processes);
  MPI_Allreduce(&here, &node_vps, 1, MPI_INT, MPI_SUM, node);
  MPI_Exscan(&here, &node_offset, 1, MPI_INT, MPI_SUM, node);
  if (node_rank == 0) node_offset = 0;  // MPI_Exscan leaves the first one undefined
  // The node's CPUs: the union of its processes' (mpirun --bind-to core gives each its own).
  cpu_set_t mine_cpus, node_cpus;
  CPU_ZERO(&mine_cpus);
  CPU_ZERO(&node_cpus);
  if (sched_getaffinity(0, sizeof mine_cpus, &mine_cpus) != 0) CPU_SET(0, &mine_cpus);
  MPI_Allreduce(&mine_cpus, &node_cpus, static_cast<int>(sizeof(cpu_set_t)), MPI_BYTE, MPI_BOR,
                node);
  // Rings in shared memory between the node's processes (node_rings.hpp), unless the
  // environment's HYPERCOMM_MPI_RINGS=off sends everything over MPI, as between nodes (the tests
  // run both).
  const bool crowded = hypercomm::detail::Fabric::crowded(
      static_cast<std::size_t>(node_vps), static_cast<std::size_t>(CPU_COUNT(&node_cpus)));
  // Where the node's VPs outnumber its cores, each ring's board has a slot for each VP of the
  // process that runs the most (the first): a large message is written into its receiver's post
  // there (MpiRemote::write_into_post). Not where each VP has a core: over 2 processes of one VP
  // on the 2 cores the sender's copy made a broadcast of 1 MiB slower (109-137 us a call against
  // 82-85); over 4 (2026-11-28, three alternating rounds) it made the broadcast of 64 KiB 33-40 us
  // against 48-71, the all-gather of 32 KiB-1 MiB 0.95-1.53x Open MPI's time against 1.13-2.04x,
  // the all-reduce of 1 MiB 621-692 us against 899-933 (of 64 KiB 36-39 against 25-29, both
  // under half of Open MPI's).
  const bool vps_share_cores = node_vps > CPU_COUNT(&node_cpus);
  auto rings = std::make_unique<detail::NodeRings>(node, m.rank, env.rings, env.in_place, crowded,
                                                   vps_share_cores ? m.blocks.first(1) : 0);
  int node_leader = m.rank;  // the node's first process names it
  check(MPI_Bcast(&node_leader, 1, MPI_INT, 0, node), "MPI_Bcast");
  MPI_Comm_free(&node);
  // Who calls MPI (mpi_remote.hpp): the VPs themselves where MPI lets them and each VP of the
  // node has a core, so that a VP polling MPI for its message takes no core from another;
  // where VPs share cores, the thread that called run (measured: the VPs' polling made one-way
  // traffic, a broadcast of 8 B over 4-16 processes on 2 cores, 3-10x slower there). The
  // environment's HYPERCOMM_MPI_PROGRESS=vps or =server chooses instead (the tests run both).
  bool vps_drive = provided >= MPI_THREAD_SERIALIZED && node_vps <= CPU_COUNT(&node_cpus);
  if (env.progress == 1) vps_drive = provided >= MPI_THREAD_SERIALIZED;
  if (env.progress == 2) vps_drive = false;
  const int node_threads = node_vps + (vps_drive ? 0 : node_processes);
  // Automatic's choice must be every process's, and the one `run` makes for the same program in
  // one process with the job's cores: those of every node (each the union of its processes'),
  // shared when the VPs outnumber them (hypercomm::shared_core_count). Each process's own cores
  // were taken before 2026-11-27 (the least of them): 16 processes of one VP, each bound to a
  // core of its own, then chose as 16 VPs on one core would, a broadcast of 1 MiB by the
  // hypercube, 1.7-1.9x Open MPI's time where Johnsson and Ho's trees took 0.85x.
  const int node_cores = node_rank == 0 ? CPU_COUNT(&node_cpus) : 0;
  int job_cores = 0;
  check(MPI_Allreduce(&node_cores, &job_cores, 1, MPI_INT, MPI_SUM, m.comm), "MPI_Allreduce");
  const int shared_cores = topology.size() > job_cores ? job_cores : 0;

  m.remote =
      std::make_unique<detail::MpiRemote>(m.comm, m.blocks, m.rank, vps_drive, std::move(rings));
  m.fabric = std::make_unique<hypercomm::detail::Fabric>(
      std::move(topology), options,
      hypercomm::detail::Placement{m.blocks.first(m.rank), m.blocks.first(m.rank + 1),
                                   m.remote.get(), node_threads, node_offset, CPU_COUNT(&node_cpus),
                                   !vps_drive, shared_cores, node_vps});
  // Every VP's CPU (-1 for those of other nodes), so that a VP waiting for one of another
  // process knows whether it may be running on another core (Fabric::spin_time).
  std::vector<int> counts(static_cast<std::size_t>(m.processes)), starts(counts.size());
  std::vector<int> leaders(counts.size());
  for (int k = 0; k < m.processes; ++k) {
    starts[static_cast<std::size_t>(k)] = m.blocks.first(k);
    counts[static_cast<std::size_t>(k)] = m.blocks.first(k + 1) - m.blocks.first(k);
  }
  std::vector<int> cpus(static_cast<std::size_t>(p), -1);
  const std::vector<int> own(m.fabric->vp_cpus().begin() + m.blocks.first(m.rank),
                             m.fabric->vp_cpus().begin() + m.blocks.first(m.rank + 1));
  check(MPI_Allgatherv(own.data(), here, MPI_INT, cpus.data(), counts.data(), starts.data(),
                       MPI_INT, m.comm),
        "MPI_Allgatherv");
  check(MPI_Allgather(&node_leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, m.comm),
        "MPI_Allgather");
  for (int k = 0; k < m.processes; ++k)
    if (leaders[static_cast<std::size_t>(k)] != node_leader)
      std::fill_n(cpus.begin() + m.blocks.first(k), counts[static_cast<std::size_t>(k)], -1);
  m.fabric->set_vp_cpus(std::move(cpus));
}

Machine::~Machine() = default;

Report Machine::run(const std::function<void(Proc&)>& body) { return impl_->fabric->run(body); }

const Topology& Machine::topology() const noexcept { return impl_->fabric->topology(); }
const Options& Machine::options() const noexcept { return impl_->fabric->options(); }
int Machine::process() const noexcept { return impl_->rank; }
int Machine::processes() const noexcept { return impl_->processes; }
int Machine::first_vp() const noexcept { return impl_->fabric->first_vp(); }
int Machine::shared_core_count() const noexcept { return impl_->fabric->shared_core_count(); }
int Machine::last_vp() const noexcept { return impl_->fabric->last_vp(); }

Report run(MPI_Comm comm, const Topology& topology, const std::function<void(Proc&)>& body,
           Options options) {
  Machine machine(comm, topology, options);
  return machine.run(body);
}

}  // namespace hypercomm::mpi
