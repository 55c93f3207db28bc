// hypercomm's side of scripts/bench --sweep: the OSU-style point-to-point and collective sweeps
// of osu_mpi, with the same benchmarks, sizes, data, timings and output (osu_common.hpp), on p
// pinned VPs (hypercube:d for p = 2^d, else ring:p), every collective Algo::automatic:
//   osu_hypercomm --bench latency,bandwidth,all_reduce --mode latency
// One Machine for the whole run; each batch is one Machine::run (its start is outside the timing).
#include <algorithm>
#include <bit>
#include <chrono>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <new>
#include <numeric>
#include <span>
#include <vector>

#include "osu_common.hpp"

namespace hc = hypercomm;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Each VP's buffers on cache lines of their own, as MPI ranks' are (a process each). Made one
// after another by the main thread, small buffers lay side by side on the heap, so a VP's stores
// into its own (a scatter's block, a broadcast's message) evicted lines its neighbour was reading
// (false sharing that ranks in separate processes cannot have): p = 2, 8 B back to back, 8% of
// a scatter's samples sat on the root's load of its own Buffers. Alternated with the heap's
// layout (2026-11-30, an Intel Xeon of 2 vCPUs, 4-9 rounds, fastest / third fastest): back to
// back gather of 2 KiB 0.80 / 0.91x the time, all_to_all of 1-2 KiB 0.70-0.84x, the other cells
// 0.87-1.11x, within their rounds' spread.
template <class T>
struct OwnLines {
  using value_type = T;
  static constexpr std::size_t kAlign = 128;  // two lines: the CPU's adjacent-line prefetch
  OwnLines() noexcept = default;
  template <class U>
  explicit(false) OwnLines(const OwnLines<U>& /*other*/) noexcept {}
  [[nodiscard]] static std::size_t rounded(std::size_t n) noexcept {
    return (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
  }
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (rounded(n), std::align_val_t{kAlign}));
  }
  // Unsized: Clang before 19 declares the sized forms only under -fsized-deallocation.
  void deallocate(T* p, std::size_t /*n*/) noexcept {
    ::operator delete (p, std::align_val_t{kAlign});
  }
  friend bool operator==(const OwnLines& /*a*/, const OwnLines& /*b*/) noexcept { return true; }
};
template <class T>
using LineVector = std::vector<T, OwnLines<T>>;

// One VP's buffers: bytes for the collectives that move data, floats for the reductions.
struct alignas(OwnLines<char>::kAlign) Buffers {
  LineVector<char> in, out;
  LineVector<float> fin, fout;
};

Buffers buffers_for(const std::string& bench, std::size_t m, std::size_t p) {
  const auto [in, out] = osu::buffer_sizes(bench, m, p);
  Buffers b;
  if (osu::is_reduction(bench)) {
    b.fin.assign(in / 4, 1.0F);
    b.fout.assign(out / 4, 0.0F);
  } else if (osu::is_point_to_point(bench)) {  // room for bandwidth's 4-byte answer
    b.in.assign(std::max<std::size_t>(in, 4), 1);
    b.out.assign(std::max<std::size_t>(out, 4), 0);
  } else {
    b.in.assign(in, 1);
    b.out.assign(out, 0);
  }
  return b;
}

void collective(hc::Proc& vp, osu::Op op, Buffers& b, std::size_t m) {
  const std::span<char> in(b.in), out(b.out);
  const std::span<const float> fin(b.fin);
  const std::span<float> fout(b.fout);
  switch (op) {
    case osu::Op::barrier: return hc::barrier(vp);
    case osu::Op::broadcast: return hc::broadcast(vp, in.first(m), 0);
    case osu::Op::reduce: return hc::reduce(vp, fin, fout, std::plus<>{}, 0);
    case osu::Op::all_reduce: return hc::all_reduce(vp, fin, fout, std::plus<>{});
    case osu::Op::all_gather: return hc::all_gather(vp, std::span<const char>(in.first(m)), out);
    case osu::Op::reduce_scatter: return hc::reduce_scatter(vp, fin, fout, std::plus<>{});
    case osu::Op::scan: return hc::scan(vp, fin, fout, std::plus<>{});
    case osu::Op::all_to_all: return hc::all_to_all(vp, std::span<const char>(in), out);
    case osu::Op::gather: return hc::gather(vp, std::span<const char>(in.first(m)), out, 0);
    case osu::Op::scatter: return hc::scatter(vp, std::span<const char>(in), out.first(m), 0);
  }
}

struct Batch {
  double per_op;   // what a line reports, seconds
  double elapsed;  // the slowest VP's whole batch, seconds
};

Batch run_batch(hc::Machine& machine, const std::string& bench, const osu::Args& a,
                std::vector<Buffers>& buffers, std::size_t m, long iters) {
  const auto p = static_cast<std::size_t>(machine.topology().size());
  std::vector<double> measured(p), elapsed(p);
  const osu::Op op = osu::is_point_to_point(bench) ? osu::Op::barrier : osu::op_of(bench);
  machine.run([&](hc::Proc& vp) {
    const auto me = static_cast<std::size_t>(vp.id());
    Buffers& b = buffers[me];
    const std::span<const char> in(b.in.data(), m);
    const std::span<char> out(b.out.data(), m);
    hc::barrier(vp);
    const auto start = Clock::now();
    double mine = 0;
    if (bench == "latency") {
      for (long i = 0; i < iters; ++i) {
        if (me == 0) {
          vp.send(1, in);
          vp.recv(1, out);
        } else if (me == 1) {
          vp.recv(0, out);
          vp.send(0, in);
        }
      }
      mine = seconds_since(start) / (2.0 * static_cast<double>(iters));
    } else if (bench == "bandwidth") {
      for (long i = 0; i < iters; ++i) {
        if (me == 0) {
          for (int w = 0; w < a.window; ++w) vp.send(1, in);
          vp.recv(1, std::span<char>(b.out.data(), 4));
        } else if (me == 1) {
          for (int w = 0; w < a.window; ++w) vp.recv(0, out);
          vp.send(0, std::span<const char>(b.in.data(), 4));
        }
      }
      mine = seconds_since(start) / (static_cast<double>(iters) * a.window);
    } else if (a.mode == "latency") {
      for (long i = 0; i < iters; ++i) {
        hc::barrier(vp);
        const auto t0 = Clock::now();
        collective(vp, op, b, m);
        mine += seconds_since(t0);
      }
      mine /= static_cast<double>(iters);
    } else {
      for (long i = 0; i < iters; ++i) collective(vp, op, b, m);
      mine = seconds_since(start) / static_cast<double>(iters);
    }
    measured[me] = mine;
    elapsed[me] = seconds_since(start);
  });
  Batch out{};
  out.elapsed = *std::max_element(elapsed.begin(), elapsed.end());
  if (osu::is_point_to_point(bench))
    out.per_op = measured[0];
  else if (a.mode == "latency")
    out.per_op = std::accumulate(measured.begin(), measured.end(), 0.0) / static_cast<double>(p);
  else
    out.per_op = *std::max_element(measured.begin(), measured.end());
  return out;
}

std::vector<Buffers> buffers_per_vp(const hc::Machine& machine, const std::string& bench,
                                    std::size_t bytes) {
  const auto p = static_cast<std::size_t>(machine.topology().size());
  std::vector<Buffers> buffers;
  for (std::size_t i = 0; i < p; ++i) buffers.push_back(buffers_for(bench, bytes, p));
  return buffers;
}

void measure(hc::Machine& machine, const std::string& bench, std::size_t bytes,
             const osu::Args& a) {
  std::vector<Buffers> buffers = buffers_per_vp(machine, bench, bytes);
  run_batch(machine, bench, a, buffers, bytes, 2);  // warm-up
  long iters = 1;
  Batch t = run_batch(machine, bench, a, buffers, bytes, iters);
  while (t.elapsed < osu::kCalibrationSeconds && iters < osu::kMaxIterations) {
    iters *= 2;
    t = run_batch(machine, bench, a, buffers, bytes, iters);
  }
  iters = osu::iterations_for(t.elapsed / static_cast<double>(iters), a);
  const auto [per_op, calls] = osu::measured_batches(
      a, iters, [&](long n) { return run_batch(machine, bench, a, buffers, bytes, n); });
  osu::print_line(a, bench, bytes, per_op, calls);
}

hc::Topology topology_for(int p) {
  if (p < 2) throw std::invalid_argument("--p must be at least 2");
  if (std::has_single_bit(static_cast<unsigned>(p)))
    return hc::Topology::hypercube(std::countr_zero(static_cast<unsigned>(p)));
  return hc::Topology::ring(p);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const osu::Args a = osu::parse(argc, argv, "hypercomm");
    hc::Machine machine(topology_for(a.p));
    std::vector<Buffers> warm;  // the warm-up's, made at its first batch
    osu::warm_up(a, [&](const std::string& bench, std::size_t bytes, long iters) {
      if (warm.empty()) warm = buffers_per_vp(machine, bench, bytes);
      return run_batch(machine, bench, a, warm, bytes, iters).elapsed;
    });
    for (const std::string& bench : a.benches)
      for (const std::size_t bytes : osu::sizes(bench, a)) measure(machine, bench, bytes, a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "osu_hypercomm: %s\n", e.what());
    return 2;
  }
  return 0;
}
