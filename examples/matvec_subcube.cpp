// Grama et al., section 8.1.2 on a hypercube: the 2-D partitioned matrix-vector product y = A x
// with subcubes standing in for the mesh's rows and columns. On hypercube:d (d even), VP id has
// row index i = its high d/2 bits and column index j = its low d/2 bits (id = i sqrt(p) + j,
// the mesh numbering). vp.subcube(low_mask) is this VP's row (rank j), vp.subcube(high_mask) its
// column (rank i); each is a hypercube of sqrt(p) VPs, where the book's broadcast and reduction
// take (ts + tw m) log sqrt(p). VP (i, j) holds A_ij; x starts on the last column.
//   1. alignment: (i, sqrt p - 1) sends x_i to (i, i)            (row.send / row.recv by rank)
//   2. (j, j) broadcasts x_j in column subcube j                     (broadcast over column)
//   3. local products A_ij x_j                                        (n^2/p flops)
//   4. row subcubes sum the partial products onto the last column     (reduce over row)
// Cost (book): T_P ~ n^2/p tc + ts log p + tw (n/sqrt p) log p, plus ts + tw n/sqrt p to align.
// Usage: matvec_subcube [n] [hypercube:d]      (defaults: n = 512, hypercube:4; d even)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <string>
#include <thread>
#include <vector>

namespace hc = hypercomm;

// Integer-valued entries: every sum below is exact in double, so the check is equality.
double a_entry(int r, int c) { return static_cast<double>((r * 7 + c * 3) % 11 - 5); }
double x_entry(int c) { return static_cast<double>(c % 7 - 3); }

int main(int argc, char** argv) {
  int n = 512;
  std::string shape = "hypercube:4";
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
  int d = 0;
  while ((1 << d) < p) ++d;
  const int half = d / 2, q = 1 << half;  // sqrt(p)
  if (topology.name() != "hypercube:" + std::to_string(d) || d % 2 != 0 || n < 1 || n % q != 0) {
    std::fprintf(stderr, "usage: matvec_subcube [n] [hypercube:d], d even, 2^(d/2) divides n\n");
    return 2;
  }
  const int nb = n / q;
  const int low_mask = q - 1, high_mask = (q - 1) << half;

  hc::Options opt;
  opt.model = {.ts = 1e-6, .tw = 1e-9, .th = 0.0};  // seconds, seconds per byte
  std::vector<double> y(n, 0.0);                    // written by the last column

  std::printf(
      "matrix-vector product y = A x over subcubes (Grama et al. 8.1.2): n = %d on %s, p = %d, "
      "blocks %d x %d\n",
      n, topology.name().c_str(), p, nb, nb);
  std::printf(
      "groups      row = vp.subcube(0x%x) (low bits), column = vp.subcube(0x%x) (high bits)\n",
      low_mask, high_mask);

  const auto report = hc::run(
      topology,
      [&](hc::Proc& vp) {
        hc::Group row = vp.subcube(low_mask), column = vp.subcube(high_mask);
        const int i = column.rank(), j = row.rank();  // this VP is (i, j): id == i * q + j
        std::vector<double> A(nb * nb);
        for (int r = 0; r < nb; ++r)
          for (int c = 0; c < nb; ++c) A[r * nb + c] = a_entry(i * nb + r, j * nb + c);
        std::vector<double> x(nb, 0.0);
        if (j == q - 1)
          for (int c = 0; c < nb; ++c) x[c] = x_entry(i * nb + c);

        // 1. Alignment inside the row subcube, by rank: rank q-1 -> rank i.
        if (j == q - 1 && i != q - 1) row.send(i, x);
        if (j == i && i != q - 1) row.recv(q - 1, x);
        // 2. Column subcube j: rank j (the diagonal VP) broadcasts x_j.
        hc::broadcast(column, x, j);
        // 3. Local product.
        std::vector<double> partial(nb, 0.0), sum(nb);
        for (int r = 0; r < nb; ++r) {
          double s = 0.0;
          for (int c = 0; c < nb; ++c) s += A[r * nb + c] * x[c];
          partial[r] = s;
        }
        // 4. Row subcube i: sum onto rank q-1, the last column.
        hc::reduce(row, partial, sum, std::plus<>(), q - 1);
        if (j == q - 1)
          for (int r = 0; r < nb; ++r) y[i * nb + r] = sum[r];
      },
      opt);

  // Sequential check.
  int wrong = 0;
  for (int r = 0; r < n; ++r) {
    double s = 0.0;
    for (int c = 0; c < n; ++c) s += a_entry(r, c) * x_entry(c);
    if (s != y[r] && wrong++ < 5) std::printf("  y[%d] = %.17g, sequential %.17g\n", r, y[r], s);
  }

  const double ts = opt.model.ts, tw = opt.model.tw;
  const double m =
      8.0 * nb;  // bytes of n/sqrt(p) doubles (the book's tw is per word; a word = 8 bytes here)
  const double logp = static_cast<double>(d);
  const double book = ts * logp + tw * m * logp;
  const double align = q > 1 ? ts + tw * m : 0.0;
  std::printf("result      %s (y on the last column against the sequential product, exact)\n",
              wrong == 0 ? "correct" : "WRONG");
  std::printf(
      "wall time   %.6f s  (%d VPs on %u cores: local products, copies and thread switches)\n",
      report.wall_seconds, p, std::thread::hardware_concurrency());
  std::printf(
      "model time  %.4e s  (ts = %g s, tw = %g s/byte; the model charges communication only)\n",
      report.model_time, ts, tw);
  std::printf("book        ts log p + tw m log p, m = 8 n/sqrt(p) bytes     = %.4e s\n", book);
  std::printf("            + alignment ts + tw m                          = %.4e s\n",
              book + align);
  std::printf(
      "            the book leaves out the computation n^2/p tc and (in T_P) the alignment "
      "message\n");
  if (wrong != 0) {
    std::printf("WRONG: %d of %d entries of y differ from the sequential product\n", wrong, n);
    return 1;
  }
  return 0;
}
