// Pipelined broadcast over d edge-disjoint spanning binomial trees (ESBTs): Johnsson and Ho,
// "Optimum broadcasting and personalized communication in hypercubes", IEEE Trans. Computers
// 38(9), 1989; the trees and their schedule are in esbt_trees.hpp.
//
//   T = (k + d) * (ts + tw*m/k)      (k = chunks; d >= 2 and m a multiple of k)
//   d = 1: the last of the k + 1 steps is empty, T = k * (ts + tw*m/k)
//   uneven chunks (m not a multiple of k): (k + d)*ts + tw*(m + d*ceil(m/k))
//
// Restrictions: p = 2^d; every message crosses one hypercube link (Links::strict needs a
// hypercube). Labels are relative to the source: x = my_id XOR root (Algorithm 4.2's virtual id).
// buf is cut into k chunks as evenly as possible (k <= m, at least 1: an empty buffer still runs
// the schedule once with one empty chunk, so that mismatched VPs are caught). Chunk c goes down
// tree c mod d during global steps c .. c + d (local step i = step - c); the source feeds chunk
// c to tree root 2^(c mod d) at step c. In one global step a label sends at most one chunk and
// receives at most one, and does both in one overlapped sendrecv, so a step costs
// ts + tw*m/k. For p = 8 (d = 3), k = 3: chunk 0 enters tree 0 at step 0 (0 -> 1), chunk 1
// tree 1 at step 1 (0 -> 2), chunk 2 tree 2 at step 2 (0 -> 4); chunk 2 is everywhere after
// step 2 + 3 = 5, so 6 steps in all.
//
// All ports (CostModel::all_port, Grama et al. section 4.7; Johnsson and Ho's all-port
// broadcast) on a hypercube topology: the source feeds all d trees at once, chunks
// r*d .. r*d + d-1 at step r, and every tree pipelines its own chunks. The trees are
// edge-disjoint and a tree uses each of its links once per chunk, so the messages of a step
// leave on distinct links, all together:
//
//   T = (R + d) * (ts + tw*m/k + th),  R = ceil(k/d) rounds (d = 2: th*(2*ceil(R/2) + 1)),
//   least (th = 0) at k* = d*sqrt(m*tw/ts): T* = m*tw/d + d*ts + 2*sqrt(m*ts*tw)
//
// (p = 8, k = 6: chunks 0 1 2 enter trees 0 1 2 at step 0, chunks 3 4 5 at step 1; 2 + 3 = 5
// steps against the one-port schedule's 9.)
#include <algorithm>
#include <stdexcept>
#include <string>

#include "card.hpp"
#include "esbt_trees.hpp"
#include "rooted.hpp"

namespace hypercomm::detail {

namespace {

// What label x does in one global step: the chunk it sends (and to whom), the chunk it receives.
struct StepPlan {
  int send_chunk = -1;
  int dest = -1;
  int recv_chunk = -1;
  int src = -1;
};

StepPlan plan_step(int d, int k, int step, int x) {
  StepPlan plan;
  for (int chunk = std::max(0, step - d); chunk <= std::min(k - 1, step); ++chunk) {
    const EsbtMove move = esbt_move(d, chunk % d, step - chunk, x);
    // The schedule promises one send and one receive per label and step; a clash would mean
    // a broken tree table, not a user error.
    if (move.send_to >= 0) {
      if (plan.send_chunk >= 0)
        throw std::logic_error("esbt: two sends in step " + std::to_string(step));
      plan.send_chunk = chunk;
      plan.dest = move.send_to;
    }
    if (move.recv_from >= 0) {
      if (plan.recv_chunk >= 0)
        throw std::logic_error("esbt: two receives in step " + std::to_string(step));
      plan.recv_chunk = chunk;
      plan.src = move.recv_from;
    }
  }
  return plan;
}

}  // namespace

namespace {

// The all-port schedule: in step s every chunk of round r = s - i (chunks r*d + j, tree j) takes
// local step i. A label's sends of a step go out first (buffered, on distinct links), then it
// receives; what it sends it received in an earlier step.
template <class ChunkOf>
void broadcast_esbt_all_ports(const Comm& c, int d, int k, int root, const ChunkOf& chunk_of) {
  const int x = c.id() ^ root;
  const int rounds = (k + d - 1) / d;
  for (int step = 0; step < rounds + d; ++step) {
    for (const bool sending : {true, false})
      for (int round = std::max(0, step - d); round <= std::min(rounds - 1, step); ++round)
        for (int tree = 0; tree < d && round * d + tree < k; ++tree) {
          const int chunk = round * d + tree;
          const EsbtMove move = esbt_move(d, tree, step - round, x);
          if (sending && move.send_to >= 0) c.send(move.send_to ^ root, chunk_of(chunk));
          if (!sending && move.recv_from >= 0) c.recv(move.recv_from ^ root, chunk_of(chunk));
        }
  }
}

}  // namespace

void broadcast_esbt(const Comm& c, Bytes buf, int root, int chunks, bool all_ports) {
  const int d = log2_of(c.p());
  const int x = c.id() ^ root;  // label relative to the source
  const std::size_t m = buf.size();
  const std::size_t wanted = chunks > 1 ? static_cast<std::size_t>(chunks) : 1;
  const int k = static_cast<int>(std::min(wanted, std::max<std::size_t>(m, 1)));  // 1 <= k <= m
  // Chunk c: base bytes, one more for c < extra (the larger chunks go first).
  const std::size_t base = m / static_cast<std::size_t>(k);
  const std::size_t extra = m % static_cast<std::size_t>(k);
  auto chunk_of = [&](int chunk) {
    const auto i = static_cast<std::size_t>(chunk);
    return buf.subspan(i * base + std::min(i, extra), base + (i < extra ? 1 : 0));
  };
  if (all_ports && d > 1) {
    broadcast_esbt_all_ports(c, d, k, root, chunk_of);
    return;
  }

  for (int step = 0; step < k + d; ++step) {
    const StepPlan plan = plan_step(d, k, step, x);
    const bool sends = plan.send_chunk >= 0;
    const bool receives = plan.recv_chunk >= 0;
    if (sends && receives) {
      c.sendrecv(plan.dest ^ root, chunk_of(plan.send_chunk), plan.src ^ root,
                 chunk_of(plan.recv_chunk));
    } else if (sends) {
      c.send(plan.dest ^ root, chunk_of(plan.send_chunk));
    } else if (receives) {
      c.recv(plan.src ^ root, chunk_of(plan.recv_chunk));
    }
  }
}

// Johnsson and Ho: k chunks through d trees take (k + d)(ts + tw*m/k), least at k* = sqrt(m d tw
// / ts), T* = m tw + d ts + 2 sqrt(m d ts tw). The run's model decides when it has a bandwidth
// term; the default unit model (tw = 0) has none, so the reference machine's ts and tw stand in
// for the hardware the broadcast runs on (a wall-time choice).
bool esbt_all_ports(const Topology& t, const CostModel& model) noexcept {
  return model.all_port && t.kind() == Topology::Kind::hypercube && t.dimension() > 1;
}

int esbt_chunk_count(const Topology& t, std::size_t bytes, const CostModel& model) {
  const double d = std::max(1.0, std::log2(static_cast<double>(t.size())));
  const bool has_bandwidth = model.tw > 0;
  const double ts = has_bandwidth ? model.ts : kReferenceTs;
  const double tw = has_bandwidth ? model.tw : kReferenceTw;
  const double most = std::max(1.0, static_cast<double>(bytes));
  // One tree of one link (p = 2): k chunks cost k*ts + tw*m, least at one.
  if (t.size() <= 2) return 1;
  if (ts <= 0) return static_cast<int>(std::min(most, 1e9));
  if (esbt_all_ports(t, model)) {
    // (ceil(k/d) + d)(ts + tw*m/k): k = d*r, least at r* = sqrt(m*tw/ts); the better of the
    // multiples of d around it (at most m chunks).
    const double r_star = std::sqrt(static_cast<double>(bytes) * tw / ts);
    const auto cost = [&](double k) {
      return (std::ceil(k / d) + d) * (ts + tw * static_cast<double>(bytes) / k);
    };
    const double lo = std::clamp(d * std::max(1.0, std::floor(r_star)), 1.0, most);
    const double hi = std::clamp(d * std::max(1.0, std::ceil(r_star)), 1.0, most);
    return static_cast<int>(std::min(cost(lo) <= cost(hi) ? lo : hi, 1e9));
  }
  const double k_star = std::sqrt(static_cast<double>(bytes) * d * tw / ts);
  // The better of the two whole numbers around k*, at their cost in whole bytes (the first,
  // largest chunk crosses d + 1 links: below).
  const auto cost = [&](double k) {
    return (k + d) * ts + tw * (static_cast<double>(bytes) + d * std::ceil(most / k));
  };
  const double lo = std::clamp(std::floor(k_star), 1.0, most);
  const double hi = std::clamp(std::ceil(k_star), 1.0, most);
  return static_cast<int>(std::min(cost(lo) <= cost(hi) ? lo : hi, 1e9));
}

namespace {
// (k + d) steps of a chunk of m/k. Chunks of unequal size (m mod k of them one byte larger, sent
// first): the longest path carries the first, largest chunk d + 1 times (down a tree and across
// to the next) and every other chunk once, (k + d)*ts + tw*(m + d*ceil(m/k)), which is
// (k + d)*(ts + tw*m/k) for equal chunks. d = 1: the k chunks cross one link one after another,
// k*ts + tw*m + th. With th > 0 (d > 1) the pipeline's bubbles decide how many of the longest
// path's messages cross a link: no closed form.
double broadcast_esbt_cost(const CostQuery& q) {
  const int k = q.chunks > 0 ? q.chunks : esbt_chunk_count(q.t, q.bytes, q.model);
  if (q.d() == 1) return k * q.ts() + q.tw() * q.m() + q.th();
  if (esbt_all_ports(q.t, q.model)) {
    // Equal chunks: ceil(k/d) + d steps of one message a link. Uneven: steps of mixed sizes
    // whose clocks drift apart, no closed form (cost_bounds: equal chunks each side).
    const auto chunks = static_cast<std::size_t>(k);
    if (!q.selection && q.bytes % chunks != 0) return kNoClosedForm;
    const int rounds = (k + q.d() - 1) / q.d();
    // Every message crosses one link; on the 2-cube the critical path runs every other round
    // through a send that the source's port paced (no hop term): 2*ceil(R/2) + 1 hops.
    const int hops = q.d() == 2 ? 2 * ((rounds + 1) / 2) + 1 : rounds + q.d();
    return (rounds + q.d()) * q.w(q.m() / k) + hops * q.th();
  }
  if (q.model.all_port && !q.selection) {
    // The one-port schedule under all ports: the source's chunks leave on its d links without
    // waiting for each other, and the pipeline's critical path then follows no closed form.
    // Bounded below: the source's busiest link carries ceil(k/d) chunks, and the last of them
    // still descends a tree of height d + 1 after it (the cost_bounds lower query asks).
    if (!q.all_port_lower) return kNoClosedForm;
    const double smallest = std::floor(q.m() / k);
    return (std::ceil(static_cast<double>(k) / q.d()) + q.d()) * q.w(smallest);
  }
  if (q.th() != 0 && !q.selection) return kNoClosedForm;
  const auto chunks = static_cast<std::size_t>(k);
  const double largest =
      q.selection ? q.m() / k : static_cast<double>((q.bytes + chunks - 1) / chunks);
  return (k + q.d()) * q.ts() + q.tw() * (q.m() + q.d() * largest);
}
// Each of the k chunks goes down one spanning binomial tree, to every VP but the source once
// (k*(p-1) messages, m*(p-1) bytes), and the pipeline holds every VP in every one of its k + d
// steps: a VP waits a step for its next chunk, too short a wait to give its core away for long.
// So its VPs occupy their cores p*(k + d) steps of ts + tw*m/k.
double broadcast_esbt_work(const CostQuery& q) {
  const int k = q.chunks > 0 ? q.chunks : esbt_chunk_count(q.t, q.bytes, q.model);
  return q.p() * (k + q.d()) * (q.message_work() + q.tw() * q.m() / k);
}
}  // namespace

extern const AlgorithmCard broadcast_esbt_card{
    {Collective::broadcast, Algo::esbt,
     "Johnsson and Ho 1989: d edge-disjoint spanning binomial trees, k chunks pipelined",
     "(k + log p)*(ts + tw*m/k), k the whole number next to k* = sqrt(m*log p*tw/ts) with the "
     "smaller cost in whole-byte chunks, one at p = 2 (tw = 0: the reference machine's ts = 1 us, "
     "tw = 0.1 ns/B); at k*, the "
     "optimum m*tw + ts*log p + 2*sqrt(m*log p*ts*tw); m mod k chunks one byte larger: (k + log "
     "p)*ts + tw*(m + log p*ceil(m/k)); p = 2: k*ts + "
     "tw*m + th; th > 0 (p > 2): no closed form. All ports on a hypercube topology (the d trees "
     "fed at once, Grama et al. section 4.7): (R + log p)*(ts + tw*m/k + th), R = ceil(k/log "
     "p) (p = 4: th*(2*ceil(R/2) + 1)), k the multiple of log p next to k* = log p*sqrt(m*tw/ts), "
     "optimum m*tw/log p + ts*log p + 2*sqrt(m*ts*tw); uneven chunks: no closed form; all ports "
     "routed elsewhere: the one-port schedule, no closed form",
     kHypercubeNeeds, nullptr},
    needs_hypercube,
    broadcast_esbt_cost,
    [](const Comm& c, const Args& a) { broadcast_esbt(c, a.out, a.root, a.chunks, a.all_ports); },
    /*counts_hops=*/nullptr,
    /*keeps_id_order=*/true,
    /*needs_gray_ring_group=*/false,
    /*work=*/broadcast_esbt_work};

}  // namespace hypercomm::detail
