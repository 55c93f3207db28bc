// The main demonstration: every collective on ring:8, mesh:4x4 and hypercube:4, with every
// algorithm that can run there, each result verified against a sequential computation, and the
// wall time, the model time and the card's textbook formula side by side.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <hypercomm/hypercomm.hpp>
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
  std::printf("%-15s %-12s %-24s %9s %6s %11s %11s %11s\n", "operation", "topology", "algorithm",
              "bytes", "check", "wall (us)", "model (us)", "formula (us)");
  int failures = 0, rows = 0;
  for (const char* shape : {"ring:8", "mesh:4x4", "hypercube:4"}) {
    const hc::Topology topology = hc::Topology::parse(shape);
    const int p = topology.size();
    hc::Machine machine(topology, options);
    for (const Case& c : cases()) {
      // Automatic's choice, then every other algorithm of the operation that can run here.
      const std::size_t bytes =
          c.op == hc::Collective::all_to_all ? kBlock * 8 * static_cast<std::size_t>(p) : c.bytes;
      const hc::Algo automatic =
          hc::resolve(c.op, hc::Algo::automatic, topology, options.links, bytes);
      std::vector<std::pair<hc::Algo, hc::Algo>> runs{{hc::Algo::automatic, automatic}};
      if (hc::takes_algo(c.op))
        for (const hc::Card& card : hc::cards()) {
          if (card.op != c.op || card.algo == automatic) continue;
          try {
            runs.emplace_back(card.algo,
                              hc::resolve(c.op, card.algo, topology, options.links, bytes));
          } catch (const hc::AlgorithmError&) {  // cannot run on this topology
          }
        }
      for (const auto& [requested, algo] : runs) {
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
            hc::textbook_time(c.op, algo, topology, options.links, bytes, options.model, call);
        std::string name = hc::to_string(algo);
        if (requested == hc::Algo::automatic) name = "auto=" + name;
        std::printf("%-15s %-12s %-24s %9zu %6s %11.2f %11.2f %11.2f\n", hc::to_string(c.op), shape,
                    name.c_str(), bytes, ok ? "ok" : "WRONG", best * 1e6, report.model_time * 1e6,
                    formula * 1e6);
        failures += !ok;
        ++rows;
      }
    }
  }
  std::printf("\n%d runs, %d verified, %d wrong\n", rows, rows - failures, failures);
  write_trace_and_picture(options, out_dir);
  return failures == 0 ? 0 : 1;
}
