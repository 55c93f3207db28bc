// The same hypercomm program across processes: mpirun -np 2 ./mpi_allreduce [topology]
// (default hypercube:4: VPs 0-7 run in process 0, VPs 8-15 in process 1). Every VP sums the
// VP ids with all_reduce, the VPs of each mesh row or subcube broadcast within it, and every
// process prints what the whole machine did: the Report is the same on every process.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <hypercomm/mpi.hpp>
#include <string>

namespace hc = hypercomm;

int main(int argc, char** argv) {
  int provided = 0;
  // MULTIPLE (or SERIALIZED): the VPs move their own messages; FUNNELED is enough, but slower.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  const hc::Topology topology = hc::Topology::parse(argc > 1 ? argv[1] : "hypercube:4");
  hc::Options options;
  options.model = {.ts = 1e-6, .tw = 1e-9, .th = 0.0};

  std::atomic<int> wrong{0};  // VPs of this process that saw a wrong result
  const hc::Report report = hc::mpi::run(
      MPI_COMM_WORLD, topology,
      [&](hc::Proc& vp) {
        const long sum = hc::all_reduce(vp, static_cast<long>(vp.id()), std::plus<>{});
        const long p = vp.size();
        // Half the machine (a subcube, or a row of a mesh) broadcasts from its rank 0.
        hc::Group half = vp.topology().name().rfind("hypercube", 0) == 0
                             ? vp.subcube((1u << (vp.topology().dimension() - 1)) - 1)
                             : vp.world();
        const int first = hc::broadcast(half, vp.id(), 0);
        if (sum != p * (p - 1) / 2 || first != half.vp(0)) ++wrong;
      },
      options);
  int mine = wrong.load(), all_wrong = 0;
  MPI_Allreduce(&mine, &all_wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  std::printf(
      "process %d of %d: %s on %d processes: %s; model time %.3e s, %llu messages, wall %.6f s\n",
      rank, processes, topology.name().c_str(), processes, all_wrong == 0 ? "correct" : "WRONG",
      report.model_time, static_cast<unsigned long long>(report.messages), report.wall_seconds);
  MPI_Finalize();
  return all_wrong == 0 ? 0 : 1;
}
