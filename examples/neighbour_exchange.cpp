// Every VP sends its id to each topology neighbour and receives theirs: the smallest real
// message-passing program, run on a ring, a torus mesh and a hypercube.
#include <hypercomm/hypercomm.hpp>

#include <cstdio>
#include <vector>

int main() {
  for (const char* shape : {"ring:8", "mesh:4x4", "hypercube:4"}) {
    const auto topology = hypercomm::Topology::parse(shape);
    bool ok = true;
    const auto report = hypercomm::run(topology, [&](hypercomm::Proc& vp) {
      for (int n : vp.topology().neighbors(vp.id())) {
        std::vector<int> out{vp.id()}, in(1);
        vp.sendrecv(n, out, in);
        if (in[0] != n) ok = false;  // a neighbour's reply carries its own id
      }
    });
    std::printf("%-12s %s  messages %llu  bytes %llu  wall %.1f us  model %.1f\n", shape,
                ok ? "ok" : "WRONG", static_cast<unsigned long long>(report.messages),
                static_cast<unsigned long long>(report.bytes), report.wall_seconds * 1e6,
                report.model_time);
    if (!ok) return 1;
  }
  return 0;
}
