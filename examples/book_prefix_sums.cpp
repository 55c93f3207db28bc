// Grama et al., Algorithm 4.9 (PREFIX_SUMS_HCUBE) typed in over plain vp.sendrecv, checked
// against hypercomm::scan. T = (ts + tw*m) log p.
#include <hypercomm/hypercomm.hpp>

#include <cstdio>
#include <vector>

namespace hc = hypercomm;

long prefix_sums_hcube(hc::Proc& vp, int d, long my_number) {
  const int my_id = vp.id();
  long result = my_number;
  long msg = result;
  for (int i = 0; i < d; ++i) {
    const int partner = my_id ^ (1 << i);
    std::vector<long> out{msg}, in(1);
    vp.sendrecv(partner, out, in);
    const long number = in[0];
    msg = msg + number;
    if (partner < my_id) result = result + number;
  }
  return result;
}

int main() {
  const int d = 5;
  std::vector<int> agree(1 << d, 0);
  hc::run(hc::Topology::hypercube(d), [&](hc::Proc& vp) {
    const long mine = 3L * vp.id() + 1;
    const long by_hand = prefix_sums_hcube(vp, d, mine);
    const long by_library = hc::scan(vp, mine, std::plus<>());
    long expected = 0;
    for (long k = 0; k <= vp.id(); ++k) expected += 3 * k + 1;
    agree[static_cast<std::size_t>(vp.id())] = by_hand == by_library && by_hand == expected;
  });
  bool ok = true;
  for (int a : agree) ok = ok && a;
  std::printf("Algorithm 4.9 by hand on hypercube:%d: %s\n", d,
              ok ? "matches hypercomm::scan and the sequential prefix" : "DIFFERS");
  return ok ? 0 : 1;
}
