// hypercomm's side of the peer-style benchmarks of scripts/bench-groups, beside mpi_bench's
// same operations with the same ranks:
//   row_broadcast  every row of a mesh broadcasts from its column 0 at once,
//                  hypercomm::broadcast(vp.row(), ...) against MPI_Bcast on MPI_Comm_split row
//                  communicators; p = 16 on mesh:4x4 (four rows), p = 4 on mesh:1x4 (one row)
//   row_all_reduce every row's all_reduce (sum) at once, against MPI_Allreduce on the same
//                  row communicators; p as row_broadcast's
//   all_to_allv    skewed counts (peer::skewed_count: rank i sends rank j a share of `bytes`
//                  falling as 1/(1 + (j - i) mod p)) against MPI_Alltoallv; p = 2^d on
//                  hypercube:d
//   gatherv, scatterv (root 0), all_gatherv   rank i's block peer::uneven_count(i, bytes)
//                  elements, against MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv; p = 2^d on
//                  hypercube:d
// Data are doubles. Timing as the other peers (peer_common.hpp): N calls after a barrier, N
// calibrated, the slowest VP's time / N per batch, the median over batches; one JSON line per
// measurement.
//   hypercomm_bench --op row_broadcast --p 16 --bytes 8,1M
//   hypercomm_bench --op all_to_allv --p 2,8,16 --bytes 8,64K
//   hypercomm_bench --op gatherv,scatterv,all_gatherv --p 8,16 --bytes 8,64K
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <vector>

#include "peer_common.hpp"

namespace hc = hypercomm;

namespace {

// Seconds per call, the slowest VP's, for `reps` calls of `op` with `bytes` per VP.
double time_calls(hc::Machine& machine, const std::string& op, std::size_t bytes, long reps) {
  const int p = machine.topology().size();
  std::vector<double> took(static_cast<std::size_t>(p));
  machine.run([&](hc::Proc& vp) {
    const auto me = static_cast<std::size_t>(vp.id());
    std::function<void()> call;
    std::vector<double> buf, in, out;
    std::vector<std::size_t> send_counts(static_cast<std::size_t>(p)),
        recv_counts(static_cast<std::size_t>(p));
    if (op == "row_broadcast") {
      buf.assign(std::max<std::size_t>(bytes / sizeof(double), 1), vp.id());
      call = [&, row = vp.row()] { hc::broadcast(row, buf, 0); };
    } else if (op == "row_all_reduce") {
      in.assign(std::max<std::size_t>(bytes / sizeof(double), 1), vp.id());
      out.assign(in.size(), 0.0);
      call = [&, row = vp.row()] {
        hc::all_reduce(row, std::span<const double>(in), std::span<double>(out), std::plus<>());
      };
    } else if (op == "gatherv" || op == "scatterv" || op == "all_gatherv") {
      std::vector<std::size_t>& counts = send_counts;
      for (int j = 0; j < p; ++j)
        counts[static_cast<std::size_t>(j)] = peer::uneven_count(j, bytes);
      const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
      in.assign(op == "scatterv" ? total : counts[me], 1.0);
      out.assign(op == "scatterv" ? counts[me] : total, 0.0);
      if (op == "gatherv")
        call = [&] {
          hc::gatherv(vp, std::span<const double>(in), std::span<double>(out), counts, 0);
        };
      else if (op == "scatterv")
        call = [&] {
          hc::scatterv(vp, std::span<const double>(in), std::span<double>(out), counts, 0);
        };
      else
        call = [&] {
          hc::all_gatherv(vp, std::span<const double>(in), std::span<double>(out), counts);
        };
    } else {
      for (int j = 0; j < p; ++j) {
        send_counts[static_cast<std::size_t>(j)] = peer::skewed_count(vp.id(), j, p, bytes);
        recv_counts[static_cast<std::size_t>(j)] = peer::skewed_count(j, vp.id(), p, bytes);
      }
      in.assign(std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0}), 1.0);
      out.assign(std::accumulate(recv_counts.begin(), recv_counts.end(), std::size_t{0}), 0.0);
      call = [&] { hc::all_to_allv(vp, in, send_counts, out, recv_counts); };
    }
    call();  // warm-up
    hc::barrier(vp);
    const auto t0 = std::chrono::steady_clock::now();
    for (long r = 0; r < reps; ++r) call();
    took[me] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  return *std::max_element(took.begin(), took.end()) / static_cast<double>(reps);
}

hc::Topology machine_for(const std::string& op, int p) {
  if (op == "row_broadcast" || op == "row_all_reduce") {
    if (p != 16 && p != 4) throw std::invalid_argument(op + ": --p must be 16 or 4");
    return p == 16 ? hc::Topology::mesh(4, 4) : hc::Topology::mesh(1, 4);
  }
  if (p < 2 || (p & (p - 1)) != 0) throw std::invalid_argument(op + ": --p must be 2^d");
  return hc::Topology::hypercube(std::countr_zero(static_cast<unsigned>(p)));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const peer::Args args = peer::parse(argc, argv, "hypercomm");
    for (const std::string& op : args.ops)
      if (op != "row_broadcast" && op != "row_all_reduce" && op != "all_to_allv" &&
          op != "gatherv" && op != "scatterv" && op != "all_gatherv")
        throw std::invalid_argument("no operation " + op);
    for (const std::string& op : args.ops)
      for (const int p : args.ps.empty() ? std::vector<int>{16, 4} : args.ps) {
        hc::Machine machine(machine_for(op, p));
        for (const std::size_t bytes : args.bytes) {
          long reps = 1;
          for (;; reps *= 4) {
            const double per_call = time_calls(machine, op, bytes, reps);
            if (per_call * static_cast<double>(reps) >= peer::calibration_seconds(args) ||
                reps >= (1 << 16) || args.reps > 0) {
              reps = peer::reps_for(per_call, args);
              break;
            }
          }
          std::vector<double> batch;
          for (int k = 0; k < args.batches; ++k)
            batch.push_back(time_calls(machine, op, bytes, reps));
          peer::print_line(args.impl, op, p, bytes, peer::median(batch), reps, args.batches);
        }
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hypercomm_bench: %s\n", e.what());
    return 2;
  }
  return 0;
}
