// Every collective, group and cost-model option once on the contract's largest machines (4096
// VPs: hypercube:12, mesh:64x64, ring:4096, linear:4096, mesh:64x64:open), each result checked,
// each run timed: where a cost grows as p^2 per call it shows here as seconds, not microseconds.
//
//   largest_machine [topology ...] [--only name]
//
// One line per run: topology, what ran, wall seconds (a Machine's run; the option rows start
// their own threads, about 1 s of it), model time, messages. Exit status 1 when a result was
// wrong or a run failed.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace hypercomm;
using Clock = std::chrono::steady_clock;

std::atomic<bool> wrong{false};

void expect(bool ok, const Proc& vp, const char* what) {
  if (ok) return;
  if (!wrong.exchange(true)) std::fprintf(stderr, "VP %d: wrong result: %s\n", vp.id(), what);
}

struct Runner {
  Topology topology;
  std::string only;
  Machine machine;

  void time(const char* name, const std::function<Report()>& go) {
    if (!only.empty() && only != name) return;
    const auto begin = Clock::now();
    try {
      const Report r = go();
      std::printf("%-16s %-24s %8.3f s  model %6.0f  messages %zu\n", topology.name().c_str(), name,
                  std::chrono::duration<double>(Clock::now() - begin).count(), r.model_time,
                  static_cast<std::size_t>(r.messages));
    } catch (const std::exception& e) {
      std::printf("%-16s %-24s FAILED after %.3f s: %.300s\n", topology.name().c_str(), name,
                  std::chrono::duration<double>(Clock::now() - begin).count(), e.what());
      wrong = true;
    }
    std::fflush(stdout);
  }
  void on_machine(const char* name, const std::function<void(Proc&)>& body) {
    time(name, [&] { return machine.run(body); });
  }
  void with(const char* name, const Options& options, const std::function<void(Proc&)>& body) {
    time(name, [&] { return run(topology, body, options); });
  }
};

void run_all(Runner& at) {
  const int p = at.topology.size();
  const long sum = static_cast<long>(p) * (p - 1) / 2;
  const auto all_to_all_ints = [p](Proc& vp) {
    std::vector<int> in(static_cast<std::size_t>(p)), out(in.size());
    for (int j = 0; j < p; ++j) in[static_cast<std::size_t>(j)] = vp.id() * 10000 + j;
    all_to_all(vp, in, out);
    expect(out.back() == (p - 1) * 10000 + vp.id(), vp, "all_to_all");
  };
  const auto all_reduce_ids = [sum](Proc& vp) {
    expect(all_reduce(vp, static_cast<long>(vp.id()), std::plus<>{}) == sum, vp, "all_reduce");
  };
  at.on_machine("barrier", [](Proc& vp) { barrier(vp); });
  at.on_machine("broadcast 8 B", [](Proc& vp) {
    expect(broadcast(vp, vp.id() == 17 ? 42L : 0L, 17) == 42, vp, "broadcast");
  });
  at.on_machine("broadcast 64 KiB", [](Proc& vp) {
    std::vector<int> buffer(16384, vp.id() == 5 ? 7 : 0);
    broadcast(vp, buffer, 5);
    expect(buffer.back() == 7, vp, "broadcast 64 KiB");
  });
  at.on_machine("reduce", [sum](Proc& vp) {
    const long in = vp.id();
    long out = 0;
    reduce(vp, std::span<const long>(&in, 1), std::span<long>(&out, 1), std::plus<>{}, 3);
    if (vp.id() == 3) expect(out == sum, vp, "reduce");
  });
  at.on_machine("all_reduce", all_reduce_ids);
  at.on_machine("all_reduce 8 KiB", [sum](Proc& vp) {
    std::vector<long> a(1024, vp.id());
    all_reduce(vp, std::span<long>(a), std::plus<>{});
    expect(a.back() == sum, vp, "all_reduce 8 KiB");
  });
  at.on_machine("scan", [](Proc& vp) {
    const long id = vp.id();
    expect(scan(vp, id, std::plus<>{}) == id * (id + 1) / 2, vp, "scan");
  });
  at.on_machine("exscan", [](Proc& vp) {
    const long in = vp.id();
    long out = -1;
    exscan(vp, std::span<const long>(&in, 1), std::span<long>(&out, 1), std::plus<>{});
    if (vp.id() > 0) expect(out == in * (in - 1) / 2, vp, "exscan");
  });
  at.on_machine("all_gather", [p](Proc& vp) {
    const std::vector<int> all = all_gather(vp, vp.id());
    expect(static_cast<int>(all.size()) == p && all.back() == p - 1, vp, "all_gather");
  });
  at.on_machine("reduce_scatter", [p](Proc& vp) {
    const std::vector<int> in(static_cast<std::size_t>(p), 1);
    int out = 0;
    reduce_scatter(vp, in, std::span<int>(&out, 1), std::plus<>{});
    expect(out == p, vp, "reduce_scatter");
  });
  at.on_machine("scatter", [p](Proc& vp) {
    std::vector<int> in;
    if (vp.id() == 9) in.resize(static_cast<std::size_t>(p)), std::iota(in.begin(), in.end(), 0);
    int out = -1;
    scatter(vp, std::span<const int>(in), std::span<int>(&out, 1), 9);
    expect(out == vp.id(), vp, "scatter");
  });
  at.on_machine("gather", [p](Proc& vp) {
    const int in = vp.id();
    std::vector<int> out(vp.id() == 2 ? static_cast<std::size_t>(p) : 0);
    gather(vp, std::span<const int>(&in, 1), std::span<int>(out), 2);
    if (vp.id() == 2) expect(out.back() == p - 1, vp, "gather");
  });
  at.on_machine("all_to_all", all_to_all_ints);
  at.on_machine("circular_shift", [p](Proc& vp) {
    const int in = vp.id();
    int out = -1;
    circular_shift(vp, std::span<const int>(&in, 1), std::span<int>(&out, 1), 3);
    expect(out == (vp.id() - 3 + p) % p, vp, "circular_shift");
  });
  at.on_machine("send round", [p](Proc& vp) {
    const int out = vp.id();
    int in = -1;
    vp.send((vp.id() + 1) % p, std::span<const int>(&out, 1));
    vp.recv((vp.id() + p - 1) % p, std::span<int>(&in, 1));
    expect(in == (vp.id() + p - 1) % p, vp, "send round");
  });
  at.on_machine("split 7 ways", [](Proc& vp) {
    const Group g = split(vp.world(), vp.id() % 7, -vp.id());
    expect(all_reduce(g, 1L, std::plus<>{}) == g.size(), vp, "split all_reduce");
  });
  if (at.topology.kind() == Topology::Kind::hypercube) {
    at.on_machine("subcubes", [](Proc& vp) {
      const Group sixteen = vp.subcube(0x0f0u);
      expect(all_reduce(sixteen, 1L, std::plus<>{}) == 16, vp, "subcube all_reduce");
      const Group whole = vp.subcube((1u << vp.topology().dimension()) - 1);
      expect(scan(whole, 1L, std::plus<>{}) == whole.rank() + 1, vp, "subcube scan");
    });
  }
  if (at.topology.kind() == Topology::Kind::mesh) {
    at.on_machine("rows and columns", [](Proc& vp) {
      const Group row = vp.row(), column = vp.column();
      expect(all_reduce(row, 1L, std::plus<>{}) == row.size(), vp, "row all_reduce");
      expect(static_cast<int>(all_gather(column, vp.id()).size()) == column.size(), vp,
             "column all_gather");
      expect(broadcast(row, static_cast<long>(vp.id()), 0) == row.vp(0), vp, "row broadcast");
    });
  }
  at.on_machine("all_gatherv", [p](Proc& vp) {
    std::vector<std::size_t> counts(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i)
      counts[static_cast<std::size_t>(i)] = static_cast<std::size_t>(i % 3);
    const std::vector<int> in(counts[static_cast<std::size_t>(vp.id())], vp.id());
    std::vector<int> out(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
    all_gatherv(vp.world(), std::span<const int>(in), std::span<int>(out),
                std::span<const std::size_t>(counts));
    expect(out.back() == ((p - 1) % 3 != 0 ? p - 1 : p - 2), vp, "all_gatherv");
  });
  at.on_machine("reduce_scatterv", [p](Proc& vp) {
    std::vector<std::size_t> counts(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i)
      counts[static_cast<std::size_t>(i)] = static_cast<std::size_t>(i % 2);
    const std::vector<long> in(std::accumulate(counts.begin(), counts.end(), std::size_t{0}), 1);
    std::vector<long> out(counts[static_cast<std::size_t>(vp.id())]);
    reduce_scatterv(vp.world(), std::span<const long>(in), std::span<long>(out), std::plus<>{},
                    std::span<const std::size_t>(counts));
    for (const long x : out) expect(x == p, vp, "reduce_scatterv");
  });
  at.on_machine("all_to_allv", [p](Proc& vp) {
    std::vector<std::vector<int>> out(static_cast<std::size_t>(p));
    out[static_cast<std::size_t>((vp.id() + 1) % p)] = {vp.id()};
    const auto in = all_to_allv(vp.world(), out);
    const int left = (vp.id() + p - 1) % p;
    expect(in[static_cast<std::size_t>(left)].size() == 1 &&
               in[static_cast<std::size_t>(left)][0] == left,
           vp, "all_to_allv");
  });
  Options contention, all_port, trace, strict;
  contention.model.contention = true;
  all_port.model.all_port = true;
  trace.trace = true;
  strict.links = Links::strict;
  at.with("all_reduce, contention", contention, all_reduce_ids);
  at.with("all_to_all, contention", contention, all_to_all_ints);
  at.with("all_to_all, all_port", all_port, all_to_all_ints);
  at.with("all_to_all, traced", trace, all_to_all_ints);
  at.with("all_reduce, strict", strict, all_reduce_ids);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> shapes;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc)
      only = argv[++i];
    else
      shapes.push_back(arg);
  }
  if (shapes.empty())
    shapes = {"hypercube:12", "mesh:64x64", "ring:4096", "linear:4096", "mesh:64x64:open"};
  for (const std::string& shape : shapes) {
    const Topology topology = Topology::parse(shape);
    Runner runner{topology, only, Machine(topology, Options{})};
    run_all(runner);
  }
  return wrong ? 1 : 0;
}
