// One algorithm, one object: its card. Every algorithm file `<operation>_<algorithm>.cpp` defines
// the card of what it implements: the collective, the Algo that names it, the book's section,
// the formula text, where it can run (restriction), what it costs in closed form (cost), and
// how to run it (run). registry.cpp lists every card in automatic's preference order, and
// everything that needs to know an algorithm reads that list: dispatch (collectives.cpp,
// irregular.cpp), validation and automatic's choice (select.cpp), textbook_time, `hypercomm
// list` and the table of collectives/ALGORITHMS.md (checked against it by a test).
#pragma once

#include <cmath>
#include <cstdint>
#include <hypercomm/cards.hpp>
#include <hypercomm/options.hpp>
#include <hypercomm/topology.hpp>
#include <span>

#include "blocks.hpp"
#include "comm.hpp"
#include "ring.hpp"

namespace hypercomm::detail {

// NaN: no closed form (kNoClosedForm, below, for the cards).
inline constexpr double kNoClosedFormValue = NAN;

// One call's arguments as an algorithm's entry point takes them.
struct Args {
  ConstBytes in{};
  Bytes out{};                       // broadcast: the buffer
  const Blocks* blocks = nullptr;    // the p blocks of the p-block buffer (all_to_allv: in's)
  const Blocks* received = nullptr;  // all_to_allv: out's blocks
  const Reducer* op = nullptr;       // the reductions
  int root = 0;                      // the rooted collectives; circular_shift: the shift, [1, p)
  std::size_t elem_size = 1;
  Family family = Family::ring;  // the composite algorithms' sub-algorithms (select.cpp)
  int chunks = 1;                // ESBT pipeline depth
  bool all_ports = false;        // ESBT: the all-port schedule (esbt_all_ports)
};

// The family of the split-message algorithms' sub-algorithms on this machine: the hypercube
// pair when p = 2^d and its partners are reachable, else a mesh topology's own, else the ring.
[[nodiscard]] Family family_of(const Topology& t, Links links) noexcept;

// VP i and i+1 neighbours for every i < p-1 (a linear array, a ring, a 1 x n mesh).
[[nodiscard]] bool line_adjacent(const Topology& t) noexcept;

// The congestion of the mapping (Grama et al. section 4.5) when every VP sends to id XOR x along
// the topology's routes: the most messages that share one directed link, or (chained) how many
// message times one such step takes under the contention model's rule (replay.cpp), where waits
// add up along chains of routes; 1 on a hypercube.
[[nodiscard]] double xor_congestion(const Topology& t, int x, bool chained);

// What a card's cost is asked about one call. Two askers: textbook_time (the run's model,
// exact: NaN where the card has no closed form for this call) and automatic's choice
// (select.cpp: the reference machine, blocks taken as m/p, plus two terms the book's formulas
// leave out but a choice must weigh: tc, the time to combine a byte, and the congestion of the
// XOR exchanges mapped onto a ring or mesh).
struct CostQuery {
  const Topology& t;
  Links links;
  std::size_t bytes;  // as textbook_time takes it (irregular selection: the largest block)
  CostModel model;
  CallShape shape{};
  bool selection = false;  // automatic's estimate (above), not textbook_time's exact value
  double tc = 0;           // seconds per byte to combine (selection: tw)
  std::size_t total = 0;   // irregular selection: the bytes of all blocks
  int chunks = 0;          // ESBT's pipeline depth; 0: esbt_chunk_count's for bytes and model
  bool gray_ring = false;  // the ring algorithm runs on the Gray-code ring: every message one link
  // cost_bounds' lower query under all ports (CostModel::all_port): sends that may share a first
  // link are taken as leaving together (Arms::together), and a card without an all-port closed
  // form gives a lower bound instead of NaN.
  bool all_port_lower = false;
  // textbook_time_v (selection false): the irregular call's counts, in elements of
  // shape.elem_size: one per rank, all_to_allv's p x p row-major. Empty otherwise.
  std::span<const std::size_t> counts{};
  int vps_per_core = 1;  // AlgorithmCard::work where VPs share cores (message_work)
  // The bytes of ranks first .. first + n - 1 (taken mod p), of `counts`.
  [[nodiscard]] double rank_bytes(int first, int n = 1) const noexcept;
  // The bytes of the ranks whose ids are (first + i) XOR x, i = 0 .. n-1: a subcube of ids
  // relative to x (the rooted hypercube algorithms run on id XOR root).
  [[nodiscard]] double relative_bytes(int first, int n, int x) const noexcept;
  // Whether every count is the same (all_to_allv: every pair's).
  [[nodiscard]] bool equal_counts() const noexcept;
  // The call with equal counts as the regular collective's: bytes one block (all_to_allv: the
  // whole in, p blocks), no counts.
  [[nodiscard]] CostQuery as_regular() const noexcept;

  [[nodiscard]] int p() const noexcept { return t.size(); }
  // log2 p where p = 2^d (the hypercube algorithms), else 0.
  [[nodiscard]] int d() const noexcept;
  [[nodiscard]] double lg() const noexcept { return std::max(1.0, std::log2(p())); }
  [[nodiscard]] double m() const noexcept { return static_cast<double>(bytes); }
  [[nodiscard]] double ts() const noexcept { return model.ts; }
  [[nodiscard]] double tw() const noexcept { return model.tw; }
  [[nodiscard]] double th() const noexcept { return model.th; }
  [[nodiscard]] double w(double b) const noexcept { return model.ts + model.tw * b; }
  // tc of a fold done as the message lands (Comm::recv_fold, sendrecv_fold): none for an
  // operator that never throws, whose fold is the receive's copy; else the receive, then the fold.
  [[nodiscard]] double landing_tc() const noexcept { return shape.never_throws ? 0.0 : tc; }
  // The work of a tree that gives every VP but the root the whole message once (p - 1 messages
  // of m bytes: the binomial, ring, line and mesh broadcasts, and reversed with a fold per
  // message, the reductions), the least any broadcast or reduction does.
  [[nodiscard]] double tree_work(bool folds) const noexcept {
    return (p() - 1) * (message_work() + tw() * m() + (folds ? landing_tc() * m() : 0.0));
  }
  // A message's ts in AlgorithmCard::work: its receiver is one of the vps_per_core VPs that wait
  // for a core, so it costs a switch there, ts for each of them.
  [[nodiscard]] double message_work() const noexcept { return ts() * vps_per_core; }
  // th per message of a ring algorithm: counted when VP i and i+1 are neighbours (elsewhere the
  // routes differ in length from VP to VP and the formula leaves th out).
  [[nodiscard]] double ring_th() const noexcept {
    return gray_ring || t.ring_adjacent() ? model.th : 0.0;
  }
  // th per message of a mesh algorithm's ring phases: counted when every row and column is a
  // ring of links (a torus); on a mesh without wraparound the rings' closing messages are routed
  // across the line and the formula leaves th out.
  [[nodiscard]] double mesh_th() const noexcept { return t.lines_ring_adjacent() ? model.th : 0.0; }
  // th per message of a line algorithm (VP i to i+1 and back, no wraparound).
  [[nodiscard]] double line_th() const noexcept { return line_adjacent(t) ? model.th : 0.0; }
  // How a VP's sends to its two neighbours along a ring or line leave (the root's two arms, a
  // mesh member's row and column sends): in turn under one port (CostModel::all_port false);
  // together under all ports (Grama et al. section 4.7) where they go out on different first
  // links, which neighbours always do; unknown where some share their first link (routed
  // messages), for which the formulas state no closed form.
  enum class Arms : std::uint8_t { in_turn, together, unknown };
  // ... for the ring algorithms over the whole machine in id order (i -> i +- 1 mod p), the line
  // algorithms (i -> i +- 1 inside [0, p)), and the mesh algorithms (the rows and columns).
  [[nodiscard]] Arms ring_arms() const;
  [[nodiscard]] Arms line_arms() const;
  [[nodiscard]] Arms mesh_arms() const;
  // ... for the open-mesh cards, whose lines along the rows and columns are neighbours.
  [[nodiscard]] Arms open_mesh_arms() const noexcept {
    return model.all_port ? Arms::together : Arms::in_turn;
  }
  // The line rooted at rank r (up arm r+1 .. p-1 first when not shorter, down arm r-1 .. 0):
  // its broadcast, reduction, scatter and gather of parts of `part` bytes.
  // Over n members with th = h per message (the whole machine: n = p, h = line_th()).
  [[nodiscard]] double line_broadcast(int n, int r, double size, double h,
                                      Arms arms) const noexcept;
  [[nodiscard]] double line_reduce(int n, int r, double size, double h) const noexcept;
  [[nodiscard]] double line_scatter(int n, int r, double part, double h, Arms arms) const noexcept;
  [[nodiscard]] double line_gather(int n, int r, double part, double h) const noexcept;
  [[nodiscard]] double line_broadcast(int r, double size) const {
    return line_broadcast(p(), r, size, line_th(), line_arms());
  }
  [[nodiscard]] double line_reduce(int r, double size) const noexcept {
    return line_reduce(p(), r, size, line_th());
  }
  [[nodiscard]] double line_scatter(int r, double part) const {
    return line_scatter(p(), r, part, line_th(), line_arms());
  }
  [[nodiscard]] double line_gather(int r, double part) const noexcept {
    return line_gather(p(), r, part, line_th());
  }
  // The hops of the ring algorithms' longest chain of messages routed over this machine: each of
  // the p-1 steps of Algorithm 4.4 (or 4.5) can extend the path by one routed message, and the
  // longest chain of p-1 consecutive links round the ring i -> i+1 leaves out its shortest one:
  // H - min h_i, h_i = hops(i, i+1 mod p), H their sum (p - 1 where i and i+1 are neighbours).
  [[nodiscard]] int ring_chain_hops() const;
  // sum over k < d of th*hops(i, i XOR 2^k): the same for every i on a ring, mesh or hypercube.
  [[nodiscard]] double dimension_hops() const;
  [[nodiscard]] int root() const noexcept { return ((shape.root % p()) + p()) % p(); }
  [[nodiscard]] int shift() const noexcept { return ((shape.shift % p()) + p()) % p(); }
  [[nodiscard]] Family family() const noexcept { return family_of(t, links); }
  // The combines on a VP's path in a reduce-scatter phase of p blocks of `block` bytes (two_phase's
  // reduce and all-reduce): one block for each other VP, the hypercube pair's last halving step
  // (a commutative operator) folded as it lands (landing_tc).
  [[nodiscard]] double reduce_scatter_folds(double block) const noexcept;
  // The split-message cards' phases over all VPs (AlgorithmCard::work, blocks of m/p): the
  // messages of an all-gather (or reduce-scatter) of the family, p*log p on the hypercube,
  // p*(p-1) round the ring, p*(rows+cols-2) on the mesh; the bytes of a scatter (or gather),
  // m*log p/2 on the hypercube, elsewhere at least every block but the root's once.
  [[nodiscard]] double all_gather_messages() const noexcept;
  [[nodiscard]] double scatter_bytes() const noexcept;
  // The p-block layout of `whole` bytes in elements of shape.elem_size.
  [[nodiscard]] Blocks blocks(std::size_t whole, int parts) const noexcept {
    return Blocks(whole, shape.elem_size, parts);
  }
  // The largest of `parts` blocks of `whole` bytes (selection: whole/parts exactly).
  [[nodiscard]] double block(double whole, int parts) const noexcept;
  // Whether `parts` blocks of `whole` bytes are equal (always, for selection).
  [[nodiscard]] bool even(std::size_t whole, int parts) const noexcept;
  // XOR-x exchange congestion, counted for selection only (CostModel::contention aside, the
  // book's formulas assume none): for equal blocks the step's time under the contention rule
  // (chained); for uneven ones, whose capped estimate takes every message as large as the
  // largest, the most messages on one link (chains of mostly small messages do not wait).
  [[nodiscard]] double congestion(int x) const {
    if (!selection || !is_power_of_two(p())) return 1.0;
    const bool equal = total == 0 || static_cast<double>(total) >= m() * p();
    return xor_congestion(t, x, equal);
  }

  // The ring building blocks of the algorithm files (rooted_util.hpp, ring.hpp), over n members
  // with th = h per message:
  // the two-way ring broadcast: ceil(n/2) sends on the longer path, floor(n/2) hops (arms
  // together: floor(n/2) of each, the down arm no longer waiting for the up arm's send);
  [[nodiscard]] double ring_broadcast(int n, double size, double h, Arms arms) const noexcept {
    if (n <= 1) return 0;
    if (arms == Arms::unknown) return kNoClosedFormValue;
    return (arms == Arms::together ? n / 2 : (n + 1) / 2) * w(size) + n / 2 * h;
  }
  // S(n, part), the two-way ring scatter of n parts: the up arm's far end receives after
  // a*(ts + h) + tw*part*a(a+1)/2, the down arm's after (b+1)*ts + b*h + tw*part*(a + b(b+1)/2),
  // a = floor(n/2), b = floor((n-1)/2): the up arm for even n, the down arm for odd n (arms
  // together: the down arm's first message leaves at once, b(ts + h) + tw*part*b(b+1)/2, and the
  // up arm is the longer for every n);
  [[nodiscard]] double ring_scatter(int n, double part, double h, Arms arms) const noexcept;
  // G(n, part), the two-way ring gather: the longer arm;
  [[nodiscard]] double ring_gather(int n, double part, double h) const noexcept;
  // the ring reduction's steps with the root at rank r (order-keeping when non-commutative);
  [[nodiscard]] int ring_reduce_steps(int n, int r) const noexcept {
    if (shape.commutative || r == 0 || r == n - 1) return n / 2;
    return std::max(r, n - 1 - r);
  }
  // Algorithm 4.5 on n parts of `part` bytes (a non-commutative partial is two parts' worth
  // once its path has wrapped).
  [[nodiscard]] double ring_reduce_scatter(int n, double part, double h) const noexcept;

  // The irregular collectives' choice (bytes = b, the largest block): a step that moves k blocks
  // is costed at cap(k) = min(k*b, total) bytes, the most it can carry, so that one huge block
  // among empty ones costs what carrying it does, and equal blocks cost the regular formula.
  [[nodiscard]] double cap(double k) const noexcept {
    return std::min(k * m(), static_cast<double>(total));
  }
  // The two-way ring scatter and gather of n parts of at most `part` bytes, capped: arm messages
  // carry j parts, j = a .. 1 (a = floor(n/2)); the other arm (floor((n-1)/2)) leaves after the
  // first.
  [[nodiscard]] double capped_ring_scatter(int n, double part) const noexcept;
  // The line gather and scatter (rooted at rank r, arms cut there) of the call's counts:
  // selection, the capped arms (a message of j blocks at most min(j*b, total)); textbook_time_v,
  // the arms' exact sums, each message carrying the blocks from it to the arm's far end (NaN
  // where the line's neighbours are not the machine's, routed elsewhere with th > 0).
  [[nodiscard]] double line_gatherv(int r) const noexcept;
  // The bytes of all the blocks: selection's total, else the sum of the counts.
  [[nodiscard]] double all_bytes() const noexcept {
    return selection ? static_cast<double>(total) : rank_bytes(0, p());
  }
  [[nodiscard]] double line_scatterv(int r) const noexcept;
  [[nodiscard]] double capped_ring_gather(int n, double part) const noexcept;
  // The ring all-to-allv of n members with bundles of `width` blocks (all_to_allv_ring.cpp): the
  // sizes step (8 bytes a block), then n-1 steps of the travelling bundles and the next step's
  // sizes.
  [[nodiscard]] double capped_ring_all_to_allv(int n, int width) const noexcept;
  // The same with every block `block` bytes, exactly, h = th per message (n messages on the
  // longest path: the sizes step and the n-1 steps).
  [[nodiscard]] double equal_ring_all_to_allv(int n, int width, double block,
                                              double h) const noexcept;
  // The line all-to-allv (all_to_allv_line.cpp) over the whole machine, its two streams' clocks
  // run step by step: exactly, from `counts`, th per message; and for selection, every block
  // the largest, each message capped at cap.
  [[nodiscard]] double exact_line_all_to_allv() const;
  [[nodiscard]] double capped_line_all_to_allv() const;
  // The same on an open mesh (all_to_allv_mesh.cpp with line phases): the rows' streams, then,
  // from each VP's clock, the columns'.
  [[nodiscard]] double exact_open_mesh_all_to_allv() const;
  [[nodiscard]] double capped_open_mesh_all_to_allv() const;
};

inline constexpr double kNoClosedForm = kNoClosedFormValue;

struct AlgorithmCard;
// Bounds on the model time of a call for which `card` states no closed form (its cost is NaN:
// uneven blocks, a hop term whose count varies along the schedule, an order-keeping operator),
// from closed forms of the same card; {cost, cost} where it has one. The model is max-plus: every
// clock is the longest path through sums of ts, tw*bytes and th*hops terms, nondecreasing in
// each. So equal blocks of the smaller size, no hop term and a commutative operator (whose
// partials are never larger than the order-keeping ones) bound it from below; equal blocks of
// the larger size with every message charged its longest route as part of ts (a card that runs
// on neighbour links only: one hop) bound it from above, where the order-keeping form has no
// closed form either with every message's bytes counted twice (a partial is at most two parts).
[[nodiscard]] TimeBounds cost_bounds(const AlgorithmCard& card, const CostQuery& q);

struct AlgorithmCard {
  Card text;  // what it is: the public card (hypercomm/cards.hpp)
  // Why it cannot run on this machine, or nullptr when it can.
  const char* (*restriction)(const Topology& t, Links links) = nullptr;
  // Its cost in closed form, kNoClosedForm where the card states none for this call.
  double (*cost)(const CostQuery& q) = nullptr;
  // Runs it on this VP (every member calls it with the same arguments).
  void (*run)(const Comm& c, const Args& a) = nullptr;
  // Whether its formula counts the hop term th*hops exactly here (nullptr: everywhere).
  bool (*counts_hops)(const Topology& t, Links links) = nullptr;
  // Whether a non-commutative operator gets the left fold in id order (API.md); a card that folds
  // in another order (the Gray-code ring's) runs only for commutative ones.
  bool keeps_id_order = true;
  // Whether it runs only on a group that is a ring embedded in a hypercube by the reflected Gray
  // code (GroupInfo::gray_ring; textbook_time: CallShape::gray_ring), whose ring topology alone
  // does not say so: the book's hypercube q-shift.
  bool needs_gray_ring_group = false;
  // The work of all VPs together on automatic's reference machine (CostQuery::message_work per
  // message, tw per byte sent, tc per byte combined), which VPs that share cores
  // (CallShape::shared_cores) spread over them: automatic weighs max(cost, work / cores) there
  // (selection_cost). Every card of a collective has one, or none does (the broadcasts,
  // reductions, scans and exscans have them).
  double (*work)(const CostQuery& q) = nullptr;
  // A card that folds in another order (keeps_id_order false) but, with routed links, folds a
  // non-commutative operator in id order on the same rows and columns laid out by id
  // (Grid::in_id_order): the Gray-code mesh's reductions, whose routed messages then take more
  // than one link.
  bool id_order_when_routed = false;
};

// AlgorithmCard::work of the trees that give every VP but the root the whole message once
// (CostQuery::tree_work): the broadcasts, and the reductions with a fold per message.
[[nodiscard]] inline double broadcast_tree_work(const CostQuery& q) { return q.tree_work(false); }
[[nodiscard]] inline double reduce_tree_work(const CostQuery& q) { return q.tree_work(true); }

// The ring algorithms' formulas count th only where VP i and i+1 are neighbours: routed over a
// mesh or hypercube their routes differ in length from VP to VP, and the formula leaves th out
// (as the book's cut-through formulas do).
[[nodiscard]] inline bool ring_counts_hops(const Topology& t, Links /*links*/) noexcept {
  return t.size() == 1 || t.ring_adjacent();
}

// The mesh algorithms' formulas count th where every row and column is a ring of links.
[[nodiscard]] inline bool mesh_counts_hops(const Topology& t, Links /*links*/) noexcept {
  return t.lines_ring_adjacent();
}
// The split-message algorithms' formulas count th where their family's do (family_of).
[[nodiscard]] bool family_counts_hops(const Topology& t, Links links) noexcept;

// The reference machine of automatic's choice: 1 us per message, 10 GB/s.
inline constexpr double kReferenceTs = 1e-6;
inline constexpr double kReferenceTw = 1e-10;

// ESBT pipeline depth for a broadcast of `bytes`: the whole k next to k* = sqrt(m*d*tw/ts) with
// the smaller (k + d)*ts + tw*(m + d*ceil(m/k)), in [1, max(m, 1)] (d = log p; one where p = 2,
// whose k chunks cost k*ts + tw*m); ts and tw from `model`
// when it has tw > 0, else the reference machine's. The broadcast and its card use this one k.
[[nodiscard]] int esbt_chunk_count(const Topology& t, std::size_t bytes, const CostModel& model);
// Whether the ESBT broadcast feeds its d trees at once (CostModel::all_port on a hypercube
// topology, where the source's d links and every tree's links are distinct links); elsewhere
// it runs the one-port schedule, one chunk a step.
[[nodiscard]] bool esbt_all_ports(const Topology& t, const CostModel& model) noexcept;

// The restrictions most cards share, with the card texts that state them.
[[nodiscard]] const char* needs_hypercube(const Topology& t, Links links) noexcept;  // p = 2^d
[[nodiscard]] const char* needs_ring(const Topology& t, Links links) noexcept;
[[nodiscard]] const char* needs_mesh(const Topology& t, Links links) noexcept;
[[nodiscard]] const char* needs_family(const Topology& t, Links links) noexcept;  // two_phase
// The line cards: VP i and i+1 neighbours for i < p-1 (a linear array, a 1 x n open mesh) or
// Links::routed, and no wraparound between p-1 and 0 (where there is one, the ring's own
// algorithms run).
[[nodiscard]] const char* needs_line(const Topology& t, Links links) noexcept;
// A hypercube of d >= 2 (the Gray-code ring cards: the ring embedded by the reflected Gray code,
// Grama et al. section 2.7; smaller hypercubes are rings and run the ring's own cards).
[[nodiscard]] const char* needs_gray_ring(const Topology& t, Links links) noexcept;
inline constexpr const char* kGrayRingNeeds =
    "p = 2^d, d >= 2, a hypercube topology: the ring embedded by the reflected Gray code (member "
    "k is VP gray(k)), every message one link, Links::strict included";
inline constexpr const char* kGrayRingCommutativeNeeds =
    "p = 2^d, d >= 2, a hypercube topology: the ring embedded by the reflected Gray code (member "
    "k is VP gray(k)), every message one link, Links::strict included; a commutative operator "
    "(it folds in ring order, not id order)";
// A ring card's cost on the Gray-code ring (CostQuery::gray_ring: th counted on every message).
[[nodiscard]] inline CostQuery on_gray_ring(const CostQuery& q) noexcept {
  CostQuery g = q;
  g.gray_ring = true;
  return g;
}

// A hypercube of d >= 2 (the Gray-code mesh cards: the 2^floor(d/2) x 2^ceil(d/2) torus embedded
// by the reflected Gray code, Grama et al. section 2.7; Grid::gray_code).
[[nodiscard]] const char* needs_gray_mesh(const Topology& t, Links links) noexcept;
inline constexpr const char* kGrayMeshNeeds =
    "p = 2^d, d >= 2, a hypercube topology: the 2^floor(d/2) x 2^ceil(d/2) torus embedded by the "
    "reflected Gray code (row i, column j at VP gray(i)*2^ceil(d/2) + gray(j)), every message one "
    "link, Links::strict included";
inline constexpr const char* kGrayMeshCommutativeNeeds =
    "p = 2^d, d >= 2, a hypercube topology: the 2^floor(d/2) x 2^ceil(d/2) torus embedded by the "
    "reflected Gray code (row i, column j at VP gray(i)*2^ceil(d/2) + gray(j)), every message one "
    "link, Links::strict included; a commutative operator (it folds in Gray-code order), or "
    "Links::routed (a non-commutative one folds in id order on the rows and columns laid out by "
    "id, their messages routed)";
// A mesh card's cost on the Gray-code mesh of a hypercube: the card's formula for the torus of
// that shape (th counted on every message, as on a torus).
[[nodiscard]] double on_gray_mesh(const CostQuery& q, double (*mesh_cost)(const CostQuery&));
// The same for the Gray-code mesh's reductions: no closed form for a non-commutative operator
// with routed links and th > 0 (its rows and columns laid out by id, their messages routed).
[[nodiscard]] double on_gray_mesh_folding(const CostQuery& q,
                                          double (*mesh_cost)(const CostQuery&));

// A mesh without wraparound (the open-mesh cards: lines along its rows and columns).
[[nodiscard]] const char* needs_open_mesh(const Topology& t, Links links) noexcept;
inline constexpr const char* kOpenMeshNeeds =
    "a rows x cols mesh without wraparound (a torus runs the mesh cards); neighbours only";
// The open-mesh cards' costs from `root` (broadcast_mesh.cpp, reduce_mesh.cpp, scatter_mesh.cpp,
// gather_mesh.cpp): a line phase along the rows or columns, then the other.
[[nodiscard]] double open_mesh_broadcast(const CostQuery& q, int root, double size);
[[nodiscard]] double open_mesh_reduce(const CostQuery& q, int root, double size);
[[nodiscard]] double open_mesh_scatter(const CostQuery& q, int root, double block);
[[nodiscard]] double open_mesh_gather(const CostQuery& q, int root, double block);
// VP i and i+1 neighbours for i < p-1 or Links::routed, wraparound or not (the scan pipeline).
[[nodiscard]] const char* needs_path(const Topology& t, Links links) noexcept;
inline constexpr const char* kPathNeeds =
    "any p; VP i and i+1 neighbours for i < p-1 (a ring, a linear array, a 1 x n mesh) or "
    "Links::routed; th counted only when they are neighbours";
inline constexpr const char* kLineNeeds =
    "any p; VP i and i+1 neighbours for i < p-1 (a linear array, a 1 x n open mesh) or "
    "Links::routed, without the ring's wraparound (a ring runs its own); th counted only when "
    "they are neighbours";
// The line algorithms' formulas count th where VP i and i+1 are neighbours.
[[nodiscard]] inline bool line_counts_hops(const Topology& t, Links /*links*/) noexcept {
  return line_adjacent(t);
}
inline constexpr const char* kHypercubeNeeds =
    "p = 2^d; partners i XOR 2^k neighbours (a hypercube, 1 or 2 VPs, a 2 x 2 mesh) or "
    "Links::routed";
inline constexpr const char* kRingNeeds =
    "any p; VP i and i+1 neighbours (a ring, a 1 x n torus) or Links::routed; th counted only "
    "when they are neighbours";
inline constexpr const char* kMeshNeeds =
    "a rows x cols mesh (any shape); neighbours only on a torus, Links::routed on a mesh "
    "without wraparound";
inline constexpr const char* kFamilyNeeds =
    "any p; the hypercube pair when p = 2^d on a hypercube or under Links::routed, else the "
    "mesh pair on a mesh, else the ring pair";

}  // namespace hypercomm::detail
