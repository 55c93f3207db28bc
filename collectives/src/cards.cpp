// The algorithm cards (collectives/ALGORITHMS.md) as data, and each card's exact cost evaluated
// for a machine (textbook_time): a closed form wherever one holds, else the cost model's clock
// rules applied to the algorithm's message schedule step by step (Clocks), which is the exact
// formula where the cost is a maximum over paths (uneven blocks, phases that start on uneven
// clocks, the order-keeping variants, routes of different lengths). tests/test_fidelity.cpp
// checks every formula against the model time of real runs.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <hypercomm/cards.hpp>
#include <hypercomm/errors.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "blocks.hpp"
#include "comm.hpp"
#include "esbt_trees.hpp"
#include "exchange_util.hpp"
#include "ring.hpp"
#include "scratch.hpp"
#include "select.hpp"

namespace hypercomm {

namespace {

using C = Collective;
using A = Algo;

constexpr const char* kHypercubeNeeds =
    "p = 2^d; a hypercube topology or Links::routed (partners i XOR 2^k)";
constexpr const char* kRingNeeds =
    "any p; VP i and i+1 neighbours (a ring, a 1 x n torus) or Links::routed; th counted only "
    "when they are neighbours";
constexpr const char* kMeshNeeds =
    "a rows x cols mesh (any shape); neighbours only on a torus, Links::routed on a mesh "
    "without wraparound";
constexpr const char* kFamilyNeeds =
    "any p; the hypercube pair when p = 2^d on a hypercube or under Links::routed, else the "
    "mesh pair on a mesh, else the ring pair";

// Notation (ALGORITHMS.md, "Notation"): H = sum over k < log p of hops(i, i XOR 2^k) (= log p on
// a hypercube); c(n) = ceil(n/2) for n >= 2, c(1) = 0; a = floor(n/2), b = floor((n-1)/2);
// S(n, x) = a*(ts + th) + tw*x*a(a+1)/2 for even n, (a+1)*ts + a*th + tw*x*(a + a(a+1)/2) for
// odd n >= 3 (two-way ring scatter of n parts of x bytes; S(1, x) = 0); G(n, x) = a*(ts + th) +
// tw*x*a(a+1)/2 (two-way ring gather); b_n: the largest of n blocks of m (m/n when n divides
// the element count).
constexpr std::array kCards{
    Card{C::broadcast, A::hypercube, "Grama et al., Algorithms 4.1 and 4.2",
         "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    Card{C::broadcast, A::esbt,
         "Johnsson and Ho 1989: d edge-disjoint spanning binomial trees, k chunks pipelined",
         "(k + log p)*(ts + tw*m/k), k the whole number next to k* = sqrt(m*log p*tw/ts) with the "
         "smaller cost (tw = 0: the reference machine's ts = 1 us, tw = 0.1 ns/B); at k*, the "
         "optimum m*tw + ts*log p + 2*sqrt(m*log p*ts*tw); p = 2: k*(ts + tw*m/k) + th; th > 0 "
         "or uneven chunks: the longest path of the schedule",
         kHypercubeNeeds, nullptr},
    Card{C::broadcast, A::two_phase, "Grama et al., section 4.7.1: scatter, then all-gather",
         "b = m/p: hypercube 2*(ts*log p + tw*b*(p-1) + th*H); ring S(p, b) + (p-1)*(ts + "
         "tw*b + th); mesh S(cols, rows*b) + S(rows, b) + ts*(rows+cols-2) + tw*b*(p-1) (th = 0); "
         "uneven blocks: step by step",
         kFamilyNeeds, "about 2 (ts log p + tw m)"},
    Card{C::broadcast, A::mesh,
         "CS 584 lecture: two-way ring broadcast along the root's row, then down every column",
         "(ts + tw*m)*(c(cols) + c(rows)) + th*(floor(cols/2) + floor(rows/2))", kMeshNeeds,
         "(ts + tw m) log p"},
    Card{C::broadcast, A::ring, "CS 584 lecture: two-way ring broadcast",
         "(ts + tw*m)*ceil(p/2) + th*floor(p/2)", kRingNeeds, "(ts + tw m) log p"},
    Card{C::reduce, A::hypercube, "Grama et al., Algorithm 4.3 (any root via id XOR root)",
         "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    Card{C::reduce, A::two_phase, "Grama et al., section 4.7.2: reduce-scatter, then gather",
         "b = m/p: hypercube 2*(ts*log p + tw*b*(p-1) + th*H); ring (p-1)*(ts + tw*b + th) + "
         "G(p, b); mesh (ts + th)*(rows+cols-2) + tw*b*(p-1) + G(rows, b) + G(cols, rows*b); "
         "non-commutative (ring, mesh) or uneven blocks: step by step",
         kFamilyNeeds, "about 2 (ts log p + tw m)"},
    Card{C::reduce, A::mesh,
         "the mesh broadcast reversed: every row into the root's column, then that column",
         "(ts + tw*m + th)*(floor(cols/2) + floor(rows/2)); non-commutative: each floor(n/2) "
         "becomes max(r, n-1-r) when the root's rank r in that row/column is not 0 or n-1",
         kMeshNeeds, "(ts + tw m) log p"},
    Card{C::reduce, A::ring, "CS 584 lecture: the two-way ring broadcast reversed",
         "(ts + tw*m + th)*floor(p/2); non-commutative, root 0 < r < p-1: (ts + tw*m + "
         "th)*max(r, p-1-r)",
         kRingNeeds, "(ts + tw m) log p"},
    Card{C::all_reduce, A::hypercube,
         "Grama et al., section 4.3: butterfly (Algorithm 4.7 with a combine)",
         "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    Card{C::all_reduce, A::two_phase,
         "Grama et al., section 4.7.3: reduce-scatter, then all-gather",
         "hypercube 2*(ts*log p + tw*b*(p-1) + th*H), b = m/p (uneven, commutative: 2*sum_i "
         "(ts + tw*B(2^i) + th*hops(2^i)), B(j) = bytes of blocks 0..j-1); ring as all_reduce "
         "ring; mesh 2*((ts + th)*(rows+cols-2) + tw*b*(p-1)); otherwise step by step",
         kFamilyNeeds, "about 2 (ts log p + tw m)"},
    Card{C::all_reduce, A::mesh,
         "Grama et al., section 4.3 on a mesh: all-reduce along the row, then the column",
         "sum over the phases n = cols, n = rows (n >= 2): (ts + tw*m + th)*(n-1) when "
         "m*(n-2) <= 10000*n, else 2*(n-1)*(ts + tw*b_n + th) (non-commutative: 2*ts*(n-1) + "
         "tw*b_n*(3n-4), th = 0, even blocks; otherwise step by step)",
         kMeshNeeds, nullptr},
    Card{C::all_reduce, A::ring,
         "Grama et al., section 4.7.3 on a ring: Algorithm 4.5, then Algorithm 4.4",
         "2*(p-1)*(ts + tw*b_p + th); non-commutative: 2*ts*(p-1) + tw*b_p*(3p-4) (th = 0, "
         "even blocks; otherwise step by step)",
         kRingNeeds, nullptr},
    Card{C::all_gather, A::hypercube, "Grama et al., Algorithm 4.7", "ts*log p + tw*m*(p-1) + th*H",
         kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::all_gather, A::mesh, "Grama et al., Algorithm 4.6 (any rows x cols)",
         "(ts + th)*(rows+cols-2) + tw*m*(p-1)", kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    Card{C::all_gather, A::ring, "Grama et al., Algorithm 4.4", "(ts + tw*m + th)*(p-1)",
         kRingNeeds, "(ts + tw m)(p - 1)"},
    Card{C::reduce_scatter, A::hypercube,
         "Grama et al., Algorithm 4.8 (non-commutative: dimensions 0 .. d-1, strided blocks)",
         "ts*log p + tw*m*(p-1) + th*H", kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::reduce_scatter, A::mesh, "Grama et al., section 4.2: the dual of Algorithm 4.6",
         "(ts + th)*(rows+cols-2) + tw*m*(p-1); non-commutative: R(cols, rows*m) + R(rows, m), "
         "R(n, x) = (ts + th)*(n-1) + tw*x*(2n-3) for n >= 2, R(1, x) = 0",
         kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    Card{C::reduce_scatter, A::ring, "Grama et al., Algorithm 4.5 (non-commutative: two partials)",
         "(ts + tw*m + th)*(p-1); non-commutative: (ts + th)*(p-1) + tw*m*(2p-3)", kRingNeeds,
         "(ts + tw m)(p - 1)"},
    Card{C::scan, A::hypercube, "Grama et al., Algorithm 4.9", "(ts + tw*m)*log p + th*H",
         kHypercubeNeeds, "(ts + tw m) log p"},
    Card{C::scan, A::mesh,
         "Algorithm 4.9 mapped on a mesh: row chains, the last column's chain, row broadcasts",
         "(ts + tw*m + th)*(rows+cols-2) + (rows > 1: (ts + tw*m)*c(cols) + th*floor(cols/2))",
         kMeshNeeds, nullptr},
    Card{C::scan, A::ring, "a pipeline: VP i passes the prefix of 0..i to i+1",
         "(ts + tw*m + th)*(p-1)", kRingNeeds, nullptr},
    Card{C::exscan, A::hypercube, "Grama et al., Algorithm 4.9 (exclusive)",
         "(ts + tw*m)*log p + th*H", kHypercubeNeeds, "(ts + tw m) log p"},
    Card{C::exscan, A::mesh, "Algorithm 4.9 mapped on a mesh (exclusive)",
         "(ts + tw*m + th)*(rows+cols-2) + (rows > 1: (ts + tw*m)*c(cols) + th*floor(cols/2))",
         kMeshNeeds, nullptr},
    Card{C::exscan, A::ring, "a pipeline (exclusive)", "(ts + tw*m + th)*(p-1)", kRingNeeds,
         nullptr},
    Card{C::scatter, A::hypercube, "Grama et al., section 4.4: binomial tree, recursive halving",
         "ts*log p + tw*m*(p-1) + th*H", kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::scatter, A::mesh,
         "Grama et al., section 4.4 on a mesh: column bundles along the root's row, then down "
         "every column",
         "S(cols, rows*m) + S(rows, m)", kMeshNeeds, "ts log p + tw m (p - 1)"},
    Card{C::scatter, A::ring,
         "Grama et al., section 4.4 on a ring: one message per direction, each VP keeps its block",
         "S(p, m): p even a*(ts + th) + tw*m*a(a+1)/2, p odd (a+1)*ts + a*th + tw*m*(a + "
         "a(a+1)/2), a = floor(p/2)",
         kRingNeeds, "ts log p + tw m (p - 1)"},
    Card{C::gather, A::hypercube, "Grama et al., section 4.4: binomial tree, recursive doubling",
         "ts*log p + tw*m*(p-1) + th*H", kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::gather, A::mesh,
         "Grama et al., section 4.4 on a mesh: every column into the root's row, then that row",
         "G(rows, m) + G(cols, rows*m)", kMeshNeeds, "ts log p + tw m (p - 1)"},
    Card{C::gather, A::ring, "Grama et al., section 4.4 on a ring: both directions",
         "G(p, m) = a*(ts + th) + tw*m*a(a+1)/2, a = floor(p/2)", kRingNeeds,
         "ts log p + tw m (p - 1)"},
    Card{C::all_to_all, A::hypercube,
         "Grama et al., Algorithm 4.10: pairwise exchange, E-cube routed",
         "(ts + tw*m)*(p-1) + th*(p/2)*log p on a hypercube (m = one block; step i's routes have "
         "popcount(i) links); routed over a ring or mesh with th > 0: step by step",
         "p = 2^d; Links::routed (p > 2)", "(ts + tw m)(p - 1)"},
    Card{C::all_to_all, A::dimension_exchange,
         "Grama et al., section 4.5.3: one dimension per step, store and forward",
         "(ts + tw*m*p/2)*log p + th*H (m = one block)", kHypercubeNeeds, "(ts + tw m p/2) log p"},
    Card{C::all_to_all, A::mesh, "Grama et al., section 4.5.2: row phase, then column phase",
         "(ts + tw*m*p/2 + th)*(rows+cols-2) (m = one block)", kMeshNeeds,
         "(2 ts + tw m p)(sqrt p - 1)"},
    Card{C::all_to_all, A::ring, "Grama et al., section 4.5.1: one direction round the ring",
         "(ts + tw*m*p/2 + th)*(p-1) (m = one block)", kRingNeeds, "(ts + tw m p/2)(p - 1)"},
    Card{C::circular_shift, A::hypercube,
         "Grama et al., section 4.6: E-cube routed (strict: dimension by dimension)",
         "q = 0: 0; routed: ts + tw*m + th*max over i of hops(i, i+q); strict: (ts + tw*m + "
         "th)*(log p - v), 2^v the largest power of 2 dividing q",
         "Links::routed (any p) or a hypercube topology (p = 2^d)",
         "(ts + tw m)(2 log p - 1); E-cube routed: ts + tw m"},
    Card{
        C::circular_shift, A::mesh,
        "Grama et al., section 4.6: row shift, then column shift (the compensating step folded in)",
        "(ts + tw*m + th)*(min(qc, cols-qc) + max(min(qr, rows-qr), qc > 0: min(qr', "
        "rows-qr'))), qc = q mod cols, qr = floor(q/cols), qr' = (qr+1) mod rows",
        kMeshNeeds, "(ts + tw m)(sqrt p + 1)"},
    Card{C::circular_shift, A::ring, "Grama et al., section 4.6: min(q, p-q) neighbour steps",
         "(ts + tw*m + th)*min(q, p-q)", kRingNeeds, "(ts + tw m) min(q, p - q)"},
    Card{C::barrier, A::hypercube, "butterfly: log p zero-byte exchanges (Algorithm 4.7)",
         "ts*log p + th*H", kHypercubeNeeds, nullptr},
    Card{C::barrier, A::mesh,
         "ring barrier along the rows, then the columns (Links::routed: dissemination)",
         "strict: (ts + th)*(rows+cols-2); routed: sum over k < ceil(log p) of (ts + "
         "th*hops(i, i+2^k)) (th > 0: step by step)",
         kMeshNeeds, nullptr},
    Card{C::barrier, A::ring,
         "ring barrier, p-1 rounds (Links::routed: Hensgen, Finkel and Manber's dissemination)",
         "strict: (ts + th)*(p-1); routed: sum over k < ceil(log p) of (ts + th*min(2^k, p-2^k))",
         kRingNeeds, nullptr},
    // The irregular collectives: the regular algorithms with blocks of any sizes (ALGORITHMS.md,
    // "Irregular collectives"). b_i: rank i's block in bytes, b_max the largest, B(S): the bytes
    // of the blocks in S; a formula marked "step by step" is the longest path of the schedule,
    // which textbook_time_v follows exactly, and textbook_bounds_v bounds.
    Card{C::all_gatherv, A::hypercube,
         "Grama et al., Algorithm 4.7 with uneven blocks: step i sends the union of the 2^i blocks "
         "the sender holds",
         "uneven: T(all p blocks), T(g) = max over the halves h of g of T(h) + ts + tw*B(h), "
         "T(one block) = 0 (th = 0; th > 0: step by step); equal blocks of m: ts*log p + "
         "tw*m*(p-1) + th*H",
         kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::all_gatherv, A::mesh,
         "Grama et al., Algorithm 4.6 with uneven blocks: ring all-gathers along the rows, then of "
         "the row bundles along the columns",
         "uneven: no closed form (the rows end at different times): step by step, at least the "
         "sum of any VP's sends, at most (cols-1)*(ts + tw*b_max + th) + (rows-1)*(ts + "
         "tw*R_max + th), R_max the largest row's bytes; equal blocks of m: (ts + "
         "th)*(rows+cols-2) + tw*m*(p-1)",
         kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    Card{C::all_gatherv, A::ring,
         "Grama et al., Algorithm 4.4 with uneven blocks: each block goes round in p-1 steps",
         "uneven: (ts + tw*b_max + th)*(p-1), the largest block's p-1 steps (no step is longer); "
         "routed over a mesh or hypercube: step by step",
         kRingNeeds, "(ts + tw m)(p - 1)"},
    Card{C::gatherv, A::hypercube,
         "Grama et al., section 4.4 with uneven blocks: binomial tree, each VP sending its whole "
         "subtree's blocks",
         "uneven: G(all p blocks), G(g) = max(G(g_r), G(g_o) + ts + tw*B(g_o) + th*hops) over "
         "g's halves (g_r holds the root, g_o sends to it), G(one block) = 0; equal blocks of m: "
         "ts*log p + tw*m*(p-1) + th*H",
         kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::gatherv, A::mesh,
         "Grama et al., section 4.4 on a mesh with uneven blocks: every column into the root's "
         "row, then that row into the root",
         "uneven: ring gathers (see gatherv / ring) down every column, then along the root's row, "
         "each member of it sending when its column has arrived: the longest path, step by step "
         "(exact); equal blocks of m: G(rows, m) + G(cols, rows*m)",
         kMeshNeeds, "ts log p + tw m (p - 1)"},
    Card{C::gatherv, A::ring,
         "Grama et al., section 4.4 on a ring with uneven blocks: both directions",
         "uneven: the longer of the two arms, each the sum over its members v from the root's "
         "neighbour to the far end e of (ts + tw*B(v..e) + th*hops); equal blocks of m: G(p, m)",
         kRingNeeds, "ts log p + tw m (p - 1)"},
    Card{C::scatterv, A::hypercube,
         "Grama et al., section 4.4 with uneven blocks: binomial tree, recursive halving",
         "uneven: S(all p blocks, 0), S(g, t) = max(S(g_r, t + c), S(g_o, t + c + th*hops)), c = "
         "ts + tw*B(g_o) (g_r holds the root, g_o receives from it), S(one block, t) = t; equal "
         "blocks of m: ts*log p + tw*m*(p-1) + th*H",
         kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::scatterv, A::mesh,
         "Grama et al., section 4.4 on a mesh with uneven blocks: column bundles along the root's "
         "row, then down every column",
         "uneven: a ring scatter (see scatterv / ring) of the column bundles along the root's row, "
         "then each column's ring scatter from the time its bundle arrived: the longest path, "
         "step by step (exact); equal blocks of m: S(cols, rows*m) + S(rows, m)",
         kMeshNeeds, "ts log p + tw m (p - 1)"},
    Card{C::scatterv, A::ring,
         "Grama et al., section 4.4 on a ring with uneven blocks: one message per direction, each "
         "VP keeps its block",
         "uneven: the longer arm: the up arm's members v = 1..a (a = floor(p/2)) receive after "
         "the sum over u <= v of (ts + tw*B(u..a) + th*hops); the down arm's after ts + "
         "tw*B(1..a) and the same sum over its own members; equal blocks of m: S(p, m)",
         kRingNeeds, "ts log p + tw m (p - 1)"},
    Card{C::all_to_allv, A::hypercube,
         "Grama et al., Algorithm 4.10 with per-pair counts: step i swaps the blocks with id XOR i "
         "(2^d ranks; else sends to id + i, receives from id - i)",
         "uneven: no closed form (each step waits for the partner's clock): step by step, at "
         "least the sum of any VP's sends, at most the sum over the p-1 steps of (ts + tw*the "
         "step's largest block + th*hops); equal blocks of m: (ts + tw*m)*(p-1) + th*(p/2)*log p "
         "on a hypercube",
         "Links::routed (p > 2); any p", "(ts + tw m)(p - 1)"},
    Card{C::all_to_allv, A::dimension_exchange,
         "Grama et al., section 4.5.3 with per-pair counts: one dimension per step, each step "
         "the p/2 block sizes (8 bytes each) then the p/2 blocks",
         "uneven: no closed form (each exchange waits for the partner's clock): step by step, "
         "at least the sum of any VP's sends, at most the sum over the 2 log p exchanges of their "
         "longest (ts + tw*bytes + th*hops); equal blocks of m: (2*ts + tw*(m+8)*p/2)*log p + "
         "2*th*H",
         kHypercubeNeeds, "(ts + tw m p/2) log p"},
    Card{C::all_to_allv, A::mesh,
         "Grama et al., section 4.5.2 with per-pair counts: the ring all-to-allv (sizes a step "
         "ahead) along the rows with column bundles, then along the columns",
         "uneven: no closed form (the rows end at different times): step by step, bounds as for "
         "the ring; equal blocks of m (rows, cols >= 2): 2*ts + (ts + tw*(m+8)*p/2)*(rows+cols-2) "
         "+ th*(rows+cols) on a torus",
         kMeshNeeds, "(2 ts + tw m p)(sqrt p - 1)"},
    Card{C::all_to_allv, A::ring,
         "Grama et al., section 4.5.1 with per-pair counts: one direction round the ring, the "
         "sizes of the forwarded blocks (8 bytes each) one step ahead of them",
         "uneven: no closed form (each step waits for the left neighbour): step by step, at least "
         "the sum of any VP's sends, at most ts + tw*8*(p-1) + the sum over steps i = 1..p-1 of "
         "(ts + tw*(the step's largest message) + th); equal blocks of m: ts + (ts + "
         "tw*(m+8)*p/2)*(p-1) + th*p on a ring",
         kRingNeeds, "(ts + tw m p/2)(p - 1)"},
    Card{C::reduce_scatterv, A::hypercube,
         "Grama et al., Algorithm 4.8 with uneven blocks (non-commutative: dimensions 0 .. d-1, "
         "strided blocks)",
         "uneven, commutative: R(all p blocks), R(g) = ts + tw*max(B(g1), B(g2)) + max(R(g1), "
         "R(g2)) over g's halves, R(one block) = 0 (th = 0; th > 0 or non-commutative: step by "
         "step); equal blocks of m: ts*log p + tw*m*(p-1) + th*H",
         kHypercubeNeeds, "ts log p + tw m (p - 1)"},
    Card{C::reduce_scatterv, A::mesh,
         "Grama et al., section 4.2 with uneven blocks: the dual of Algorithm 4.6 (column bundles "
         "along the rows, then blocks along the columns)",
         "uneven: no closed form (the rows end at different times): step by step, at least the "
         "sum of any VP's sends, at most the sum over the steps of (ts + tw*the step's largest "
         "message + th); equal blocks as reduce_scatter / mesh",
         kMeshNeeds, "2 ts (sqrt p - 1) + tw m (p - 1)"},
    Card{C::reduce_scatterv, A::ring,
         "Grama et al., Algorithm 4.5 with uneven blocks (non-commutative: two partials)",
         "uneven, commutative: (ts + tw*b_max + th)*(p-1), the largest block's partial going "
         "round (no step is longer); non-commutative or routed over a mesh or hypercube: step by "
         "step",
         kRingNeeds, "(ts + tw m)(p - 1)"},
};

using detail::Blocks;
using detail::Ring;

std::vector<Ring> whole_machine(const Topology& t) { return {Ring::all(t.size())}; }
std::vector<Ring> rows_of(const Topology& t) {
  std::vector<Ring> g;
  for (int r = 0; r < t.rows(); ++r) g.push_back({r * t.cols(), t.cols(), 1});
  return g;
}
std::vector<Ring> columns_of(const Topology& t) {
  std::vector<Ring> g;
  for (int c = 0; c < t.cols(); ++c) g.push_back({c, t.rows(), t.cols()});
  return g;
}

// Bytes of blocks first .. first + count - 1.
std::size_t range_bytes(const Blocks& b, int first, int count) {
  return b.offset(first + count) - b.offset(first);
}

// The model's clock rules (API.md, "Cost model") applied to an algorithm's message schedule, VP
// by VP, without moving data: the exact cost where the closed form is a maximum over paths
// (uneven blocks, phases that start on uneven clocks, the order-keeping variants, routes of
// different lengths). Every VP's clock starts at 0.
class Clocks {
 public:
  Clocks(const Topology& t, const CostModel& model)
      : t_(t), model_(model), clock_(static_cast<std::size_t>(t.size()), 0.0) {}

  [[nodiscard]] const Topology& topology() const noexcept { return t_; }
  [[nodiscard]] double cost(std::size_t bytes) const noexcept {
    return model_.ts + model_.tw * static_cast<double>(bytes);
  }
  [[nodiscard]] double hop(int a, int b) const { return model_.th * t_.distance(a, b); }
  double& at(int v) noexcept { return clock_[static_cast<std::size_t>(v)]; }

  // a sends `bytes` to b now: a's clock moves on by ts + tw*bytes; returns the arrival.
  double send(int a, int b, std::size_t bytes) {
    const double arrival = at(a) + cost(bytes) + hop(a, b);
    at(a) += cost(bytes);
    sent_[static_cast<std::size_t>(a)] += cost(bytes);
    return arrival;
  }
  void recv(int v, double arrival) noexcept { at(v) = std::max(at(v), arrival); }

  // One round of sendrecv: every VP v sends out(v) bytes to dest(v) (a permutation) and
  // receives from the VP whose dest it is; the two transfers overlap.
  template <class Dest, class Out>
  void round(Dest dest, Out out) {
    next_.resize(clock_.size());
    const int p = t_.size();
    double longest = 0;
    for (int v = 0; v < p; ++v) {
      next_[static_cast<std::size_t>(v)] = at(v) + cost(out(v));
      sent_[static_cast<std::size_t>(v)] += cost(out(v));
    }
    for (int v = 0; v < p; ++v) {
      const int d = dest(v);
      double& n = next_[static_cast<std::size_t>(d)];
      n = std::max(n, at(v) + cost(out(v)) + hop(v, d));
      longest = std::max(longest, cost(out(v)) + hop(v, d));
    }
    clock_.swap(next_);
    steps_ += longest;
  }

  [[nodiscard]] double finish() const noexcept {
    return *std::max_element(clock_.begin(), clock_.end());
  }
  // Two bounds on finish(): no VP finishes before its own sends add up (each moves its clock on
  // by ts + tw*bytes), and, for a schedule of rounds alone, no round lengthens the longest clock
  // by more than its longest message (ts + tw*bytes + th*hops).
  [[nodiscard]] double own_sends() const noexcept {
    return *std::max_element(sent_.begin(), sent_.end());
  }
  [[nodiscard]] double rounds() const noexcept { return steps_; }

 private:
  const Topology& t_;
  CostModel model_;
  std::vector<double> clock_;
  std::vector<double> next_;
  std::vector<double> sent_ = std::vector<double>(clock_.size(), 0.0);
  double steps_ = 0;
};

// Which group (of a partition of the VPs into equal groups) each VP is in, and its rank there.
struct Membership {
  const std::vector<Ring>& groups;
  std::vector<int> group, rank;
  explicit Membership(const std::vector<Ring>& all) : groups(all) {
    int p = 0;
    for (const Ring& g : groups) p += g.size;
    group.resize(static_cast<std::size_t>(p));
    rank.resize(static_cast<std::size_t>(p));
    for (std::size_t i = 0; i < groups.size(); ++i)
      for (int k = 0; k < groups[i].size; ++k) {
        group[static_cast<std::size_t>(groups[i].member(k))] = static_cast<int>(i);
        rank[static_cast<std::size_t>(groups[i].member(k))] = k;
      }
  }
  [[nodiscard]] const Ring& group_of(int v) const {
    return groups[static_cast<std::size_t>(group[static_cast<std::size_t>(v)])];
  }
  [[nodiscard]] int rank_of(int v) const { return rank[static_cast<std::size_t>(v)]; }
};

// Algorithm 4.4 in every group at once (all_gather_ring.cpp): step i, member k sends part
// k-i+1 right. part(g, k): bytes of part k of group g.
template <class Part>
void ring_all_gather(Clocks& c, const std::vector<Ring>& groups, Part part) {
  const int n = groups.front().size;
  const Membership in(groups);
  for (int i = 1; i < n; ++i) {
    c.round([&](int v) { return in.group_of(v).right(in.rank_of(v)); },
            [&](int v) { return part(in.group_of(v), (in.rank_of(v) - i + 1 + n) % n); });
  }
}

// Algorithm 4.5 in every group at once (reduce_scatter_ring.cpp): step i, member k sends its
// partial of part k+i left; a non-commutative operator's partial is two parts' worth once the
// part's path has wrapped (k > j > 0).
template <class Part>
void ring_reduce_scatter(Clocks& c, const std::vector<Ring>& groups, Part part, bool commutative) {
  const int n = groups.front().size;
  const Membership in(groups);
  for (int i = 1; i < n; ++i) {
    c.round([&](int v) { return in.group_of(v).left(in.rank_of(v)); },
            [&](int v) {
              const int k = in.rank_of(v);
              const int j = (k + i) % n;
              const std::size_t partials = !commutative && j > 0 && j < k ? 2 : 1;
              return partials * part(in.group_of(v), j);
            });
  }
}

// all_to_allv_ring.cpp's ring in every group at once, bundles of `width` blocks: the sizes step
// (8 bytes a block), then step i, member k sends source member k-i+1's bundles for k+1 ..
// k+n-i right, and the sizes of the next step's. bundle(g, s, k): bytes of member s's bundle for
// member k.
template <class Bundle>
void ring_all_to_allv(Clocks& c, const std::vector<Ring>& groups, int width, Bundle bundle) {
  const int n = groups.front().size;
  if (n <= 1) return;
  const Membership in(groups);
  const auto right = [&](int v) { return in.group_of(v).right(in.rank_of(v)); };
  const auto sizes = [&](int blocks) {
    return detail::kSizeEntry * static_cast<std::size_t>(width) * static_cast<std::size_t>(blocks);
  };
  c.round(right, [&](int) { return sizes(n - 1); });
  for (int i = 1; i < n; ++i) {
    c.round(right, [&](int v) {
      const Ring& g = in.group_of(v);
      const int k = in.rank_of(v);
      const int source = (k - i + 1 + n) % n;
      std::size_t bytes = sizes(n - i - 1);
      for (int j = 1; j <= n - i; ++j) bytes += bundle(g, source, (k + j) % n);
      return bytes;
    });
  }
}

// The two-way ring scatter of rooted_util.hpp over group g from member root_rank: part(k) bytes
// of member k; one message per arm, the up arm (floor(n/2) members) first.
template <class Part>
void ring_scatter(Clocks& c, const Ring& g, int root_rank, Part part) {
  const int n = g.size, a = n / 2, b = (n - 1) / 2;
  const auto member = [&](int v) { return g.member((root_rank + v) % n); };
  const auto bytes = [&](int lo, int hi) {  // relative parts lo .. hi-1
    std::size_t s = 0;
    for (int v = lo; v < hi; ++v) s += part((root_rank + v) % n);
    return s;
  };
  if (a > 0) {
    double arrival = c.send(member(0), member(1), bytes(1, a + 1));
    for (int v = 1; v <= a; ++v) {
      c.recv(member(v), arrival);
      if (v < a) arrival = c.send(member(v), member(v + 1), bytes(v + 1, a + 1));
    }
  }
  if (b > 0) {
    double arrival = c.send(member(0), member(n - 1), bytes(n - b, n));
    for (int v = n - 1; v >= n - b; --v) {
      c.recv(member(v), arrival);
      if (v > n - b) arrival = c.send(member(v), member(v - 1), bytes(n - b, v));
    }
  }
}

// The two-way ring gather (the scatter reversed) over group g into member root_rank.
template <class Part>
void ring_gather(Clocks& c, const Ring& g, int root_rank, Part part) {
  const int n = g.size, a = n / 2, b = (n - 1) / 2;
  const auto member = [&](int v) { return g.member((root_rank + v) % n); };
  const auto bytes = [&](int lo, int hi) {
    std::size_t s = 0;
    for (int v = lo; v < hi; ++v) s += part((root_rank + v) % n);
    return s;
  };
  if (a > 0) {
    double arrival = c.send(member(a), member(a - 1), bytes(a, a + 1));
    for (int v = a - 1; v >= 1; --v) {
      c.recv(member(v), arrival);
      arrival = c.send(member(v), member(v - 1), bytes(v, a + 1));
    }
    c.recv(member(0), arrival);
  }
  if (b > 0) {
    double arrival = c.send(member(n - b), member((n - b + 1) % n), bytes(n - b, n - b + 1));
    for (int v = n - b + 1; v <= n - 1; ++v) {
      c.recv(member(v), arrival);
      arrival = c.send(member(v), member((v + 1) % n), bytes(n - b, v + 1));
    }
    c.recv(member(0), arrival);
  }
}

// Algorithm 4.7 (all_gather_hypercube.cpp): step i sends the aligned 2^i blocks holding my own.
void hypercube_all_gather(Clocks& c, const Blocks& blocks) {
  const int d = detail::log2_of(c.topology().size());
  for (int i = 0; i < d; ++i) {
    const int size = 1 << i;
    c.round([&](int v) { return v ^ size; },
            [&](int v) { return range_bytes(blocks, v & ~(size - 1), size); });
  }
}

// reduce_scatter_hypercube.cpp: Algorithm 4.8 (dimensions d-1 .. 0, contiguous halves) or, for
// a non-commutative operator, dimensions 0 .. d-1 with the partner's strided blocks packed.
void hypercube_reduce_scatter(Clocks& c, const Blocks& blocks, bool commutative) {
  const int p = c.topology().size();
  const int d = detail::log2_of(p);
  if (commutative) {
    std::vector<int> recloc(static_cast<std::size_t>(p), 0);
    for (int i = d - 1; i >= 0; --i) {
      const int half = 1 << i;
      c.round([&](int v) { return v ^ half; },
              [&](int v) {
                const int senloc = recloc[static_cast<std::size_t>(v)] + ((v ^ half) & half);
                return range_bytes(blocks, senloc, half);
              });
      for (int v = 0; v < p; ++v) recloc[static_cast<std::size_t>(v)] += v & half;
    }
    return;
  }
  for (int i = 0; i < d; ++i) {
    const int stride = 1 << i;
    c.round([&](int v) { return v ^ stride; },
            [&](int v) {
              const int my_bit = (v >> i) & 1, low = v & (stride - 1), count = p >> i;
              std::size_t sent = 0;
              for (int j = 0; j < count; ++j)
                if ((j & 1) != my_bit) sent += blocks.size(low + j * stride);
              return sent;
            });
  }
}

// scatter_hypercube.cpp: recursive halving on my_id XOR root, 2^i blocks across dimension i.
void hypercube_scatter(Clocks& c, const Blocks& blocks, int root) {
  const int p = c.topology().size();
  for (int i = detail::log2_of(p) - 1; i >= 0; --i) {
    const int bit = 1 << i;
    for (int v = 0; v < p; ++v) {
      const int u = v ^ root;
      if ((u & (bit - 1)) != 0 || (u & bit) != 0) continue;
      const int partner = v ^ bit;
      c.recv(partner, c.send(v, partner, range_bytes(blocks, partner & ~(bit - 1), bit)));
    }
  }
}

// gather_hypercube.cpp: recursive doubling on my_id XOR root.
void hypercube_gather(Clocks& c, const Blocks& blocks, int root) {
  const int p = c.topology().size();
  for (int i = 0; i < detail::log2_of(p); ++i) {
    const int bit = 1 << i;
    for (int v = 0; v < p; ++v) {
      const int u = v ^ root;
      if ((u & (bit - 1)) != 0 || (u & bit) == 0) continue;
      const int partner = v ^ bit;
      c.recv(partner, c.send(v, partner, range_bytes(blocks, v & ~(bit - 1), bit)));
    }
  }
}

// scatter_mesh.cpp: column bundles along the root's row, then down every column.
void mesh_scatter(Clocks& c, const Blocks& blocks, int root) {
  const Topology& t = c.topology();
  const int rows = t.rows(), cols = t.cols();
  const int root_row = t.row_of(root), root_col = t.col_of(root);
  const auto block = [&](int r, int col) { return blocks.size(r * cols + col); };
  if (rows == 1) {
    ring_scatter(c, rows_of(t)[0], root_col, [&](int k) { return block(0, k); });
    return;
  }
  if (cols > 1)
    ring_scatter(c, {root_row * cols, cols, 1}, root_col, [&](int k) {
      std::size_t s = 0;
      for (int r = 0; r < rows; ++r) s += block(r, k);
      return s;
    });
  for (int col = 0; col < cols; ++col)
    ring_scatter(c, {col, rows, cols}, root_row, [&](int r) { return block(r, col); });
}

// gather_mesh.cpp: every column into the root's row, then that row into the root.
void mesh_gather(Clocks& c, const Blocks& blocks, int root) {
  const Topology& t = c.topology();
  const int rows = t.rows(), cols = t.cols();
  const int root_row = t.row_of(root), root_col = t.col_of(root);
  const auto block = [&](int r, int col) { return blocks.size(r * cols + col); };
  if (rows == 1) {
    ring_gather(c, rows_of(t)[0], root_col, [&](int k) { return block(0, k); });
    return;
  }
  for (int col = 0; col < cols; ++col)
    ring_gather(c, {col, rows, cols}, root_row, [&](int r) { return block(r, col); });
  if (cols > 1)
    ring_gather(c, {root_row * cols, cols, 1}, root_col, [&](int k) {
      std::size_t s = 0;
      for (int r = 0; r < rows; ++r) s += block(r, k);
      return s;
    });
}

// all_gather_mesh.cpp: a ring all-gather along every row, then along every column.
void mesh_all_gather(Clocks& c, const Blocks& blocks) {
  const Topology& t = c.topology();
  const int rows = t.rows(), cols = t.cols();
  if (cols > 1)
    ring_all_gather(c, rows_of(t), [&](const Ring& g, int k) {
      return blocks.size(t.row_of(g.first) * cols + k);
    });
  if (rows > 1)
    ring_all_gather(c, columns_of(t),
                    [&](const Ring&, int r) { return range_bytes(blocks, r * cols, cols); });
}

// reduce_scatter_mesh.cpp: ring reduce-scatters of the column bundles along every row, then of
// the blocks along every column.
void mesh_reduce_scatter(Clocks& c, const Blocks& blocks, bool commutative) {
  const Topology& t = c.topology();
  const int rows = t.rows(), cols = t.cols();
  if (cols > 1)
    ring_reduce_scatter(
        c, rows_of(t),
        [&](const Ring&, int k) {
          std::size_t s = 0;
          for (int r = 0; r < rows; ++r) s += blocks.size(r * cols + k);
          return s;
        },
        commutative);
  if (rows > 1)
    ring_reduce_scatter(
        c, columns_of(t), [&](const Ring& g, int r) { return blocks.size(r * cols + g.first); },
        commutative);
}

// The families of the split-message algorithms (select.cpp: a hypercube when p = 2^d and its
// links allow it, else a mesh topology's own, else the ring).
enum class Family { hypercube, ring, mesh };
Family family_of(const Topology& t, Links links) {
  if (detail::is_power_of_two(t.size()) &&
      (t.kind() == Topology::Kind::hypercube || links == Links::routed))
    return Family::hypercube;
  return t.kind() == Topology::Kind::mesh ? Family::mesh : Family::ring;
}

void scatter_of(Clocks& c, Family f, const Blocks& blocks, int root) {
  switch (f) {
    case Family::hypercube: return hypercube_scatter(c, blocks, root);
    case Family::mesh: return mesh_scatter(c, blocks, root);
    case Family::ring:
      return ring_scatter(c, Ring::all(c.topology().size()), root,
                          [&](int k) { return blocks.size(k); });
  }
}
void gather_of(Clocks& c, Family f, const Blocks& blocks, int root) {
  switch (f) {
    case Family::hypercube: return hypercube_gather(c, blocks, root);
    case Family::mesh: return mesh_gather(c, blocks, root);
    case Family::ring:
      return ring_gather(c, Ring::all(c.topology().size()), root,
                         [&](int k) { return blocks.size(k); });
  }
}
void all_gather_of(Clocks& c, Family f, const Blocks& blocks) {
  switch (f) {
    case Family::hypercube: return hypercube_all_gather(c, blocks);
    case Family::mesh: return mesh_all_gather(c, blocks);
    case Family::ring:
      return ring_all_gather(c, whole_machine(c.topology()),
                             [&](const Ring&, int k) { return blocks.size(k); });
  }
}
void reduce_scatter_of(Clocks& c, Family f, const Blocks& blocks, bool commutative) {
  switch (f) {
    case Family::hypercube: return hypercube_reduce_scatter(c, blocks, commutative);
    case Family::mesh: return mesh_reduce_scatter(c, blocks, commutative);
    case Family::ring:
      return ring_reduce_scatter(
          c, whole_machine(c.topology()), [&](const Ring&, int k) { return blocks.size(k); },
          commutative);
  }
}

// broadcast_esbt.cpp's schedule (esbt_trees.hpp's esbt_move), step by step: k chunks, the larger
// first; in one step a label sends at most one chunk and receives at most one.
double esbt_clocks(const Topology& t, const CostModel& model, std::size_t m, int k, int root) {
  Clocks c(t, model);
  const int p = t.size(), d = detail::log2_of(p);
  const std::size_t base = m / static_cast<std::size_t>(k), extra = m % static_cast<std::size_t>(k);
  const auto chunk = [&](int i) { return base + (static_cast<std::size_t>(i) < extra ? 1 : 0); };
  std::vector<double> before(static_cast<std::size_t>(p));
  std::vector<double> arrival(static_cast<std::size_t>(p));
  for (int step = 0; step < k + d; ++step) {
    for (int v = 0; v < p; ++v) before[static_cast<std::size_t>(v)] = c.at(v);
    std::fill(arrival.begin(), arrival.end(), 0.0);
    for (int x = 0; x < p; ++x) {
      for (int i = std::max(0, step - d); i <= std::min(k - 1, step); ++i) {
        const detail::EsbtMove move = detail::esbt_move(d, i % d, step - i, x);
        if (move.send_to < 0) continue;
        const int from = x ^ root, to = move.send_to ^ root;
        const double sent = before[static_cast<std::size_t>(from)] + c.cost(chunk(i));
        c.at(from) = std::max(c.at(from), sent);
        double& a = arrival[static_cast<std::size_t>(to)];
        a = std::max(a, sent + c.hop(from, to));
      }
    }
    for (int v = 0; v < p; ++v) c.recv(v, arrival[static_cast<std::size_t>(v)]);
  }
  return c.finish();
}

// An irregular collective's schedule on the model clocks (irregular.cpp runs the same algorithm
// files): counts per rank in elements of shape.elem_size bytes, all_to_allv's p x p row-major.
Clocks irregular_clocks(Collective op, Algo a, const Topology& t,
                        std::span<const std::size_t> counts, const CostModel& model,
                        const CallShape& shape) {
  Clocks c(t, model);
  const int p = t.size();
  const std::size_t elem = shape.elem_size;
  if (p == 1) return c;
  if (op == C::all_to_allv) {
    const auto count = [&](int from, int to) {
      return counts[static_cast<std::size_t>(from) * static_cast<std::size_t>(p) +
                    static_cast<std::size_t>(to)] *
             elem;
    };
    if (a == A::ring) {
      ring_all_to_allv(c, whole_machine(t), 1,
                       [&](const Ring&, int s, int k) { return count(s, k); });
      return c;
    }
    if (a == A::mesh) {  // rows with column bundles, then columns with row bundles
      const int rows = t.rows(), cols = t.cols();
      ring_all_to_allv(c, rows_of(t), rows, [&](const Ring& g, int s, int k) {
        std::size_t bytes = 0;
        for (int r = 0; r < rows; ++r) bytes += count(g.member(s), r * cols + k);
        return bytes;
      });
      ring_all_to_allv(c, columns_of(t), cols, [&](const Ring& g, int s, int k) {
        std::size_t bytes = 0;
        for (int col = 0; col < cols; ++col) bytes += count(s * cols + col, g.member(k));
        return bytes;
      });
      return c;
    }
    if (a == A::dimension_exchange) {  // all_to_allv_dimension_exchange.cpp
      for (int k = detail::log2_of(p) - 1; k >= 0; --k) {
        const auto partner = [k](int v) { return v ^ (1 << k); };
        const std::size_t low = (std::size_t{2} << k) - 1;  // the dimensions not yet exchanged
        c.round(partner, [&](int) { return detail::kSizeEntry * static_cast<std::size_t>(p / 2); });
        c.round(partner, [&](int v) {
          // Position j leaves when its bit k is the partner's; its block goes from source (j's
          // exchanged bits, v's others) to destination (j's bits up to k, v's above).
          std::size_t bytes = 0;
          const auto uv = static_cast<std::size_t>(v);
          for (std::size_t j = 0; j < static_cast<std::size_t>(p); ++j)
            if (((j ^ uv) >> k & 1u) != 0)
              bytes += count(static_cast<int>((j & ~low) | (uv & low)),
                             static_cast<int>((j & low) | (uv & ~low)));
          return bytes;
        });
      }
      return c;
    }
    // all_to_allv_pairwise.cpp
    const bool cube = detail::is_power_of_two(p);
    for (int i = 1; i < p; ++i) {
      const auto dest = [&](int v) { return cube ? v ^ i : (v + i) % p; };
      c.round(dest, [&](int v) {
        return counts[static_cast<std::size_t>(v) * static_cast<std::size_t>(p) +
                      static_cast<std::size_t>(dest(v))] *
               elem;
      });
    }
    return c;
  }
  std::vector<std::size_t> offsets(static_cast<std::size_t>(p) + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) offsets[i + 1] = offsets[i] + counts[i] * elem;
  const Blocks blocks(offsets);
  const auto part = [&](int k) { return blocks.size(k); };
  const auto ring_part = [&](const Ring&, int k) { return blocks.size(k); };
  const int root = ((shape.root % p) + p) % p;
  switch (op) {
    case C::all_gatherv:
      if (a == A::hypercube)
        hypercube_all_gather(c, blocks);
      else if (a == A::mesh)
        mesh_all_gather(c, blocks);
      else
        ring_all_gather(c, whole_machine(t), ring_part);
      break;
    case C::reduce_scatterv:
      if (a == A::hypercube)
        hypercube_reduce_scatter(c, blocks, shape.commutative);
      else if (a == A::mesh)
        mesh_reduce_scatter(c, blocks, shape.commutative);
      else
        ring_reduce_scatter(c, whole_machine(t), ring_part, shape.commutative);
      break;
    case C::gatherv:
      if (a == A::hypercube)
        hypercube_gather(c, blocks, root);
      else if (a == A::mesh)
        mesh_gather(c, blocks, root);
      else
        ring_gather(c, Ring::all(p), root, part);
      break;
    case C::scatterv:
      if (a == A::hypercube)
        hypercube_scatter(c, blocks, root);
      else if (a == A::mesh)
        mesh_scatter(c, blocks, root);
      else
        ring_scatter(c, Ring::all(p), root, part);
      break;
    default: break;
  }
  return c;
}

// Whether an irregular collective's algorithm is a schedule of rounds (every VP one sendrecv a
// step), where Clocks::rounds() bounds its time; the rooted ones are exact closed forms.
bool in_rounds(Collective op) noexcept {
  return op == C::all_gatherv || op == C::reduce_scatterv || op == C::all_to_allv;
}

void check_counts_v(Collective op, const Topology& t, std::span<const std::size_t> counts) {
  if (!detail::is_irregular(op))
    throw std::invalid_argument(std::string(to_string(op)) + " is not an irregular collective");
  const auto p = static_cast<std::size_t>(t.size());
  const std::size_t want = op == C::all_to_allv ? p * p : p;
  if (counts.size() != want)
    throw std::invalid_argument(std::string(to_string(op)) + " on " + t.name() + " takes " +
                                std::to_string(want) + " counts" +
                                (op == C::all_to_allv ? " (p x p, row-major)" : "") + ", not " +
                                std::to_string(counts.size()));
}

// Equal blocks of `bytes` (all_to_allv: the whole in, p blocks), as counts of shape.elem_size.
std::vector<std::size_t> equal_counts(Collective op, const Topology& t, std::size_t bytes,
                                      std::size_t elem_size) {
  const auto p = static_cast<std::size_t>(t.size());
  const std::size_t elements = elem_size == 0 ? 0 : bytes / elem_size;
  if (op == C::all_to_allv) return std::vector<std::size_t>(p * p, elements / p);
  return std::vector<std::size_t>(p, elements);
}
}  // namespace

bool takes_algo(Collective op) noexcept {
  switch (op) {
    case C::broadcast:
    case C::reduce:
    case C::all_reduce:
    case C::all_gather:
    case C::reduce_scatter:
    case C::all_to_all:
    case C::all_gatherv:
    case C::all_to_allv:
    case C::reduce_scatterv: return true;
    default: return false;
  }
}

std::optional<Collective> parse_collective(std::string_view name) noexcept {
  for (int k = 1; k <= static_cast<int>(C::reduce_scatterv); ++k) {
    const auto c = static_cast<C>(k);
    if (name == to_string(c)) return c;
  }
  return std::nullopt;
}

std::optional<Algo> parse_algo(std::string_view name) noexcept {
  for (int k = 0; k <= static_cast<int>(A::dimension_exchange); ++k) {
    const auto a = static_cast<A>(k);
    if (name == to_string(a)) return a;
  }
  return std::nullopt;
}

std::span<const Card> cards() noexcept { return kCards; }

const Card* find_card(Collective op, Algo algo) noexcept {
  for (const Card& c : kCards)
    if (c.op == op && c.algo == algo) return &c;
  return nullptr;
}

namespace {
// resolve, with selection_cost's total (the irregular collectives: bytes is the largest block).
Algo resolve_by(Collective op, Algo requested, const Topology& t, Links links, std::size_t bytes,
                std::size_t total) {
  if (!takes_algo(op) && requested != A::automatic)
    throw AlgorithmError(std::string(to_string(op)) +
                         " takes no algorithm: it always chooses for itself");
  const auto algos = detail::algorithms_of(op);
  if (requested == A::automatic) {
    if (const auto agreed = detail::automatic_without_sizes(op, t, links)) return *agreed;
    A best = algos.back();
    double best_cost = INFINITY;
    for (A a : algos) {
      if (detail::restriction(op, a, t, links) != nullptr) continue;
      const double cost = detail::selection_cost(op, a, t, bytes, total);
      if (cost < best_cost) best_cost = cost, best = a;
    }
    return best;
  }
  if (std::find(algos.begin(), algos.end(), requested) == algos.end())
    throw AlgorithmError(std::string(to_string(op)) + " has no " + to_string(requested) +
                         " algorithm");
  if (const char* why = detail::restriction(op, requested, t, links))
    throw AlgorithmError(std::string(to_string(op)) + " with Algo::" + to_string(requested) +
                         " cannot run on " + t.name() + ": " + why);
  return requested;
}
}  // namespace

Algo resolve(Collective op, Algo requested, const Topology& t, Links links, std::size_t bytes) {
  if (detail::is_irregular(op))  // equal blocks of `bytes`
    return resolve_v(op, requested, t, links, equal_counts(op, t, bytes, 1), 1);
  return resolve_by(op, requested, t, links, bytes, 0);
}

Algo resolve_v(Collective op, Algo requested, const Topology& t, Links links,
               std::span<const std::size_t> counts, std::size_t elem_size) {
  check_counts_v(op, t, counts);
  if (requested == A::automatic) {  // as the collective: AlgorithmError when none can run
    std::string why;
    for (const A a : detail::algorithms_of(op)) {
      const char* reason = detail::restriction(op, a, t, links);
      if (reason == nullptr) {
        why.clear();
        break;
      }
      why += std::string(why.empty() ? "" : "; ") + to_string(a) + ": " + reason;
    }
    if (!why.empty())
      throw AlgorithmError("no " + std::string(to_string(op)) + " algorithm can run on " +
                           t.name() + (links == Links::strict ? " with Links::strict" : "") + " (" +
                           why + ")");
  }
  std::size_t largest = 0, total = 0;
  for (const std::size_t n : counts)
    largest = std::max(largest, n * elem_size), total += n * elem_size;
  return resolve_by(op, requested, t, links, largest, total);
}

namespace {
// resolve_v for automatic; any other algorithm checked against the table (gatherv and scatterv,
// which take no Algo, accept their cards' names, as textbook_time does).
Algo checked_v(Collective op, Algo algo, const Topology& t, Links links,
               std::span<const std::size_t> counts, std::size_t elem_size) {
  if (algo == A::automatic) return resolve_v(op, algo, t, links, counts, elem_size);
  check_counts_v(op, t, counts);
  const auto algos = detail::algorithms_of(op);
  if (std::find(algos.begin(), algos.end(), algo) == algos.end())
    throw AlgorithmError(std::string(to_string(op)) + " has no " + to_string(algo) + " algorithm");
  if (const char* why = detail::restriction(op, algo, t, links))
    throw AlgorithmError(std::string(to_string(op)) + " with Algo::" + to_string(algo) +
                         " cannot run on " + t.name() + ": " + why);
  return algo;
}
}  // namespace

double textbook_time_v(Collective op, Algo algo, const Topology& t, Links links,
                       std::span<const std::size_t> counts, const CostModel& model,
                       const CallShape& shape) {
  const Algo a = checked_v(op, algo, t, links, counts, shape.elem_size);
  return irregular_clocks(op, a, t, counts, model, shape).finish();
}

TimeBounds textbook_bounds_v(Collective op, Algo algo, const Topology& t, Links links,
                             std::span<const std::size_t> counts, const CostModel& model,
                             const CallShape& shape) {
  const Algo a = checked_v(op, algo, t, links, counts, shape.elem_size);
  const Clocks c = irregular_clocks(op, a, t, counts, model, shape);
  if (!in_rounds(op) || t.size() == 1) return {c.finish(), c.finish()};
  return {c.own_sends(), c.rounds()};
}

namespace {

// Algo::automatic resolved; any other algorithm checked against the table's restrictions.
Algo checked(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes) {
  if (algo == A::automatic) return resolve(op, algo, t, links, bytes);
  const auto algos = detail::algorithms_of(op);
  if (std::find(algos.begin(), algos.end(), algo) == algos.end())
    throw AlgorithmError(std::string(to_string(op)) + " has no " + to_string(algo) + " algorithm");
  if (const char* why = detail::restriction(op, algo, t, links))
    throw AlgorithmError(std::string(to_string(op)) + " with Algo::" + to_string(algo) +
                         " cannot run on " + t.name() + ": " + why);
  return algo;
}

// Whether every hop term of (op, algo) here is counted exactly (textbook_counts_hops).
bool counts_hops(Collective op, Algo algo, const Topology& t, Links links) {
  // The irregular collectives' schedules are followed step by step, every hop counted.
  if (t.size() == 1 || algo != A::ring || t.ring_adjacent() || detail::is_irregular(op))
    return true;
  // Ring algorithms routed over a mesh or hypercube: their hops are counted where textbook_time
  // follows the schedule step by step.
  switch (op) {
    case C::all_reduce:
    case C::all_gather:
    case C::reduce_scatter: return true;
    case C::barrier: return links == Links::routed;  // the dissemination barrier
    default: return false;
  }
}

// The card formulas. m is `bytes` as textbook_time takes it; w = ts + tw*m; every closed form is
// exact for equal blocks, and a Clocks evaluation of the schedule replaces it where it is not.
class Formula {
 public:
  Formula(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
          const CostModel& model, const CallShape& shape)
      : op_(op),
        algo_(algo),
        t_(t),
        links_(links),
        bytes_(bytes),
        model_(model),
        shape_(shape),
        p_(t.size()),
        d_(detail::is_power_of_two(t.size()) ? detail::log2_of(t.size()) : 0),
        ts_(model.ts),
        tw_(model.tw),
        th_(model.th),
        m_(static_cast<double>(bytes)),
        // th per message of a ring algorithm: counted when VP i and i+1 are neighbours.
        h_(t.ring_adjacent() ? model.th : 0.0) {}

  double value() const {
    switch (op_) {
      case C::broadcast: return broadcast();
      case C::reduce: return reduce();
      case C::all_reduce: return all_reduce();
      case C::all_gather: return all_gather();
      case C::reduce_scatter: return reduce_scatter();
      case C::scan:
      case C::exscan: return scan();
      case C::scatter: return scatter();
      case C::gather: return gather();
      case C::all_to_all: return all_to_all();
      case C::circular_shift: return circular_shift();
      case C::barrier: return barrier();
      default: break;  // the irregular collectives have no card yet
    }
    return NAN;
  }

 private:
  double w(double bytes) const { return ts_ + tw_ * bytes; }
  // sum over the dimensions k < d of th * hops(i, i XOR 2^k): the same for every i on a ring, a
  // mesh or a hypercube of 2^d VPs (1 per dimension on a hypercube).
  double dimension_hops() const {
    double s = 0;
    for (int k = 0; k < d_; ++k) s += th_ * t_.distance(0, 1 << k);
    return s;
  }
  Blocks blocks(int parts) const { return Blocks(bytes_, shape_.elem_size, parts); }
  static bool even(const Blocks& b) { return b.size(0) == b.size(b.count() - 1); }
  Clocks clocks() const { return Clocks(t_, model_); }
  int root() const { return ((shape_.root % p_) + p_) % p_; }

  // Two-way ring broadcast over n members (broadcast_ring.cpp): ceil(n/2) sends on the longer
  // path, floor(n/2) hops.
  double ring_broadcast(int n, double bytes, double h) const {
    return n <= 1 ? 0 : (n + 1) / 2 * w(bytes) + n / 2 * h;
  }
  // Steps of the ring reduction over n members with the root at rank r (reduce_ring.cpp).
  int ring_reduce_steps(int n, int r) const {
    if (shape_.commutative || r == 0 || r == n - 1) return n / 2;
    return std::max(r, n - 1 - r);
  }
  // S(n, part): two-way ring scatter of n parts (rooted_util.hpp). The up arm's far end
  // receives after a*(ts + h) + tw*part*a(a+1)/2, the down arm's after (b+1)*ts + b*h +
  // tw*part*(a + b(b+1)/2), a = floor(n/2), b = floor((n-1)/2): the up arm for even n (b = a-1),
  // the down arm for odd n (b = a).
  double ring_scatter_time(int n, double part, double h) const {
    if (n <= 1) return 0;
    const double a = n / 2;
    if (n % 2 == 0) return a * (ts_ + h) + tw_ * part * a * (a + 1) / 2;
    return (a + 1) * ts_ + a * h + tw_ * part * (a + a * (a + 1) / 2);
  }
  // Two-way ring gather: the longer arm, a = floor(n/2).
  double ring_gather_time(int n, double part, double h) const {
    const double a = n / 2;
    return n <= 1 ? 0 : a * (ts_ + h) + tw_ * part * a * (a + 1) / 2;
  }
  // Order-keeping ring reduce-scatter of n parts of `part` bytes (reduce_scatter_ring.cpp).
  double ring_reduce_scatter_time(int n, double part, double h) const {
    if (n <= 1) return 0;
    if (shape_.commutative) return (n - 1) * (w(part) + h);
    return (n - 1) * (ts_ + h) + tw_ * part * (2 * n - 3);
  }

  double broadcast() const {
    switch (algo_) {
      case A::hypercube: return d_ * w(m_) + dimension_hops();
      case A::esbt: {
        const int k = static_cast<int>(std::min<std::size_t>(
            static_cast<std::size_t>(std::max(1, detail::esbt_chunk_count(t_, bytes_, model_))),
            std::max<std::size_t>(bytes_, 1)));
        const double chunk = m_ / k;
        // d = 1: the last of the k + 1 steps is empty; the k chunks cross one link.
        if (d_ == 1 && bytes_ % static_cast<std::size_t>(k) == 0) return k * w(chunk) + th_;
        // The pipeline has bubbles: the longest path is k + d steps, but how many of its
        // messages cross a link (the hop term) and which chunk sizes it carries (uneven chunks)
        // depend on k and d, so those cases follow the schedule step by step.
        if (bytes_ % static_cast<std::size_t>(k) != 0 || th_ != 0)
          return esbt_clocks(t_, model_, bytes_, k, root());
        return (k + d_) * w(chunk);
      }
      case A::two_phase: {
        const Blocks b = blocks(p_);
        const Family f = family_of(t_, links_);
        const double block = static_cast<double>(b.size(0));
        if (even(b) && (th_ == 0 || f != Family::mesh)) {
          switch (f) {
            case Family::hypercube:
              return 2 * (d_ * ts_ + tw_ * block * (p_ - 1) + dimension_hops());
            case Family::ring: return ring_scatter_time(p_, block, h_) + (p_ - 1) * (w(block) + h_);
            case Family::mesh: {
              const int rows = t_.rows(), cols = t_.cols();
              return ring_scatter_time(cols, rows * block, 0) + ring_scatter_time(rows, block, 0) +
                     ts_ * (rows + cols - 2) + tw_ * block * (p_ - 1);
            }
          }
        }
        Clocks c = clocks();
        scatter_of(c, f, b, root());
        all_gather_of(c, f, b);
        return c.finish();
      }
      case A::mesh: return ring_broadcast(t_.cols(), m_, th_) + ring_broadcast(t_.rows(), m_, th_);
      default: return ring_broadcast(p_, m_, h_);
    }
  }

  double reduce() const {
    switch (algo_) {
      case A::hypercube: return d_ * w(m_) + dimension_hops();
      case A::two_phase: {
        const Blocks b = blocks(p_);
        const Family f = family_of(t_, links_);
        const double block = static_cast<double>(b.size(0));
        if (even(b) && (shape_.commutative || f == Family::hypercube)) {
          switch (f) {
            case Family::hypercube:
              return 2 * (d_ * ts_ + tw_ * block * (p_ - 1) + dimension_hops());
            case Family::ring: return (p_ - 1) * (w(block) + h_) + ring_gather_time(p_, block, h_);
            case Family::mesh: {
              const int rows = t_.rows(), cols = t_.cols();
              return (ts_ + th_) * (rows + cols - 2) + tw_ * block * (p_ - 1) +
                     ring_gather_time(rows, block, th_) + ring_gather_time(cols, rows * block, th_);
            }
          }
        }
        Clocks c = clocks();
        reduce_scatter_of(c, f, b, shape_.commutative);
        gather_of(c, f, b, root());
        return c.finish();
      }
      case A::mesh: {
        const int r = root();
        return (ring_reduce_steps(t_.cols(), t_.col_of(r)) +
                ring_reduce_steps(t_.rows(), t_.row_of(r))) *
               (w(m_) + th_);
      }
      default: return ring_reduce_steps(p_, root()) * (w(m_) + h_);
    }
  }

  // Ring reduce-scatter then ring all-gather of the n blocks of the vector, in every group.
  double ring_all_reduce(const std::vector<Ring>& groups, double h, Clocks* c) const {
    const int n = groups.front().size;
    const Blocks b = blocks(n);
    if (c == nullptr && shape_.commutative)  // the largest block goes all the way round twice
      return 2 * (n - 1) * (w(static_cast<double>(b.size(0))) + h);
    if (c == nullptr && even(b) && th_ == 0)
      return 2 * ts_ * (n - 1) + tw_ * static_cast<double>(b.size(0)) * (3 * n - 4);
    Clocks own = clocks();
    Clocks& k = c != nullptr ? *c : own;
    const auto part = [&](const Ring&, int j) { return b.size(j); };
    ring_reduce_scatter(k, groups, part, shape_.commutative);
    ring_all_gather(k, groups, part);
    return k.finish();
  }

  double all_reduce() const {
    switch (algo_) {
      case A::hypercube: return d_ * w(m_) + dimension_hops();
      case A::two_phase: {
        const Family f = family_of(t_, links_);
        if (f == Family::ring) break;  // all_reduce_ring's formula
        const Blocks b = blocks(p_);
        if (f == Family::hypercube && shape_.commutative) {
          // Each step's largest message is the aligned range holding block 0.
          double s = 0;
          for (int i = 0; i < d_; ++i)
            s += ts_ + tw_ * static_cast<double>(b.offset(1 << i)) + th_ * t_.distance(0, 1 << i);
          return 2 * s;
        }
        if (f == Family::hypercube && even(b))
          return 2 *
                 (d_ * ts_ + tw_ * static_cast<double>(b.size(0)) * (p_ - 1) + dimension_hops());
        if (f == Family::mesh && even(b) && shape_.commutative)
          return 2 * ((ts_ + th_) * (t_.rows() + t_.cols() - 2) +
                      tw_ * static_cast<double>(b.size(0)) * (p_ - 1));
        Clocks c = clocks();
        reduce_scatter_of(c, f, b, shape_.commutative);
        all_gather_of(c, f, b);
        return c.finish();
      }
      case A::mesh: {
        // Each phase over n members: gather-and-fold (n-1 whole vectors) when m*(n-2) <= n*10000,
        // else ring reduce-scatter + all-gather. Every column's members finish their row phase
        // together, so the phases add.
        double total = 0;
        for (const auto& groups : {rows_of(t_), columns_of(t_)}) {
          const int n = groups.front().size;
          if (n == 1) continue;
          if (bytes_ * static_cast<std::size_t>(n - 2) <= static_cast<std::size_t>(n) * 10'000)
            total += (n - 1) * (w(m_) + th_);
          else
            total += ring_all_reduce(groups, th_, nullptr);
        }
        return total;
      }
      default: break;
    }
    // Algo::ring (and two_phase of the ring family).
    if (h_ == th_) return ring_all_reduce(whole_machine(t_), h_, nullptr);
    Clocks c = clocks();
    return ring_all_reduce(whole_machine(t_), 0, &c);
  }

  double all_gather() const {
    switch (algo_) {
      case A::hypercube: return d_ * ts_ + tw_ * m_ * (p_ - 1) + dimension_hops();
      case A::mesh: {
        const int rows = t_.rows(), cols = t_.cols();
        return (ts_ + th_) * (rows + cols - 2) + tw_ * m_ * (p_ - 1);
      }
      default:
        if (h_ != th_) {
          Clocks c = clocks();
          ring_all_gather(c, whole_machine(t_), [&](const Ring&, int) { return bytes_; });
          return c.finish();
        }
        return (p_ - 1) * (w(m_) + h_);
    }
  }

  double reduce_scatter() const {
    switch (algo_) {
      case A::hypercube: return d_ * ts_ + tw_ * m_ * (p_ - 1) + dimension_hops();
      case A::mesh: {
        const int rows = t_.rows(), cols = t_.cols();
        if (shape_.commutative) return (ts_ + th_) * (rows + cols - 2) + tw_ * m_ * (p_ - 1);
        return ring_reduce_scatter_time(cols, rows * m_, th_) +
               ring_reduce_scatter_time(rows, m_, th_);
      }
      default:
        if (h_ != th_) {
          Clocks c = clocks();
          ring_reduce_scatter(
              c, whole_machine(t_), [&](const Ring&, int) { return bytes_; }, shape_.commutative);
          return c.finish();
        }
        return ring_reduce_scatter_time(p_, m_, h_);
    }
  }

  double scan() const {
    switch (algo_) {
      case A::hypercube: return d_ * w(m_) + dimension_hops();
      case A::mesh: {
        // Row chains, the last column's chain, then (rows > 1) a ring broadcast along each row.
        const int rows = t_.rows(), cols = t_.cols();
        return (rows + cols - 2) * (w(m_) + th_) + (rows > 1 ? ring_broadcast(cols, m_, th_) : 0);
      }
      default: return (p_ - 1) * (w(m_) + h_);
    }
  }

  double scatter() const {
    switch (algo_) {
      case A::hypercube: return d_ * ts_ + tw_ * m_ * (p_ - 1) + dimension_hops();
      case A::mesh: {
        const int rows = t_.rows(), cols = t_.cols();
        return ring_scatter_time(cols, rows * m_, th_) + ring_scatter_time(rows, m_, th_);
      }
      default: return ring_scatter_time(p_, m_, h_);
    }
  }

  double gather() const {
    switch (algo_) {
      case A::hypercube: return d_ * ts_ + tw_ * m_ * (p_ - 1) + dimension_hops();
      case A::mesh: {
        const int rows = t_.rows(), cols = t_.cols();
        return ring_gather_time(rows, m_, th_) + ring_gather_time(cols, rows * m_, th_);
      }
      default: return ring_gather_time(p_, m_, h_);
    }
  }

  double all_to_all() const {
    const double block = m_ / p_;  // m: the whole in; a block is m/p
    switch (algo_) {
      case A::hypercube: {  // Algorithm 4.10: step i pairs VP v with v XOR i
        // On a hypercube step i's routes have popcount(i) links for every VP, and the popcounts
        // of 1 .. p-1 add up to (p/2)*log p.
        if (t_.kind() == Topology::Kind::hypercube || p_ == 2 || th_ == 0)
          return (p_ - 1) * w(block) + th_ * (p_ / 2) * d_;
        Clocks c = clocks();
        for (int i = 1; i < p_; ++i)
          c.round([i](int v) { return v ^ i; },
                  [&](int) { return bytes_ / static_cast<std::size_t>(p_); });
        return c.finish();
      }
      case A::dimension_exchange: return d_ * w(block * p_ / 2) + dimension_hops();
      case A::mesh: return (t_.rows() + t_.cols() - 2) * (w(block * p_ / 2) + th_);
      default: return (p_ - 1) * (w(block * p_ / 2) + h_);
    }
  }

  double circular_shift() const {
    const int q = ((shape_.shift % p_) + p_) % p_;
    if (q == 0) return 0;  // the message stays
    switch (algo_) {
      case A::hypercube: {
        if (links_ == Links::routed) {  // one message each, E-cube routed: the longest route
          int hops = 0;
          for (int v = 0; v < p_; ++v) hops = std::max(hops, t_.distance(v, (v + q) % p_));
          return w(m_) + th_ * hops;
        }
        // Strict: one exchange per dimension from the lowest set bit of q up.
        return (d_ - std::countr_zero(static_cast<unsigned>(q))) * (w(m_) + th_);
      }
      case A::mesh: {
        const int rows = t_.rows(), cols = t_.cols();
        const int qc = q % cols, qr = q / cols;
        const auto shorter = [](int s, int n) { return std::min(s, n - s); };
        int column_steps = shorter(qr, rows);
        if (qc > 0) column_steps = std::max(column_steps, shorter((qr + 1) % rows, rows));
        return (shorter(qc, cols) + column_steps) * (w(m_) + th_);
      }
      default: return std::min(q, p_ - q) * (w(m_) + h_);
    }
  }

  double barrier() const {
    if (algo_ == A::hypercube) return d_ * ts_ + dimension_hops();
    if (links_ == Links::routed) {  // the dissemination barrier, whatever the table chose
      if (t_.kind() != Topology::Kind::mesh || th_ == 0) {
        double s = 0;  // round k: distance 2^k, the same for every VP on a ring
        for (int k = 1; k < p_; k *= 2) s += ts_ + th_ * t_.distance(0, k);
        return s;
      }
      Clocks c = clocks();
      for (int k = 1; k < p_; k *= 2)
        c.round([&](int v) { return (v + k) % p_; }, [](int) { return std::size_t{0}; });
      return c.finish();
    }
    if (algo_ == A::mesh) return (t_.rows() + t_.cols() - 2) * (ts_ + th_);
    return (p_ - 1) * (ts_ + h_);
  }

  Collective op_;
  Algo algo_;
  const Topology& t_;
  Links links_;
  std::size_t bytes_;
  CostModel model_;
  CallShape shape_;
  int p_, d_;
  double ts_, tw_, th_, m_, h_;
};

}  // namespace

double textbook_time(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
                     const CostModel& model, const CallShape& shape) {
  if (detail::is_irregular(op))  // equal blocks of `bytes`
    return textbook_time_v(op, algo, t, links, equal_counts(op, t, bytes, shape.elem_size), model,
                           shape);
  const Algo a = checked(op, algo, t, links, bytes);
  if (t.size() == 1) return 0;
  return Formula(op, a, t, links, bytes, model, shape).value();
}

double textbook_time(Collective op, Algo algo, const Topology& t, Links links, std::size_t bytes,
                     const CostModel& model, int shift) {
  return textbook_time(op, algo, t, links, bytes, model, CallShape{.shift = shift});
}

bool textbook_counts_hops(Collective op, Algo algo, const Topology& t, Links links,
                          std::size_t bytes) {
  return counts_hops(op, checked(op, algo, t, links, bytes), t, links);
}

}  // namespace hypercomm
