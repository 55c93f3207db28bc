// hypercomm's side of the groups benchmark (scripts/bench-groups): every row of a mesh
// broadcasts from its column 0 at once, hypercomm::broadcast(vp.row(), ...), beside Open MPI's
// MPI_Bcast on MPI_Comm_split row communicators (mpi_bench --op row_broadcast) with the same
// ranks. p = 16 runs on mesh:4x4 (four rows), p = 4 on mesh:1x4 (one row). Data are doubles.
// Timing as the other peers (peer_common.hpp): N calls after a barrier, N calibrated, the
// slowest VP's time / N per batch, the median over batches; one JSON line per measurement.
//   groups_bench --op row_broadcast --p 16 --bytes 8,1M
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <hypercomm/hypercomm.hpp>
#include <vector>

#include "peer_common.hpp"

namespace hc = hypercomm;

namespace {

// Seconds per call, the slowest VP's, for `reps` calls of a row broadcast of n doubles.
double time_calls(hc::Machine& machine, std::size_t n, long reps) {
  const int p = machine.topology().size();
  std::vector<double> took(static_cast<std::size_t>(p));
  machine.run([&](hc::Proc& vp) {
    std::vector<double> buf(n, vp.id());
    const hc::Group row = vp.row();
    hc::broadcast(row, buf, 0);  // warm-up
    hc::barrier(vp);
    const auto t0 = std::chrono::steady_clock::now();
    for (long r = 0; r < reps; ++r) hc::broadcast(row, buf, 0);
    took[static_cast<std::size_t>(vp.id())] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  return *std::max_element(took.begin(), took.end()) / static_cast<double>(reps);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const peer::Args args = peer::parse(argc, argv, "hypercomm");
    for (const std::string& op : args.ops)
      if (op != "row_broadcast") throw std::invalid_argument("no operation " + op);
    for (const int p : args.ps.empty() ? std::vector<int>{16, 4} : args.ps) {
      if (p != 16 && p != 4) throw std::invalid_argument("--p must be 16 or 4");
      const hc::Topology t = p == 16 ? hc::Topology::mesh(4, 4) : hc::Topology::mesh(1, 4);
      hc::Machine machine(t);
      for (const std::size_t bytes : args.bytes) {
        const std::size_t n = std::max<std::size_t>(bytes / sizeof(double), 1);
        long reps = 1;
        for (;; reps *= 4) {
          const double per_call = time_calls(machine, n, reps);
          if (per_call * static_cast<double>(reps) >= peer::calibration_seconds(args) ||
              reps >= (1 << 16) || args.reps > 0) {
            reps = peer::reps_for(per_call, args);
            break;
          }
        }
        std::vector<double> batch;
        for (int k = 0; k < args.batches; ++k) batch.push_back(time_calls(machine, n, reps));
        peer::print_line(args.impl, "row_broadcast", p, bytes, peer::median(batch), reps,
                         args.batches);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "groups_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
