// Grama et al., section 9.5: sample sort of n 64-bit keys on p VPs. VP i holds the keys
// [i n / p, (i+1) n / p) of the input, about n/p, then:
//   1. every VP sorts its keys                                              (std::sort, local)
//   2. it takes p-1 regular samples: its keys at positions (k+1) m / p, k < p-1 (m = its keys)
//   3. the samples are gathered on every VP                 (hypercomm::all_gatherv, Alg. 4.7)
//   4. every VP sorts the p(p-1) samples and picks the same p-1 splitters: sample (k+1)(p-1)
//   5. it cuts its sorted keys into p buckets at the splitters; bucket j is for VP j
//   6. the bucket sizes, then the buckets, go to their VPs   (all_to_all, then all_to_allv)
//   7. every VP merges the p sorted runs it received: VP i holds the i-th slice of the output
// The result is checked against std::sort of all keys.
//
// Communication (book, p = 2^d, the hypercube algorithms; m = 8 bytes a key):
//   samples   all-gather of p-1 keys a VP       ts log p + tw 8(p-1)(p-1)          (Alg. 4.7)
//   sizes     all-to-all of one count a pair    (ts + tw 8 p/2) log p  (4.5.3, store-and-forward)
//   buckets   all-to-all personalized           (ts + tw 8 n/p^2)(p-1)       (Alg. 4.10, E-cube)
// (the buckets are n/p^2 keys only on average; each pairwise step costs its larger message).
//
// Usage: sample_sort [keys] [topology]     (defaults: 1000000 keys on hypercube:3)
//        sample_sort --compare [keys]      std::sort on one thread, std::sort(par) (with TBB),
//                                          and this sort on ring:2, hypercube:2, :3 and :4
// Built with HYPERCOMM_EXAMPLE_MPI (sample_sort_mpi), the same sort runs under mpirun, the VPs
// spread over the processes (hypercomm::mpi); every process makes the keys, each checks the
// slices of its own VPs, and process 0 prints what one process prints (--compare: one process).
#ifdef HYPERCOMM_EXAMPLE_MPI
#include <mpi.h>

#include <hypercomm/mpi.hpp>
#endif
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <string>
#include <thread>
#include <vector>
#ifdef SAMPLE_SORT_HAVE_TBB
#include <execution>
#endif

namespace hc = hypercomm;
using Key = std::uint64_t;

namespace {

// Key number i of the input: splitmix64 of i, so that any VP (and the check) can make any key.
Key key_of(std::uint64_t i) {
  std::uint64_t x = i + 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<Key> all_keys(std::size_t n) {
  std::vector<Key> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = key_of(i);
  return keys;
}

// VP i's share of n keys: [first(i), first(i + 1)).
std::size_t first_of(std::size_t n, int p, int i) {
  return n * static_cast<std::size_t>(i) / static_cast<std::size_t>(p);
}

// Sorts this VP's share of `keys` with the others: VP i writes the i-th slice of the sorted
// output into slices[i].
void sample_sort(hc::Proc& vp, const std::vector<Key>& keys,
                 std::vector<std::vector<Key>>& slices) {
  const int p = vp.size(), me = vp.id();
  const std::size_t n = keys.size();
  const auto up = static_cast<std::size_t>(p);
  // 1. This VP's keys, sorted.
  std::vector<Key> local(keys.begin() + static_cast<std::ptrdiff_t>(first_of(n, p, me)),
                         keys.begin() + static_cast<std::ptrdiff_t>(first_of(n, p, me + 1)));
  std::sort(local.begin(), local.end());

  // 2. p-1 regular samples (none from a VP without keys: every VP knows every share's size).
  std::vector<std::size_t> sample_counts(up);
  for (int i = 0; i < p; ++i)
    sample_counts[static_cast<std::size_t>(i)] =
        first_of(n, p, i + 1) > first_of(n, p, i) ? up - 1 : 0;
  std::vector<Key> samples(sample_counts[static_cast<std::size_t>(me)]);
  for (std::size_t k = 0; k < samples.size(); ++k) samples[k] = local[(k + 1) * local.size() / up];

  // 3. Every VP gets every sample; 4. the same p-1 splitters everywhere.
  std::vector<Key> all_samples(
      std::accumulate(sample_counts.begin(), sample_counts.end(), std::size_t{0}));
  hc::all_gatherv(vp, samples, all_samples, sample_counts);
  std::sort(all_samples.begin(), all_samples.end());
  std::vector<Key> splitters;
  for (std::size_t k = 0; k + 1 < up && !all_samples.empty(); ++k)
    splitters.push_back(all_samples[(k + 1) * all_samples.size() / up]);

  // 5. Bucket j: the keys above splitter j-1 and up to splitter j (local is sorted).
  std::vector<std::size_t> send_counts(up, 0), recv_counts(up);
  std::size_t from = 0;
  for (std::size_t j = 0; j < up; ++j) {
    const std::size_t to =
        j < splitters.size()
            ? static_cast<std::size_t>(std::upper_bound(local.begin(), local.end(), splitters[j]) -
                                       local.begin())
            : local.size();
    send_counts[j] = to - from;
    from = to;
  }

  // 6. Sizes, then the buckets (local is already in bucket order).
  hc::all_to_all(vp, send_counts, recv_counts);
  std::vector<std::size_t> at(up + 1, 0);
  std::partial_sum(recv_counts.begin(), recv_counts.end(), at.begin() + 1);
  std::vector<Key> received(at[up]);
  hc::all_to_allv(vp, local, send_counts, received, recv_counts);

  // 7. Merge the p sorted runs, pairwise in log p passes.
  for (std::size_t width = 1; width < up; width *= 2) {
    for (std::size_t i = 0; i + width < up; i += 2 * width) {
      const auto begin = received.begin();
      std::inplace_merge(begin + static_cast<std::ptrdiff_t>(at[i]),
                         begin + static_cast<std::ptrdiff_t>(at[i + width]),
                         begin + static_cast<std::ptrdiff_t>(at[std::min(i + 2 * width, up)]));
    }
  }
  slices[static_cast<std::size_t>(me)] = std::move(received);
}

struct Outcome {
  hc::Report report;
  std::vector<std::vector<Key>> slices;
};

// Machine: hc::Machine, or hc::mpi::Machine (slices written for this process's VPs only).
template <class Machine>
Outcome run_sort(Machine& machine, const std::vector<Key>& keys) {
  Outcome o;
  o.slices.resize(static_cast<std::size_t>(machine.topology().size()));
  o.report = machine.run([&](hc::Proc& vp) { sample_sort(vp, keys, o.slices); });
  return o;
}

// The slices, concatenated in VP order, equal the sorted keys: sizes[i] is the size of VP i's
// slice, and the slices of VPs [first, last) are checked (those this process holds).
bool matches(const std::vector<std::vector<Key>>& slices, const std::vector<std::uint64_t>& sizes,
             const std::vector<Key>& sorted, int first, int last) {
  std::size_t at = 0;
  for (int i = 0; i < static_cast<int>(sizes.size()); ++i) {
    const std::size_t size = sizes[static_cast<std::size_t>(i)];
    if (at + size > sorted.size()) return false;
    if (i >= first && i < last) {
      const auto& s = slices[static_cast<std::size_t>(i)];
      if (s.size() != size ||
          !std::equal(s.begin(), s.end(), sorted.begin() + static_cast<std::ptrdiff_t>(at)))
        return false;
    }
    at += size;
  }
  return at == sorted.size();
}

std::vector<std::uint64_t> sizes_of(const std::vector<std::vector<Key>>& slices) {
  std::vector<std::uint64_t> sizes;
  for (const auto& s : slices) sizes.push_back(s.size());
  return sizes;
}

constexpr hc::CostModel kModel{.ts = 1e-6, .tw = 1e-9, .th = 0.0};  // seconds, seconds per byte

hc::Options options() {
  hc::Options opt;
  opt.model = kModel;
  return opt;
}

// The book's communication time for p = 2^d (see the top of the file); < 0 for other p.
double book_time(std::size_t n, int p) {
  if (p < 2 || (p & (p - 1)) != 0) return p == 1 ? 0.0 : -1.0;
  const double ts = kModel.ts, tw = kModel.tw, P = p, lg = std::log2(P);
  const double samples = ts * lg + tw * 8.0 * (P - 1) * (P - 1);
  const double sizes = (ts + tw * 8.0 * P / 2) * lg;
  const double buckets = (ts + tw * 8.0 * static_cast<double>(n) / (P * P)) * (P - 1);
  return samples + sizes + buckets;
}

#ifndef HYPERCOMM_EXAMPLE_MPI
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int compare(std::size_t n) {
  const unsigned cores = std::thread::hardware_concurrency();
  std::printf("sample sort: %zu 64-bit keys, %u hardware threads\n", n, cores);
  const std::vector<Key> keys = all_keys(n);
  std::vector<Key> sorted = keys;
  auto t0 = std::chrono::steady_clock::now();
  std::sort(sorted.begin(), sorted.end());
  const double seq = seconds_since(t0);
  const double ns = static_cast<double>(n);
  std::printf("  %-45s %9.4f s  %8.2f Mkeys/s\n", "std::sort, one thread", seq, ns / seq / 1e6);
  bool all_right = true;
#ifdef SAMPLE_SORT_HAVE_TBB
  {
    std::vector<Key> par = keys;
    t0 = std::chrono::steady_clock::now();
    std::sort(std::execution::par, par.begin(), par.end());
    const double t = seconds_since(t0);
    const bool right = par == sorted;
    all_right = all_right && right;
    std::printf("  %-45s %9.4f s  %8.2f Mkeys/s%s\n", "std::sort(std::execution::par)", t,
                ns / t / 1e6, right ? "" : "  WRONG");
  }
#else
  std::printf("  %-45s (not built: TBB was not found)\n", "std::sort(std::execution::par)");
#endif
  for (const char* shape : {"ring:2", "hypercube:2", "hypercube:3", "hypercube:4"}) {
    const hc::Topology t = hc::Topology::parse(shape);
    hc::Machine machine(t, options());  // threads spawned (and pinned) before the clock starts
    const Outcome o = run_sort(machine, keys);
    const bool right = matches(o.slices, sizes_of(o.slices), sorted, 0, t.size());
    all_right = all_right && right;
    const std::string label =
        "hypercomm sample sort, " + std::to_string(t.size()) + " VPs (" + t.name() + ")";
    std::printf("  %-45s %9.4f s  %8.2f Mkeys/s  model %.3e s%s\n", label.c_str(),
                o.report.wall_seconds, ns / o.report.wall_seconds / 1e6, o.report.model_time,
                right ? "" : "  WRONG");
  }
  std::printf(
      "(wall times: the sort alone for std::sort; for hypercomm one Machine::run: copying\n"
      " each VP's share, local sorts, samples, exchange and merge; the model time charges\n"
      " the messages only, ts = %g s, tw = %g s/byte)\n",
      kModel.ts, kModel.tw);
  if (!all_right) std::printf("WRONG: a result differs from std::sort\n");
  return all_right ? 0 : 1;
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef HYPERCOMM_EXAMPLE_MPI
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct Finalize {
    ~Finalize() { MPI_Finalize(); }
  } finalize;
  if (rank != 0) (void)std::freopen("/dev/null", "w", stdout);  // one process speaks
#endif
  std::size_t n = 1'000'000;
  std::string shape = "hypercube:3";
  bool comparing = false;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--compare") {
      comparing = true;
    } else if (arg.find(':') != std::string::npos) {
      shape = arg;
    } else {
      char* end = nullptr;
      n = std::strtoull(arg.c_str(), &end, 10);
      if (end == arg.c_str() || *end != '\0') {
        std::fprintf(stderr,
                     "usage: sample_sort [keys] [topology] | sample_sort --compare [keys]\n");
        return 2;
      }
    }
  }
#ifdef HYPERCOMM_EXAMPLE_MPI
  if (comparing) {
    std::fprintf(stderr, "sample_sort_mpi: --compare is for one process (sample_sort)\n");
    return 2;
  }
#else
  if (comparing) return compare(n);
#endif

  hc::Topology topology = hc::Topology::ring(1);
  try {
    topology = hc::Topology::parse(shape);
  } catch (const hc::TopologyError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const int p = topology.size();
#ifdef HYPERCOMM_EXAMPLE_MPI
  int processes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  if (p < processes) {  // every process says no alike (hc::mpi::Machine would throw)
    if (rank == 0)
      std::fprintf(stderr, "sample_sort_mpi: %s has %d VPs, fewer than the %d processes\n",
                   topology.name().c_str(), p, processes);
    return 2;
  }
#endif
  std::printf("sample sort (Grama et al. 9.5): %zu 64-bit keys on %s, p = %d\n", n,
              topology.name().c_str(), p);
  const std::vector<Key> keys = all_keys(n);
#ifdef HYPERCOMM_EXAMPLE_MPI
  hc::mpi::Machine machine(MPI_COMM_WORLD, topology, options());
  const int first = machine.first_vp(), last = machine.last_vp();
#else
  hc::Machine machine(topology, options());
  const int first = 0, last = p;
#endif
  const Outcome o = run_sort(machine, keys);

  // Every VP's slice size (a process knows its own VPs'), then each process checks its slices.
  std::vector<std::uint64_t> sizes = sizes_of(o.slices);
#ifdef HYPERCOMM_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, sizes.data(), p, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
#endif
  std::vector<Key> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  int right_here = matches(o.slices, sizes, sorted, first, last) ? 1 : 0;
#ifdef HYPERCOMM_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, &right_here, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
#endif
  const bool right = right_here != 0;
  std::size_t largest = 0;
  for (const std::uint64_t size : sizes)
    largest = std::max(largest, static_cast<std::size_t>(size));
  const double even = static_cast<double>(n) / p;
  std::printf("result      %s (the VPs' slices in id order against std::sort of all keys)\n",
              right ? "correct" : "WRONG");
  std::printf("buckets     largest slice %zu keys, %.3f x n/p\n", largest,
              even > 0 ? static_cast<double>(largest) / even : 0.0);
  std::printf(
      "wall time   %.6f s  (%d VPs on %u cores: local sorts, merges, copies, thread switches)\n",
      o.report.wall_seconds, p, std::thread::hardware_concurrency());
  std::printf("model time  %.4e s  (ts = %g s, tw = %g s/byte; communication only)\n",
              o.report.model_time, kModel.ts, kModel.tw);
  const double book = book_time(n, p);
  if (book >= 0) {
    std::printf(
        "book        ts log p + tw 8(p-1)^2 + (ts + tw 8p/2) log p + (ts + tw 8n/p^2)(p-1)"
        " = %.4e s\n",
        book);
    std::printf("            (samples, sizes, buckets; buckets of n/p^2 keys on average)\n");
  } else {
    std::printf("book        given for p = 2^d (hypercube algorithms) only\n");
  }
  if (!right) {
    std::printf("WRONG: the sorted keys differ from std::sort\n");
    return 1;
  }
  return 0;
}
