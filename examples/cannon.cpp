// Grama et al., section 8.2.2: Cannon's algorithm for C = A B on a sqrt(p) x sqrt(p) torus mesh.
// VP (i, j) holds the n/sqrt(p) x n/sqrt(p) blocks A_ij and B_ij.
//   alignment: row i of A shifts left by i, column j of B shifts up by j, so that VP (i, j)
//              holds A_i,k and B_k,j with k = (i + j) mod sqrt(p)  (circular_shift over vp.row()
//              and vp.column(), shift -i and -j)
//   sqrt(p) steps: C_ij += A B locally, then A shifts left by one in every row and B up by one
//              in every column (the last step's shift moves blocks nobody uses, so it is left out)
// Cost (book, cut-through): T_P = n^3/p (computation) + 2 sqrt(p) ts + 2 tw n^2/sqrt(p)
// (the sqrt(p) compute-and-shift steps) + 2 (ts + tw n^2/p) (the alignment).
// Usage: cannon [n] [mesh:QxQ]      (defaults: n = 512, mesh:4x4)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <hypercomm/hypercomm.hpp>
#include <string>
#include <thread>
#include <vector>

namespace hc = hypercomm;

// Integer-valued entries in [-4, 4]: every sum is exact in double, so the check is equality.
double a_entry(int r, int c) { return static_cast<double>((r * 5 + c * 3 + 1) % 9 - 4); }
double b_entry(int r, int c) { return static_cast<double>((r * 2 + c * 7 + 3) % 9 - 4); }

// C += A B for nb x nb row-major blocks.
void multiply_add(const std::vector<double>& A, const std::vector<double>& B,
                  std::vector<double>& C, int nb) {
  for (int r = 0; r < nb; ++r)
    for (int k = 0; k < nb; ++k) {
      const double a = A[r * nb + k];
      const double* b = &B[k * nb];
      double* c = &C[r * nb];
      for (int col = 0; col < nb; ++col) c[col] += a * b[col];
    }
}

int main(int argc, char** argv) {
  int n = 512;
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
    std::fprintf(stderr, "usage: cannon [n] [mesh:QxQ], a square mesh whose side Q divides n\n");
    return 2;
  }
  const int nb = n / q;
  const int block = nb * nb;

  hc::Options opt;
  opt.model = {.ts = 1e-6, .tw = 1e-9, .th = 0.0};  // seconds, seconds per byte
  std::vector<double> C(n * n, 0.0);                // each VP writes its own block

  std::printf(
      "Cannon's matrix multiplication C = A B (Grama et al. 8.2.2): n = %d on %s, p = %d, blocks "
      "%d x %d\n",
      n, topology.name().c_str(), p, nb, nb);

  const auto report = hc::run(
      topology,
      [&](hc::Proc& vp) {
        hc::Group row = vp.row(), column = vp.column();
        const int i = column.rank(), j = row.rank();  // this VP is (i, j)
        std::vector<double> A(block), B(block), Cb(block, 0.0), tmp(block);
        for (int r = 0; r < nb; ++r)
          for (int c = 0; c < nb; ++c) {
            A[r * nb + c] = a_entry(i * nb + r, j * nb + c);
            B[r * nb + c] = b_entry(i * nb + r, j * nb + c);
          }
        // Alignment: A_ij to (i, j - i), B_ij to (i - j, j).
        hc::circular_shift(row, A, tmp, -i);
        A.swap(tmp);
        hc::circular_shift(column, B, tmp, -j);
        B.swap(tmp);
        for (int step = 0; step < q; ++step) {
          multiply_add(A, B, Cb, nb);
          if (step == q - 1) break;
          hc::circular_shift(row, A, tmp, -1);  // A left by one
          A.swap(tmp);
          hc::circular_shift(column, B, tmp, -1);  // B up by one
          B.swap(tmp);
        }
        for (int r = 0; r < nb; ++r)
          for (int c = 0; c < nb; ++c) C[(i * nb + r) * n + j * nb + c] = Cb[r * nb + c];
      },
      opt);

  // Sequential check: C = A B with the same blocked kernel on whole matrices.
  std::vector<double> As(n * n), Bs(As.size()), Cs(As.size(), 0.0);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      As[r * n + c] = a_entry(r, c);
      Bs[r * n + c] = b_entry(r, c);
    }
  multiply_add(As, Bs, Cs, n);
  long wrong = 0;
  for (int e = 0; e < n * n; ++e)
    if (Cs[e] != C[e] && wrong++ < 5)
      std::printf("  C[%d][%d] = %.17g, sequential %.17g\n", e / n, e % n, C[e], Cs[e]);

  const double ts = opt.model.ts, tw = opt.model.tw;
  const double m =
      8.0 * static_cast<double>(block);  // bytes of one block, n^2/p doubles (a word = 8 bytes)
  const double steps =
      q > 1 ? 2 * q * (ts + tw * m) : 0.0;  // = 2 sqrt(p) ts + 2 tw n^2/sqrt(p), 8-byte words
  const double align = q > 1 ? 2 * (ts + tw * m) : 0.0;
  const double program = q > 1 ? 2 * (q - 1) * (ts + tw * m) + align : 0.0;
  std::printf("result      %s (C against the sequential product, exact)\n",
              wrong == 0 ? "correct" : "WRONG");
  std::printf("wall time   %.6f s  (%d VPs on %u cores: the n^3/p multiply-adds dominate)\n",
              report.wall_seconds, p, std::thread::hardware_concurrency());
  std::printf(
      "model time  %.4e s  (ts = %g s, tw = %g s/byte; the model charges communication only)\n",
      report.model_time, ts, tw);
  std::printf("book        2 sqrt(p) ts + 2 tw n^2/sqrt(p), m = 8 n^2/p bytes     = %.4e s\n",
              steps);
  std::printf("            + alignment 2 (ts + tw m)                             = %.4e s\n",
              steps + align);
  std::printf("            this program: alignment + 2 (sqrt(p) - 1) (ts + tw m)  = %.4e s\n",
              program);
  std::printf(
      "            the book's count has sqrt(p) shifts (one unneeded); all leave out the n^3/p "
      "tc\n");
  if (wrong != 0) {
    std::printf("WRONG: %ld of %d x %d entries of C differ from the sequential product\n", wrong, n,
                n);
    return 1;
  }
  return 0;
}
