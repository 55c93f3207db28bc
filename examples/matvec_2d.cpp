// Grama et al., section 8.1.2: matrix-vector multiplication y = A x with 2-D partitioning on a
// sqrt(p) x sqrt(p) torus mesh. VP (i, j) holds the n/sqrt(p) x n/sqrt(p) block A_ij; the vector
// starts on the last column (VP (i, sqrt p - 1) holds x_i). Then, as in the book's Figure 8.3:
//   1. alignment: VP (i, sqrt p - 1) sends x_i to the diagonal VP (i, i)      (vp.send / vp.recv)
//   2. VP (i, i) broadcasts x_i down column i                     (broadcast over vp.column())
//   3. every VP multiplies its block: partial = A_ij x_j                      (n^2/p flops)
//   4. the partial products are summed along each row onto the last column (reduce over vp.row())
// Cost (book): T_P ~ n^2/p tc + ts log p + tw (n/sqrt p) log p, the two collectives on sqrt(p)
// VPs costing (ts + tw n/sqrt p) log sqrt(p) each; the alignment adds ts + tw n/sqrt p.
// Usage: matvec_2d [n] [mesh:QxQ]      (defaults: n = 512, mesh:4x4)
// Built with HYPERCOMM_EXAMPLE_MPI (matvec_2d_mpi), the same program runs under mpirun, the mesh
// spread over the processes (hypercomm::mpi), and process 0 prints what one process prints.
#ifdef HYPERCOMM_EXAMPLE_MPI
#include <mpi.h>

#include <hypercomm/mpi.hpp>
#endif
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
#ifdef HYPERCOMM_EXAMPLE_MPI
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct Finalize {
    ~Finalize() { MPI_Finalize(); }
  } finalize;
  if (rank != 0) (void)std::freopen("/dev/null", "w", stdout);  // one process speaks
#endif
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
#ifdef HYPERCOMM_EXAMPLE_MPI
  int processes = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  if (p < processes) {  // every process says no alike (hc::mpi::Machine would throw)
    if (rank == 0)
      std::fprintf(stderr, "matvec_2d_mpi: %s has %d VPs, fewer than the %d processes\n",
                   topology.name().c_str(), p, processes);
    return 2;
  }
#endif
  const int q = static_cast<int>(std::lround(std::sqrt(p)));
  const std::string square = "mesh:" + std::to_string(q) + "x" + std::to_string(q);
  if (q * q != p || topology.name().rfind(square, 0) != 0 || n < 1 || n % q != 0) {
    std::fprintf(stderr, "usage: matvec_2d [n] [mesh:QxQ], a square mesh whose side Q divides n\n");
    return 2;
  }
  const int nb = n / q;  // block side

  hc::Options opt;
  opt.model = {.ts = 1e-6, .tw = 1e-9, .th = 0.0};  // seconds, seconds per byte
  std::vector<double> y(n, 0.0);                    // written by the last column

  std::printf(
      "2-D matrix-vector product y = A x (Grama et al. 8.1.2): n = %d on %s, p = %d, blocks %d x "
      "%d\n",
      n, topology.name().c_str(), p, nb, nb);

  const auto body = [&](hc::Proc& vp) {
    hc::Group row = vp.row(), column = vp.column();
    const int i = column.rank(), j = row.rank();  // this VP is (i, j)
    std::vector<double> A(nb * nb);
    for (int r = 0; r < nb; ++r)
      for (int c = 0; c < nb; ++c) A[r * nb + c] = a_entry(i * nb + r, j * nb + c);
    std::vector<double> x(nb, 0.0);
    if (j == q - 1)
      for (int c = 0; c < nb; ++c) x[c] = x_entry(i * nb + c);

    // 1. Alignment: x_i from (i, q-1) to the diagonal (i, i); machine ids are i*q + column.
    if (j == q - 1 && i != q - 1) vp.send(i * q + i, x);
    if (j == i && i != q - 1) vp.recv(i * q + q - 1, x);
    // 2. Column j: the diagonal VP (j, j), column rank j, broadcasts x_j.
    hc::broadcast(column, x, j);
    // 3. Local product.
    std::vector<double> partial(nb, 0.0), sum(nb);
    for (int r = 0; r < nb; ++r) {
      double s = 0.0;
      for (int c = 0; c < nb; ++c) s += A[r * nb + c] * x[c];
      partial[r] = s;
    }
    // 4. Row i: sum the partial products onto the last column, row rank q-1.
    hc::reduce(row, partial, sum, std::plus<>(), q - 1);
    if (j == q - 1)
      for (int r = 0; r < nb; ++r) y[i * nb + r] = sum[r];
  };
#ifdef HYPERCOMM_EXAMPLE_MPI
  const auto report = hc::mpi::run(MPI_COMM_WORLD, topology, body, opt);
  // Each process holds the entries of y its own VPs wrote (zeros elsewhere).
  MPI_Allreduce(MPI_IN_PLACE, y.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#else
  const auto report = hc::run(topology, body, opt);
#endif

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
  const double logp = std::log2(static_cast<double>(p));
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
