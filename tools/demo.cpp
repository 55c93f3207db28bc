// The main demonstration: every collective on ring:8, mesh:4x4, hypercube:4, linear:8 and
// mesh:4x4:open (the last two also under Links::strict, and hypercube:3 under Links::strict, its
// ring algorithms on the Gray-code ring), with every algorithm that can run there, the
// collectives on groups, and the irregular ones with uneven blocks (on linear:8 and
// mesh:4x4:open under Links::strict too), each result verified against a sequential
// computation, and the wall time, the model time and the card's textbook formula side by side.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "model_file.hpp"

namespace hc = hypercomm;
using Vec = std::vector<std::int64_t>;

namespace {

constexpr std::size_t kCount = 1024;  // elements per VP for the whole-buffer operations
constexpr std::size_t kBlock = 128;   // elements per block for the p-block operations
constexpr int root = 1;               // of broadcast, reduce, scatter and gather
constexpr int shift = 3;              // of circular_shift

std::int64_t value(int vp, std::size_t k) {
  return (vp * 31 + static_cast<std::int64_t>(k) * 7) % 1000;
}
Vec input(int vp, std::size_t n) {
  Vec v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = value(vp, k);
  return v;
}

struct Case {
  hc::Collective op;
  std::size_t bytes;  // as textbook_time counts them
  // Runs the collective on vp with algo, writes this VP's result.
  std::function<void(hc::Proc&, hc::Algo, Vec&)> body;
  // The expected result of VP i on p VPs.
  std::function<Vec(int, int)> expect;
};

std::vector<Case> cases() {
  auto sum_over = [](int p, std::size_t n, std::size_t offset, int upto) {
    Vec s(n, 0);
    for (int v = 0; v < upto && v < p; ++v)
      for (std::size_t k = 0; k < n; ++k) s[k] += value(v, offset + k);
    return s;
  };
  return {
      {hc::Collective::broadcast, kCount * 8,
       [](hc::Proc& vp, hc::Algo a, Vec& out) {
         out = vp.id() == root ? input(root, kCount) : Vec(kCount, -1);
         hc::broadcast(vp, out, root, a);
       },
       [](int, int) { return input(root, kCount); }},
      {hc::Collective::reduce, kCount * 8,
       [](hc::Proc& vp, hc::Algo a, Vec& out) {
         out.assign(kCount, 0);
         hc::reduce(vp, input(vp.id(), kCount), out, std::plus<>(), root, a);
         if (vp.id() != root) out.clear();
       },
       [=](int i, int p) { return i == root ? sum_over(p, kCount, 0, p) : Vec{}; }},
      {hc::Collective::all_reduce, kCount * 8,
       [](hc::Proc& vp, hc::Algo a, Vec& out) {
         out.assign(kCount, 0);
         hc::all_reduce(vp, input(vp.id(), kCount), out, std::plus<>(), a);
       },
       [=](int, int p) { return sum_over(p, kCount, 0, p); }},
      {hc::Collective::all_gather, kBlock * 8,
       [](hc::Proc& vp, hc::Algo a, Vec& out) {
         out.assign(kBlock * static_cast<std::size_t>(vp.size()), 0);
         hc::all_gather(vp, input(vp.id(), kBlock), out, a);
       },
       [](int, int p) {
         Vec all;
         for (int v = 0; v < p; ++v) {
           const Vec b = input(v, kBlock);
           all.insert(all.end(), b.begin(), b.end());
         }
         return all;
       }},
      {hc::Collective::reduce_scatter, kBlock * 8,
       [](hc::Proc& vp, hc::Algo a, Vec& out) {
         out.assign(kBlock, 0);
         hc::reduce_scatter(vp, input(vp.id(), kBlock * static_cast<std::size_t>(vp.size())), out,
                            std::plus<>(), a);
       },
       [=](int i, int p) { return sum_over(p, kBlock, kBlock * static_cast<std::size_t>(i), p); }},
      {hc::Collective::scan, kCount * 8,
       [](hc::Proc& vp, hc::Algo, Vec& out) {
         out.assign(kCount, 0);
         hc::scan(vp, input(vp.id(), kCount), out, std::plus<>());
       },
       [=](int i, int p) { return sum_over(p, kCount, 0, i + 1); }},
      {hc::Collective::exscan, kCount * 8,
       [](hc::Proc& vp, hc::Algo, Vec& out) {
         out.assign(kCount, 0);
         hc::exscan(vp, input(vp.id(), kCount), out, std::plus<>());
       },
       [=](int i, int p) { return sum_over(p, kCount, 0, i); }},
      {hc::Collective::scatter, kBlock * 8,
       [](hc::Proc& vp, hc::Algo, Vec& out) {
         out.assign(kBlock, 0);
         const Vec all =
             vp.id() == root ? input(root, kBlock * static_cast<std::size_t>(vp.size())) : Vec{};
         hc::scatter(vp, all, out, root);
       },
       [](int i, int) {
         Vec b(kBlock);
         for (std::size_t k = 0; k < kBlock; ++k)
           b[k] = value(root, static_cast<std::size_t>(i) * kBlock + k);
         return b;
       }},
      {hc::Collective::gather, kBlock * 8,
       [](hc::Proc& vp, hc::Algo, Vec& out) {
         out.assign(vp.id() == root ? kBlock * static_cast<std::size_t>(vp.size()) : 0, 0);
         hc::gather(vp, input(vp.id(), kBlock), out, root);
       },
       [](int i, int p) {
         Vec all;
         if (i != root) return all;
         for (int v = 0; v < p; ++v) {
           const Vec b = input(v, kBlock);
           all.insert(all.end(), b.begin(), b.end());
         }
         return all;
       }},
      {hc::Collective::all_to_all, 0,
       [](hc::Proc& vp, hc::Algo a, Vec& out) {
         const std::size_t n = kBlock * static_cast<std::size_t>(vp.size());
         Vec in(n);
         for (std::size_t k = 0; k < n; ++k)
           in[k] = vp.id() * 100000 + static_cast<std::int64_t>(k);
         out.assign(n, 0);
         hc::all_to_all(vp, in, out, a);
       },
       [](int i, int p) {
         Vec out(kBlock * static_cast<std::size_t>(p));
         for (int j = 0; j < p; ++j)
           for (std::size_t k = 0; k < kBlock; ++k)
             out[static_cast<std::size_t>(j) * kBlock + k] =
                 j * 100000 + static_cast<std::int64_t>(static_cast<std::size_t>(i) * kBlock + k);
         return out;
       }},
      {hc::Collective::circular_shift, kCount * 8,
       [](hc::Proc& vp, hc::Algo, Vec& out) {
         out.assign(kCount, 0);
         hc::circular_shift(vp, input(vp.id(), kCount), out, shift);
       },
       [](int i, int p) { return input(((i - shift) % p + p) % p, kCount); }},
      {hc::Collective::barrier, 0, [](hc::Proc& vp, hc::Algo, Vec&) { hc::barrier(vp); },
       [](int, int) { return Vec{}; }},
  };
}

// One traced run of ring all-gather on ring:8 (Algorithm 4.4, Figure 4.8 of the book): its
// Chrome/Perfetto trace and its step picture.
void write_trace_and_picture(const hc::Options& base, const std::string& dir) {
  std::filesystem::create_directories(dir);
  hc::Options options = base;
  options.trace = true;
  const hc::Topology ring = hc::Topology::parse("ring:8");
  hc::Machine machine(ring, options);
  const hc::Report report = machine.run([](hc::Proc& vp) {
    Vec all(kBlock * static_cast<std::size_t>(vp.size()));
    hc::all_gather(vp, input(vp.id(), kBlock), all, hc::Algo::ring);
  });
  const std::string trace = dir + "/ring8_all_gather.trace.json";
  const std::string svg = dir + "/ring8_all_gather.svg";
  report.write_chrome_trace(trace);
  hc::write_svg(report, ring, svg);
  std::printf("\ntrace:   %s (open it at https://ui.perfetto.dev)\npicture: %s", trace.c_str(),
              svg.c_str());
  const std::string png = dir + "/ring8_all_gather.png";
  if (hc::svg_to_png(svg, png)) std::printf(" and %s", png.c_str());
  std::printf("\n");

  // Groups on mesh:4x4: every row broadcasts from its column 0, then every column reduces to its
  // row 3, each drawn on the machine's layout.
  const hc::Topology mesh = hc::Topology::parse("mesh:4x4");
  hc::Machine groups(mesh, options);
  const hc::Report rows = groups.run([](hc::Proc& vp) {
    Vec x = input(vp.id(), kBlock), sum(kBlock);
    hc::broadcast(vp.row(), x, 0, hc::Algo::ring);
    hc::reduce(vp.column(), x, sum, std::plus<>(), 3, hc::Algo::ring);
  });
  const std::string mesh_svg = dir + "/mesh4x4_row_broadcast_column_reduce.svg";
  hc::write_svg(rows, mesh, mesh_svg);
  std::printf("picture: %s", mesh_svg.c_str());
  const std::string mesh_png = dir + "/mesh4x4_row_broadcast_column_reduce.png";
  if (hc::svg_to_png(mesh_svg, mesh_png)) std::printf(" and %s", mesh_png.c_str());
  std::printf("\n");
}

// The slowest VP's wall time for one call of body, best of 5 runs (a barrier first).
double best_wall(hc::Machine& machine, const std::function<void(hc::Proc&)>& body) {
  double best = 1e9;
  const int p = machine.topology().size();
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<double> took(static_cast<std::size_t>(p));
    machine.run([&](hc::Proc& vp) {
      hc::barrier(vp);
      const auto t0 = std::chrono::steady_clock::now();
      body(vp);
      took[static_cast<std::size_t>(vp.id())] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    best = std::min(best, *std::max_element(took.begin(), took.end()));
  }
  return best;
}

// A collective on groups, every group at once: what it runs, each VP's expected result, and the
// group's topology, whose card gives the formula (a row of mesh:4x4 costs what ring:4 costs).
struct GroupCase {
  const char* name;
  const char* machine;
  hc::Collective op;
  std::size_t bytes;
  hc::Topology group_topology;
  std::function<void(hc::Proc&, Vec&)> body;
  std::function<Vec(int)> expect;
  hc::Links links = hc::Links::routed;
  int shift = 0;           // circular_shift
  bool gray_ring = false;  // the group is the Gray-code ring of a hypercube (CallShape::gray_ring)
};

// The model clock at which each VP started its group collective (after a split's exchange).
thread_local double group_start = 0;

std::vector<GroupCase> group_cases() {
  auto column_sum = [](int id) {  // column of id, reduced to rank 1 (row 1)
    Vec s(kCount, 0);
    for (int r = 0; r < 4; ++r)
      for (std::size_t k = 0; k < kCount; ++k) s[k] += value(r * 4 + id % 4, k);
    return s;
  };
  return {
      {"row broadcast", "mesh:4x4", hc::Collective::broadcast, kCount * 8, hc::Topology::ring(4),
       [](hc::Proc& vp, Vec& out) {
         hc::Group row = vp.row();
         out = row.rank() == 1 ? input(vp.id(), kCount) : Vec(kCount, -1);
         hc::broadcast(row, out, 1);
       },
       [](int id) { return input(id / 4 * 4 + 1, kCount); }},
      {"column reduce", "mesh:4x4", hc::Collective::reduce, kCount * 8, hc::Topology::ring(4),
       [](hc::Proc& vp, Vec& out) {
         hc::Group column = vp.column();
         out.assign(column.rank() == 1 ? kCount : 0, 0);
         hc::reduce(column, input(vp.id(), kCount), out, std::plus<>(), 1);
       },
       [=](int id) { return id / 4 == 1 ? column_sum(id) : Vec{}; }},
      {"subcube 0b0101 all_gather", "hypercube:4", hc::Collective::all_gather, kBlock * 8,
       hc::Topology::hypercube(2),
       [](hc::Proc& vp, Vec& out) {
         hc::Group cube = vp.subcube(0b0101);
         out.assign(kBlock * 4, 0);
         hc::all_gather(cube, input(vp.id(), kBlock), out);
       },
       [](int id) {
         Vec all;
         for (int rank = 0; rank < 4; ++rank) {
           const int member = (id & 0b1010) | (rank & 1) | ((rank & 2) << 1);
           const Vec part = input(member, kBlock);
           all.insert(all.end(), part.begin(), part.end());
         }
         return all;
       }},
      {"split id%3 all_reduce", "ring:9", hc::Collective::all_reduce, kCount * 8,
       hc::Topology::ring(3),
       [](hc::Proc& vp, Vec& out) {
         hc::Group third = hc::split(vp, vp.id() % 3, vp.id());
         group_start = vp.clock();
         out.assign(kCount, 0);
         hc::all_reduce(third, input(vp.id(), kCount), out, std::plus<>());
       },
       [](int id) {
         Vec s(kCount, 0);
         for (int v = id % 3; v < 9; v += 3)
           for (std::size_t k = 0; k < kCount; ++k) s[k] += value(v, k);
         return s;
       }},
      // The book's q-shift (section 4.6.2) on the ring embedded in the 3-cube by the Gray code,
      // rank k = VP gray(k), neighbours only: 4 + 1 in three steps.
      {"Gray-ring split q-shift 5", "hypercube:3", hc::Collective::circular_shift, kCount * 8,
       hc::Topology::ring(8),
       [](hc::Proc& vp, Vec& out) {
         hc::Group ring = hc::split(vp, 0, static_cast<int>(hc::gray_inverse(vp.id())));
         group_start = vp.clock();
         out.assign(kCount, 0);
         hc::circular_shift(ring, input(vp.id(), kCount), out, 5);
       },
       [](int id) {
         const unsigned from = (hc::gray_inverse(static_cast<unsigned>(id)) + 8 - 5) % 8;
         return input(static_cast<int>(hc::gray(from)), kCount);
       },
       hc::Links::strict, 5, true},
  };
}

// A machine of the demo: its topology, run under `links`, labelled " strict" where that is not
// the default's.
struct DemoMachine {
  hc::Topology topology;
  hc::Options options;
  std::string label;
};
DemoMachine demo_machine(const char* name, hc::Links links, const hc::Options& defaults) {
  hc::Options options = defaults;
  options.links = links;
  return {hc::Topology::parse(name), options,
          std::string(name) + (links != defaults.links ? " strict" : "")};
}

// Uneven counts for the irregular collectives: zeros, small and large blocks.
std::vector<std::size_t> uneven_counts(int p) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) counts[static_cast<std::size_t>(i)] = (i * 37 % 5) * 64;
  return counts;
}
Vec concat(const std::vector<std::size_t>& counts, int upto) {
  Vec all;
  for (int i = 0; i < upto; ++i) {
    const Vec part = input(i, counts[static_cast<std::size_t>(i)]);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

// all_to_allv's elements from rank i to rank j, (i + j) mod 3 blocks of 64.
std::size_t pair_count(int i, int j) { return static_cast<std::size_t>((i + j) % 3 * 64); }

struct IrregularCase {
  const char* name;
  hc::Collective op;
  std::function<void(hc::Proc&, Vec&)> body;
  std::function<Vec(int, int)> expect;
  // The call's counts as textbook_time_v takes them (all_to_allv's p x p, row-major).
  std::function<std::vector<std::size_t>(int)> counts = uneven_counts;
};

std::vector<IrregularCase> irregular_cases() {
  return {
      {"all_gatherv", hc::Collective::all_gatherv,
       [](hc::Proc& vp, Vec& out) {
         const auto counts = uneven_counts(vp.size());
         out.assign(concat(counts, vp.size()).size(), 0);
         hc::all_gatherv(vp, input(vp.id(), counts[static_cast<std::size_t>(vp.id())]), out,
                         counts);
       },
       [](int, int p) { return concat(uneven_counts(p), p); }},
      {"gatherv", hc::Collective::gatherv,
       [](hc::Proc& vp, Vec& out) {
         const auto counts = uneven_counts(vp.size());
         out.assign(vp.id() == root ? concat(counts, vp.size()).size() : 0, 0);
         hc::gatherv(vp, input(vp.id(), counts[static_cast<std::size_t>(vp.id())]), out, counts,
                     root);
       },
       [](int i, int p) { return i == root ? concat(uneven_counts(p), p) : Vec{}; }},
      {"scatterv", hc::Collective::scatterv,
       [](hc::Proc& vp, Vec& out) {
         const auto counts = uneven_counts(vp.size());
         out.assign(counts[static_cast<std::size_t>(vp.id())], 0);
         hc::scatterv(vp, vp.id() == root ? concat(counts, vp.size()) : Vec{}, out, counts, root);
       },
       [](int i, int p) { return input(i, uneven_counts(p)[static_cast<std::size_t>(i)]); }},
      {"reduce_scatterv", hc::Collective::reduce_scatterv,
       [](hc::Proc& vp, Vec& out) {
         const auto counts = uneven_counts(vp.size());
         const std::size_t total = concat(counts, vp.size()).size();
         out.assign(counts[static_cast<std::size_t>(vp.id())], 0);
         hc::reduce_scatterv(vp, input(vp.id(), total), out, std::plus<>(), counts);
       },
       [](int i, int p) {
         const auto counts = uneven_counts(p);
         std::size_t offset = 0;
         for (int j = 0; j < i; ++j) offset += counts[static_cast<std::size_t>(j)];
         Vec s(counts[static_cast<std::size_t>(i)], 0);
         for (int v = 0; v < p; ++v)
           for (std::size_t k = 0; k < s.size(); ++k) s[k] += value(v, offset + k);
         return s;
       }},
      {"all_to_allv", hc::Collective::all_to_allv,
       [](hc::Proc& vp, Vec& out) {
         const int p = vp.size(), me = vp.id();
         std::vector<std::size_t> send(static_cast<std::size_t>(p)), recv(send.size());
         Vec in;
         for (int j = 0; j < p; ++j) {
           send[static_cast<std::size_t>(j)] = pair_count(me, j);
           recv[static_cast<std::size_t>(j)] = pair_count(j, me);
           const Vec part = input(me * 100 + j, pair_count(me, j));
           in.insert(in.end(), part.begin(), part.end());
         }
         out.assign(std::accumulate(recv.begin(), recv.end(), std::size_t{0}), 0);
         hc::all_to_allv(vp, in, send, out, recv);
       },
       [](int i, int p) {
         Vec all;
         for (int j = 0; j < p; ++j) {
           const Vec part = input(j * 100 + i, pair_count(j, i));
           all.insert(all.end(), part.begin(), part.end());
         }
         return all;
       },
       [](int p) {
         std::vector<std::size_t> m;
         for (int i = 0; i < p; ++i)
           for (int j = 0; j < p; ++j) m.push_back(pair_count(i, j));
         return m;
       }},
  };
}

}  // namespace

// demo [--model FILE] [--out DIR]: the model from `hypercomm calibrate`'s file (else 1 us per
// message and 10 GB/s), the trace and the picture into DIR (else out/demo).
int main(int argc, char** argv) {
  hc::Options options;
  options.model = {
      .ts = 1e-6, .tw = 1e-10, .th = 0};  // seconds; `hypercomm calibrate` measures them
  options.pinning = hc::Pinning::compact;
  std::string model_file, out_dir = "out/demo";
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--model" && i + 1 < argc)
      model_file = argv[i + 1];
    else if (flag == "--out" && i + 1 < argc)
      out_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: demo [--model FILE] [--out DIR]\n");
      return 2;
    }
  }
  if (!model_file.empty()) {
    std::optional<hc::CostModel> calibrated;
    try {
      calibrated = hc::cli::load_model(model_file);
    } catch (const hc::cli::UsageError& e) {
      std::fprintf(stderr, "demo: %s\n", e.what());
      return 2;
    }
    if (!calibrated) {
      std::fprintf(stderr, "demo: no model file %s\n", model_file.c_str());
      return 2;
    }
    options.model = *calibrated;
  }
  std::printf("hypercomm demo: every collective, verified against a sequential result\n");
  std::printf(
      "model%s: ts = %.3g s, tw = %.3g s/byte, th = %.3g s; %zu-element buffers, %zu-element "
      "blocks (int64)\n\n",
      model_file.empty() ? " (not calibrated)" : " (calibrated)", options.model.ts,
      options.model.tw, options.model.th, kCount, kBlock);
  std::printf("%-15s %-20s %-28s %9s %6s %11s %11s %11s\n", "operation", "topology", "algorithm",
              "bytes", "check", "wall (us)", "model (us)", "formula (us)");
  int failures = 0, rows = 0;
  // The linear array and the open mesh also under Links::strict: their neighbour-only cards; and
  // hypercube:3 under Links::strict, where Algo::ring runs on the Gray-code ring.
  const std::pair<const char*, hc::Links> machines[] = {{"ring:8", options.links},
                                                        {"mesh:4x4", options.links},
                                                        {"hypercube:4", options.links},
                                                        {"linear:8", options.links},
                                                        {"mesh:4x4:open", options.links},
                                                        {"linear:8", hc::Links::strict},
                                                        {"mesh:4x4:open", hc::Links::strict},
                                                        {"hypercube:3", hc::Links::strict}};
  for (const auto& [shape_name, machine_links] : machines) {
    const DemoMachine demo = demo_machine(shape_name, machine_links, options);
    const hc::Topology& topology = demo.topology;
    const int p = topology.size();
    const char* shape = demo.label.c_str();
    hc::Machine machine(topology, demo.options);
    for (const Case& c : cases()) {
      // Automatic's choice, then every other algorithm of the operation that can run here.
      const std::size_t bytes =
          c.op == hc::Collective::all_to_all ? kBlock * 8 * static_cast<std::size_t>(p) : c.bytes;
      hc::Algo automatic = hc::Algo::automatic;
      try {
        automatic = hc::resolve(c.op, hc::Algo::automatic, topology, machine_links, bytes);
      } catch (const hc::AlgorithmError&) {
        std::printf("%-15s %-20s %-28s\n", hc::to_string(c.op), shape,
                    "(no neighbour-only form yet)");
        continue;
      }
      std::vector<std::pair<hc::Algo, hc::Algo>> runs{{hc::Algo::automatic, automatic}};
      if (hc::takes_algo(c.op))
        for (const hc::Card& card : hc::cards()) {
          if (card.op != c.op || card.algo == automatic) continue;
          const auto asked = [&](const auto& run) { return run.first == card.algo; };
          if (std::any_of(runs.begin(), runs.end(), asked)) continue;  // a card of the same Algo
          try {
            runs.emplace_back(card.algo,
                              hc::resolve(c.op, card.algo, topology, machine_links, bytes));
          } catch (const hc::AlgorithmError&) {  // cannot run on this topology
          }
        }
      for (const auto& entry : runs) {
        // Not bound in the for: Clang before 16 cannot capture a structured binding.
        const auto& requested = entry.first;
        const auto& algo = entry.second;
        std::vector<Vec> results(static_cast<std::size_t>(p));
        const hc::Report report = machine.run([&](hc::Proc& vp) {
          c.body(vp, requested, results[static_cast<std::size_t>(vp.id())]);
        });
        bool ok = true;
        for (int i = 0; i < p; ++i)
          ok = ok && results[static_cast<std::size_t>(i)] == c.expect(i, p);
        // Wall time: the slowest VP's time for the call, best of 5 runs (barrier first).
        double best = 1e9;
        for (int rep = 0; rep < 5; ++rep) {
          std::vector<double> took(static_cast<std::size_t>(p));
          machine.run([&](hc::Proc& vp) {
            Vec scratch;
            hc::barrier(vp);
            const auto t0 = std::chrono::steady_clock::now();
            c.body(vp, requested, scratch);
            took[static_cast<std::size_t>(vp.id())] =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          });
          best = std::min(best, *std::max_element(took.begin(), took.end()));
        }
        const hc::CallShape call{.root = root, .shift = shift, .elem_size = sizeof(std::int64_t)};
        const double formula =
            hc::textbook_time(c.op, algo, topology, machine_links, bytes, options.model, call);
        std::string name = hc::to_string(algo);
        const hc::Card* card = hc::find_card(c.op, algo, topology, machine_links, bytes, shift);
        if (card->variant != nullptr) name += std::string(" (") + card->variant + ")";
        if (requested == hc::Algo::automatic) name = "auto=" + name;
        std::printf("%-15s %-20s %-28s %9zu %6s %11.2f %11.2f %11.2f\n", hc::to_string(c.op), shape,
                    name.c_str(), bytes, ok ? "ok" : "WRONG", best * 1e6, report.model_time * 1e6,
                    formula * 1e6);
        failures += !ok;
        ++rows;
      }
    }
  }
  // Groups: every row (column, subcube, split group) runs its collective at once; the formula
  // is the card's for the group's own topology.
  std::printf("\n%-26s %-12s %-10s %-14s %6s %11s %11s %11s\n", "on groups, all at once", "machine",
              "group", "algorithm", "check", "wall (us)", "model (us)", "formula (us)");
  for (const GroupCase& c : group_cases()) {
    const hc::Topology topology = hc::Topology::parse(c.machine);
    const int p = topology.size();
    hc::Options group_options = options;
    group_options.links = c.links;
    hc::Machine machine(topology, group_options);
    std::vector<Vec> results(static_cast<std::size_t>(p));
    std::vector<double> starts(static_cast<std::size_t>(p));
    const hc::Report report = machine.run([&](hc::Proc& vp) {
      group_start = 0;
      c.body(vp, results[static_cast<std::size_t>(vp.id())]);
      starts[static_cast<std::size_t>(vp.id())] = group_start;
    });
    bool ok = true;
    for (int i = 0; i < p; ++i) ok = ok && results[static_cast<std::size_t>(i)] == c.expect(i);
    // The collective's own model time: from when the groups start it (every VP alike here).
    const double model = report.model_time - *std::min_element(starts.begin(), starts.end());
    const double wall = best_wall(machine, [&](hc::Proc& vp) {
      Vec scratch;
      c.body(vp, scratch);
    });
    const hc::CallShape call{
        .root = 1, .shift = c.shift, .elem_size = sizeof(std::int64_t), .gray_ring = c.gray_ring};
    const hc::Card* card =
        hc::find_card(c.op, hc::Algo::automatic, c.group_topology, c.links, c.bytes, call);
    const double formula = hc::textbook_time(c.op, hc::Algo::automatic, c.group_topology, c.links,
                                             c.bytes, options.model, call);
    std::string name = hc::to_string(card->algo);
    if (card->variant != nullptr) name += std::string(" (") + card->variant + ")";
    std::printf("%-26s %-12s %-10s %-14s %6s %11.2f %11.2f %11.2f\n", c.name, c.machine,
                c.group_topology.name().c_str(), name.c_str(), ok ? "ok" : "WRONG", wall * 1e6,
                model * 1e6, formula * 1e6);
    failures += !ok;
    ++rows;
  }
  std::printf(
      "(split: model time from the end of the split's all-gather of colors and keys; the "
      "Gray-ring split under Links::strict)\n");

  // Irregular collectives: uneven blocks (0 to 256 elements) on the book's algorithms.
  // The formula: the card's for these counts (textbook_time_v), exact where it has a closed
  // form for them, else its bounds.
  std::printf("\n%-26s %-20s %-24s %6s %11s %11s %s\n", "irregular", "topology", "algorithm",
              "check", "wall (us)", "model (us)", "formula (us)");
  // (The linear array and the open mesh under Links::strict: their neighbour-only forms.)
  const std::pair<const char*, hc::Links> irregular_machines[] = {
      {"ring:8", options.links},
      {"mesh:4x4", options.links},
      {"hypercube:4", options.links},
      {"linear:8", hc::Links::strict},
      {"mesh:4x4:open", hc::Links::strict}};
  for (const auto& [shape_name, machine_links] : irregular_machines) {
    const DemoMachine demo = demo_machine(shape_name, machine_links, options);
    const hc::Topology& topology = demo.topology;
    const int p = topology.size();
    const char* shape = demo.label.c_str();
    hc::Machine machine(topology, demo.options);
    for (const IrregularCase& c : irregular_cases()) {
      std::vector<Vec> results(static_cast<std::size_t>(p));
      const hc::Report report = machine.run(
          [&](hc::Proc& vp) { c.body(vp, results[static_cast<std::size_t>(vp.id())]); });
      bool ok = true;
      for (int i = 0; i < p; ++i) ok = ok && results[static_cast<std::size_t>(i)] == c.expect(i, p);
      const double wall = best_wall(machine, [&](hc::Proc& vp) {
        Vec scratch;
        c.body(vp, scratch);
      });
      const std::vector<std::size_t> counts = c.counts(p);
      const hc::CallShape call{.root = root, .elem_size = sizeof(std::int64_t)};
      const hc::Card* card = hc::find_card_v(c.op, hc::Algo::automatic, topology, machine_links,
                                             counts, sizeof(std::int64_t));
      std::string name = std::string("auto=") + hc::to_string(card->algo);
      if (card->variant != nullptr) name += std::string(" (") + card->variant + ")";
      const double formula = hc::textbook_time_v(c.op, hc::Algo::automatic, topology, machine_links,
                                                 counts, options.model, call);
      char text[64];
      if (std::isnan(formula)) {
        const hc::TimeBounds b = hc::textbook_bounds_v(c.op, hc::Algo::automatic, topology,
                                                       machine_links, counts, options.model, call);
        std::snprintf(text, sizeof text, "%.2f to %.2f", b.lower * 1e6, b.upper * 1e6);
      } else {
        std::snprintf(text, sizeof text, "%11.2f", formula * 1e6);
      }
      std::printf("%-26s %-20s %-24s %6s %11.2f %11.2f %s\n", c.name, shape, name.c_str(),
                  ok ? "ok" : "WRONG", wall * 1e6, report.model_time * 1e6, text);
      failures += !ok;
      ++rows;
    }
  }

  std::printf("\n%d runs, %d verified, %d wrong\n", rows, rows - failures, failures);
  write_trace_and_picture(options, out_dir);
  return failures == 0 ? 0 : 1;
}
