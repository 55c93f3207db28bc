// All-reduce, all-gather, reduce-scatter and barrier on a mesh without wraparound, neighbours
// only: the open-mesh rooted algorithms (lines along the rows and the columns) through the
// middle VP m = (floor((rows-1)/2), floor((cols-1)/2)), which halves every line (Grama et al.,
// section 4.3: a reduction followed by a broadcast; section 4.2 on a mesh without the torus's
// wraparound). The torus's mesh cards need the wraparound links.
//
//   all_reduce:      T = R(m, M) + B(m, M)            (M = in.size() bytes)
//   all_gather:      T = G(m, M) + B(m, p*M)          (M = one block)
//   reduce_scatter:  T = R(m, p*M) + S(m, M)          (M = one block)
//   barrier:         T = R(m, 0) + B(m, 0)
//   all_gatherv, reduce_scatterv: the same with uneven blocks (no closed form unless equal)
//   (R, B, S, G: the open-mesh reduce, broadcast, scatter and gather from m: open_mesh_*)
//
// Restrictions: a mesh without wraparound.
#include "card.hpp"
#include "rooted.hpp"
#include "symmetric.hpp"

namespace hypercomm::detail {

namespace {

int middle_of(const Topology& t) { return t.id_at((t.rows() - 1) / 2, (t.cols() - 1) / 2); }

void all_reduce_open(const Comm& c, ConstBytes in, Bytes out, const Reducer& op) {
  const int middle = middle_of(c.topology());
  const Grid grid = Grid::of(c.topology());
  reduce_mesh(c, in, out, op, middle, grid, true);
  broadcast_mesh(c, out, middle, grid, true);
}

double all_reduce_open_cost(const CostQuery& q) {
  const int middle = middle_of(q.t);
  return open_mesh_reduce(q, middle, q.m()) + open_mesh_broadcast(q, middle, q.m());
}

double all_gather_open_cost(const CostQuery& q) {
  const int middle = middle_of(q.t);
  return open_mesh_gather(q, middle, q.m()) + open_mesh_broadcast(q, middle, q.m() * q.p());
}

double reduce_scatter_open_cost(const CostQuery& q) {
  const int middle = middle_of(q.t);
  return open_mesh_reduce(q, middle, q.m() * q.p()) + open_mesh_scatter(q, middle, q.m());
}

// Uneven blocks. Selection: every block as large as the largest; textbook_time_v: equal counts
// as the regular call, uneven no closed form.
double all_gatherv_open_cost(const CostQuery& q) {
  if (q.selection) return all_gather_open_cost(q);
  if (!q.equal_counts()) return kNoClosedForm;
  return all_gather_open_cost(q.as_regular());
}

double reduce_scatterv_open_cost(const CostQuery& q) {
  if (q.selection) return reduce_scatter_open_cost(q);
  if (!q.equal_counts()) return kNoClosedForm;
  return reduce_scatter_open_cost(q.as_regular());
}

void all_gather_open(const Comm& c, const Args& a) {
  const int middle = middle_of(c.topology());
  gather_mesh(c, a.blocks->block(ConstBytes(a.out), c.id()), a.out, *a.blocks, middle, true);
  broadcast_mesh(c, a.out, middle, Grid::of(c.topology()), true);
}

void reduce_scatter_open(const Comm& c, const Args& a) {
  const int middle = middle_of(c.topology());
  Buffer whole(c.id() == middle ? a.in.size() : 0);
  reduce_mesh(c, a.in, whole, *a.op, middle, Grid::of(c.topology()), true);
  scatter_mesh(c, whole, a.out, *a.blocks, middle, true);
}

}  // namespace

extern const AlgorithmCard all_reduce_mesh_open_card{
    {Collective::all_reduce, Algo::mesh,
     "Grama et al., section 4.3 on a mesh without wraparound: the open-mesh reduction into the "
     "middle VP, then its broadcast",
     "R(m) + B(m): the open-mesh reduce and broadcast formulas from the middle VP m = "
     "(floor((rows-1)/2), floor((cols-1)/2))",
     kOpenMeshNeeds, "2 (ts + tw m) log p (routed)", "open mesh"},
    needs_open_mesh,
    all_reduce_open_cost,
    [](const Comm& c, const Args& a) { all_reduce_open(c, a.in, a.out, *a.op); }};

extern const AlgorithmCard all_gather_mesh_open_card{
    {Collective::all_gather, Algo::mesh,
     "Grama et al., section 4.2 on a mesh without wraparound: the open-mesh gather into the "
     "middle VP, then the broadcast of all p blocks",
     "G(m, blocks of m) + B(m, p*m), from the middle VP (see the open-mesh gather and "
     "broadcast)",
     kOpenMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1) (torus)", "open mesh"},
    needs_open_mesh,
    all_gather_open_cost,
    all_gather_open};

extern const AlgorithmCard all_gatherv_mesh_open_card{
    {Collective::all_gatherv, Algo::mesh,
     "Grama et al., section 4.2 on a mesh without wraparound with uneven blocks: the open-mesh "
     "gatherv into the middle VP, then the broadcast of all the blocks",
     "uneven: gatherv / mesh (open mesh) into the middle VP plus the open-mesh broadcast of all "
     "the blocks: no closed form; equal blocks of m: G(m, blocks of m) + B(m, p*m)",
     kOpenMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1) (torus)", "open mesh"},
    needs_open_mesh,
    all_gatherv_open_cost,
    all_gather_open};

extern const AlgorithmCard reduce_scatter_mesh_open_card{
    {Collective::reduce_scatter, Algo::mesh,
     "Grama et al., section 4.2 on a mesh without wraparound: the open-mesh reduction of the "
     "whole vector into the middle VP, then its scatter",
     "R(m, p*m) + S(m, blocks of m), from the middle VP (see the open-mesh reduce and scatter)",
     kOpenMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1) (torus)", "open mesh"},
    needs_open_mesh,
    reduce_scatter_open_cost,
    reduce_scatter_open};

extern const AlgorithmCard reduce_scatterv_mesh_open_card{
    {Collective::reduce_scatterv, Algo::mesh,
     "Grama et al., section 4.2 on a mesh without wraparound with uneven blocks: the open-mesh "
     "reduction of the whole vector into the middle VP, then its scatterv",
     "uneven: the open-mesh reduce of the whole vector into the middle VP plus scatterv / mesh "
     "(open mesh) from it: no closed form; equal blocks of m: R(m, p*m) + S(m, blocks of m)",
     kOpenMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1) (torus)", "open mesh"},
    needs_open_mesh,
    reduce_scatterv_open_cost,
    reduce_scatter_open};

extern const AlgorithmCard barrier_mesh_open_card{
    {Collective::barrier, Algo::mesh,
     "the open-mesh all-reduce of no data: zero-byte messages into the middle VP and out again",
     "R(m, 0) + B(m, 0), from the middle VP (see all_reduce / mesh (open mesh))", kOpenMeshNeeds,
     nullptr, "open mesh"},
    needs_open_mesh,
    all_reduce_open_cost,
    [](const Comm& c, const Args&) { all_reduce_open(c, {}, {}, no_data_reducer()); }};

}  // namespace hypercomm::detail
