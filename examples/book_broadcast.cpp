// Grama et al., Algorithm 4.2 (GENERAL_ONE_TO_ALL_BC) typed in as a reader would, over plain
// vp.send / vp.recv, and checked against the library's broadcast: a reader's own bit-mask
// algorithm runs unmodified. T = (ts + tw*m) log p.
#include <hypercomm/hypercomm.hpp>

#include <cstdio>
#include <vector>

namespace hc = hypercomm;

void general_one_to_all_bc(hc::Proc& vp, int d, int source, std::vector<double>& X) {
  const int my_id = vp.id();
  const int my_virtual_id = my_id ^ source;
  int mask = (1 << d) - 1;
  for (int i = d - 1; i >= 0; --i) {
    mask ^= 1 << i;                       // clear bit i
    if ((my_virtual_id & mask) == 0) {    // lower i bits of my_virtual_id are 0
      if ((my_virtual_id & (1 << i)) == 0) {
        const int virtual_dest = my_virtual_id ^ (1 << i);
        vp.send(virtual_dest ^ source, X);
      } else {
        const int virtual_source = my_virtual_id ^ (1 << i);
        vp.recv(virtual_source ^ source, X);
      }
    }
  }
}

int main() {
  const int d = 4, source = 5;
  hc::Options options;
  options.model = {.ts = 1.0, .tw = 0.01, .th = 0.0};
  std::vector<int> agree(1 << d, 0);
  const auto book = hc::run(hc::Topology::hypercube(d), [&](hc::Proc& vp) {
    std::vector<double> X(100, vp.id() == source ? 42.0 : 0.0), Y(X.size(), vp.id() == source ? 42.0 : 0.0);
    general_one_to_all_bc(vp, d, source, X);
    hc::broadcast(vp, Y, source, hc::Algo::hypercube);
    agree[static_cast<std::size_t>(vp.id())] = X == Y && X[99] == 42.0;
  }, options);
  bool ok = true;
  for (int a : agree) ok = ok && a;
  const double m = 100 * sizeof(double);
  const double formula = 2 * (1.0 + 0.01 * m) * d;  // the book's loop, then the library's
  std::printf("Algorithm 4.2 by hand on hypercube:%d from VP %d: %s; model time %.2f (2 x (ts + tw*m) log p = %.2f)\n",
              d, source, ok ? "matches hypercomm::broadcast" : "DIFFERS", book.model_time, formula);
  return ok && book.model_time == formula ? 0 : 1;
}
