// hypercomm::mpi past this machine, by the model (the README's "Scaling past one box"): the
// whole machine of 16, 64 and 1024 VPs (one VP per node) run here in one process, recorded, and
// replayed under the book's cost model with and without link contention. What it prints per
// collective: messages and bytes each VP sends (what each node's communication thread moves over
// MPI when every VP runs on a node of its own), and the model time.
//   mpi_scale_model [d ...]     (default: 4 6 10, i.e. 16, 64 and 1024 VPs)
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <string>
#include <vector>

namespace hc = hypercomm;

int main(int argc, char** argv) {
  std::vector<int> dims;
  for (int k = 1; k < argc; ++k) dims.push_back(std::atoi(argv[k]));
  if (dims.empty()) dims = {4, 6, 10};
  std::printf(
      "| VPs (nodes) | collective | size | messages per VP | bytes per VP | model time"
      " (ts = 1 us, tw = 0.1 ns/B) | with contention |\n|---|---|---|---:|---:|---:|---:|\n");
  for (const int d : dims) {
    const hc::Topology t = hc::Topology::hypercube(d);
    for (const char* op : {"all_reduce", "broadcast", "all_to_all"}) {
      for (const std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20}) {
        if (std::string(op) == "all_to_all" && bytes > 8 && d > 6) continue;  // p^2 MiB
        hc::Options o;
        o.model = {.ts = 1e-6, .tw = 1e-10, .th = 0};
        o.record = true;
        o.deadlock_timeout = std::chrono::seconds(120);
        const std::size_t n = bytes / sizeof(double);
        const hc::Report r = hc::run(
            t,
            [&](hc::Proc& vp) {
              const std::size_t blocks = std::string(op) == "all_to_all" ? vp.size() : 1;
              std::vector<double> in(n * blocks, vp.id()), out(n * blocks);
              if (std::string(op) == "all_reduce") hc::all_reduce(vp, in, out, std::plus<>{});
              if (std::string(op) == "broadcast") hc::broadcast(vp, in, 0);
              if (std::string(op) == "all_to_all") hc::all_to_all(vp, in, out);
            },
            o);
        const hc::Replay contended = r.replay({.cost = o.model, .contention = true});
        const double p = t.size();
        std::printf("| %d | %s | %s | %.1f | %.0f | %.3e s | %.3e s |\n", t.size(), op,
                    bytes <= 8 ? "8 B" : "1 MiB", static_cast<double>(r.messages) / p,
                    static_cast<double>(r.bytes) / p, r.model_time, contended.model_time);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
