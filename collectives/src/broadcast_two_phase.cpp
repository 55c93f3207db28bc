// Broadcast by splitting the message: Grama et al., section 4.7.1 (broadcast = scatter +
// all-to-all broadcast). The root scatters buf as p blocks (Blocks(m, elem_size, p)); then
// every VP all-gathers the blocks in place, so each VP's scatter output is its own block of buf.
//
//   T = T(scatter) + T(all-gather), each on blocks of b = m/p bytes (m = buf.size() bytes;
//   blocks differ by at most one element when p does not divide the count):
//   hypercube: T = 2 * (ts*log p + tw*b*(p-1))                       ~ 2 (ts log p + tw m)
//   ring:      T = S(p, b) + (p-1) * (ts + tw*b)            (S: scatter_ring's card)
//   mesh:      T = S(cols, rows*b) + S(rows, b) + ts*(rows + cols - 2) + tw*b*(p-1)
//   (the all-gather starts on uneven clocks, but its critical path starts at the VP that got its
//   block last; the sums were checked against the model on rings 5-9, meshes 2x3, 3x3, 4x4 and
//   cubes d = 3, 4)
//
// The family (select.cpp) decides the pair of sub-algorithms: hypercube -> scatter_hypercube +
// all_gather_hypercube (p = 2^d), ring -> scatter_ring + all_gather_ring over the whole
// machine, mesh -> scatter_mesh + all_gather_mesh (a mesh topology). Their restrictions hold.
#include "card.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

void broadcast_two_phase(const Comm& c, Bytes buf, std::size_t elem_size, int root, Family f) {
  const Blocks blocks(buf.size(), elem_size, c.p());
  // The scatter's output is this VP's block of buf itself; at the root it lies inside the input
  // (the scatters copy the root's own block with the alias-safe copy_bytes).
  const Bytes own = blocks.block(buf, c.id());
  switch (f) {
    case Family::hypercube:
      scatter_hypercube(c, buf, own, blocks, root);
      all_gather_hypercube(c, buf, blocks);
      break;
    case Family::ring:
      scatter_ring(c, buf, own, blocks, root);
      all_gather_ring(c, buf, blocks, Ring::all(c.p()));
      break;
    case Family::mesh:
      scatter_mesh(c, buf, own, blocks, root);
      all_gather_mesh(c, buf, blocks, Grid::of(c.topology()));
      break;
  }
}

namespace {
// b = m/p. Uneven blocks, or th > 0 on a mesh (its phases start on uneven clocks): no closed form.
double broadcast_two_phase_cost(const CostQuery& q) {
  const int p = q.p();
  const double block = q.block(q.m(), p);
  const Family f = q.family();
  if (!q.even(q.bytes, p) || (q.th() != 0 && f == Family::mesh)) return kNoClosedForm;
  switch (f) {
    case Family::hypercube:
      return 2 * (q.d() * q.ts() + q.tw() * block * (p - 1) + q.dimension_hops());
    case Family::ring:
      return q.ring_scatter(p, block, q.ring_th(), q.ring_arms()) +
             (p - 1) * (q.w(block) + q.ring_th());
    case Family::mesh: {
      const int rows = q.t.rows(), cols = q.t.cols();
      const CostQuery::Arms arms = q.mesh_arms();
      return q.ring_scatter(cols, rows * block, 0, arms) + q.ring_scatter(rows, block, 0, arms) +
             q.ts() * (rows + cols - 2) + q.tw() * block * (p - 1);
    }
  }
  return kNoClosedForm;
}
// The scatter: p-1 messages, each VP's block at least once (hypercube: half of m at each of the
// log p steps); the all-gather: every VP receives the p-1 other blocks, in log p messages
// (hypercube), p-1 (ring) or rows+cols-2 (mesh).
double broadcast_two_phase_work(const CostQuery& q) {
  return q.message_work() * (q.p() - 1 + q.all_gather_messages()) +
         q.tw() * (q.scatter_bytes() + q.m() * (q.p() - 1));
}
}  // namespace

extern const AlgorithmCard broadcast_two_phase_card{
    {Collective::broadcast, Algo::two_phase,
     "Grama et al., section 4.7.1: scatter, then all-gather",
     "b = m/p: hypercube 2*(ts*log p + tw*b*(p-1) + th*H); ring S(p, b) + (p-1)*(ts + "
     "tw*b + th); mesh S(cols, rows*b) + S(rows, b) + ts*(rows+cols-2) + tw*b*(p-1) (th = 0); "
     "uneven blocks, or th > 0 on a mesh: no closed form",
     kFamilyNeeds, "about 2 (ts log p + tw m)"},
    needs_family,
    broadcast_two_phase_cost,
    [](const Comm& c, const Args& a) {
      broadcast_two_phase(c, a.out, a.elem_size, a.root, a.family);
    },
    family_counts_hops,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_two_phase_work};

}  // namespace hypercomm::detail
