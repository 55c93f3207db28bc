// Grama et al., section 10.4.2: Floyd's all-pairs shortest paths with the 2-D block mapping on a
// sqrt(p) x sqrt(p) torus mesh. VP (i, j) holds the n/sqrt(p) x n/sqrt(p) block D_ij of the
// distance matrix. In iteration k every VP needs row k and column k of D restricted to its block:
//   the VPs whose blocks hold row k broadcast their segments of it down their columns
//   (broadcast over vp.column(), root = the owner's row), the VPs whose blocks hold column k
//   broadcast theirs along their rows (broadcast over vp.row(), root = the owner's column),
//   then every VP updates d[x][y] = min(d[x][y], d[x][k] + d[k][y]) on its block.
// Row k and column k do not change in iteration k (d[k][k] = 0), so the update is in place.
// Cost (book): T_P = n^3/p tc + n log p (ts + tw n/sqrt p): n iterations of two broadcasts of
// n/sqrt(p) words among sqrt(p) VPs, (ts + tw n/sqrt p) log sqrt(p) each.
// Usage: floyd_2d [n] [mesh:QxQ]      (defaults: n = 256, mesh:4x4)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <hypercomm/hypercomm.hpp>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace hc = hypercomm;

constexpr int INF = std::numeric_limits<int>::max();  // no edge / no path

// min(d, a + b) with INF absorbing; distances stay far below INF (n * max weight).
int relax(int d, int a, int b) { return a == INF || b == INF || a + b >= d ? d : a + b; }

int main(int argc, char** argv) {
  int n = 256;
  std::string shape = "mesh:4x4";
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg.find(':') != std::string::npos)
      shape = arg;
    else
      n = std::atoi(arg.c_str());
  }
  hc::Topology topology = hc::Topology::ring(1);
  try {
    topology = hc::Topology::parse(shape);
  } catch (const hc::TopologyError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const int p = topology.size();
  const int q = static_cast<int>(std::lround(std::sqrt(p)));
  const std::string square = "mesh:" + std::to_string(q) + "x" + std::to_string(q);
  if (q * q != p || topology.name().rfind(square, 0) != 0 || n < 1 || n % q != 0) {
    std::fprintf(stderr, "usage: floyd_2d [n] [mesh:QxQ], a square mesh whose side Q divides n\n");
    return 2;
  }
  const int nb = n / q;
  const auto at = [n](int r, int c) { return r * n + c; };

  // A random directed graph, fixed seed: each edge present with probability 4/n, weight 1..100.
  // std::mt19937's output is fixed by the standard, so every platform draws the same graph.
  std::mt19937 rng(20261123);
  std::vector<int> G(n * n, INF);
  long edges = 0;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      const auto draw = static_cast<std::uint32_t>(rng()),
                 weight = static_cast<std::uint32_t>(rng() % 100 + 1);
      if (r == c)
        G[at(r, c)] = 0;
      else if (draw % static_cast<std::uint32_t>(n) < 4) {
        G[at(r, c)] = static_cast<int>(weight);
        ++edges;
      }
    }

  hc::Options opt;
  opt.model = {.ts = 1e-6, .tw = 1e-9, .th = 0.0};  // seconds, seconds per byte
  std::vector<int> D(G.size());                     // each VP writes its own block

  std::printf(
      "Floyd's all-pairs shortest paths, 2-D block mapping (Grama et al. 10.4.2): n = %d on %s, p "
      "= %d\n",
      n, topology.name().c_str(), p);
  std::printf("graph       random directed, seed 20261123, %ld edges, weights 1..100\n", edges);

  const auto report = hc::run(
      topology,
      [&](hc::Proc& vp) {
        hc::Group row = vp.row(), column = vp.column();
        const int i = column.rank(), j = row.rank();  // this VP is (i, j)
        std::vector<int> d(nb * nb);
        for (int x = 0; x < nb; ++x)
          for (int y = 0; y < nb; ++y) d[x * nb + y] = G[at(i * nb + x, j * nb + y)];
        std::vector<int> row_k(nb), col_k(nb);
        for (int k = 0; k < n; ++k) {
          const int owner = k / nb,
                    local =
                        k % nb;  // row k lies in mesh row `owner`, column k in mesh column `owner`
          if (i == owner)
            for (int y = 0; y < nb; ++y) row_k[y] = d[local * nb + y];
          if (j == owner)
            for (int x = 0; x < nb; ++x) col_k[x] = d[x * nb + local];
          hc::broadcast(column, row_k, owner);  // d[k][j-block] down column j
          hc::broadcast(row, col_k, owner);     // d[i-block][k] along row i
          for (int x = 0; x < nb; ++x)
            for (int y = 0; y < nb; ++y) {
              int& dxy = d[x * nb + y];
              dxy = relax(dxy, col_k[x], row_k[y]);
            }
        }
        for (int x = 0; x < nb; ++x)
          for (int y = 0; y < nb; ++y) D[at(i * nb + x, j * nb + y)] = d[x * nb + y];
      },
      opt);

  // Sequential Floyd on the same graph.
  std::vector<int> S = G;
  for (int k = 0; k < n; ++k)
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) S[at(r, c)] = relax(S[at(r, c)], S[at(r, k)], S[at(k, c)]);
  long wrong = 0, unreachable = 0;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      unreachable += S[at(r, c)] == INF;
      if (S[at(r, c)] != D[at(r, c)] && wrong++ < 5)
        std::printf("  d[%d][%d] = %d, sequential %d\n", r, c, D[at(r, c)], S[at(r, c)]);
    }

  const double ts = opt.model.ts, tw = opt.model.tw;
  const double m =
      4.0 * nb;  // bytes of n/sqrt(p) ints (the book's tw is per word; a word = 4 bytes here)
  const double book = n * std::log2(static_cast<double>(p)) * (ts + tw * m);
  std::printf(
      "result      %s (every distance against sequential Floyd, exact; %ld pairs unreachable)\n",
      wrong == 0 ? "correct" : "WRONG", unreachable);
  std::printf(
      "wall time   %.6f s  (%d VPs on %u cores: n^3/p updates, 2n broadcasts, thread switches)\n",
      report.wall_seconds, p, std::thread::hardware_concurrency());
  std::printf(
      "model time  %.4e s  (ts = %g s, tw = %g s/byte; the model charges communication only)\n",
      report.model_time, ts, tw);
  std::printf("book        n log p (ts + tw m), m = 4 n/sqrt(p) bytes = %.4e s\n", book);
  std::printf(
      "            (n iterations x 2 broadcasts x (ts + tw m) log sqrt(p); leaves out the n^3/p "
      "tc)\n");
  if (wrong != 0) {
    std::printf("WRONG: %ld of %d x %d distances differ from sequential Floyd\n", wrong, n, n);
    return 1;
  }
  return 0;
}
