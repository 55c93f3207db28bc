// Pipelined broadcast over d edge-disjoint spanning binomial trees (ESBTs): Johnsson and Ho,
// "Optimum broadcasting and personalized communication in hypercubes", IEEE Trans. Computers
// 38(9), 1989; the trees and their schedule are in esbt_trees.hpp.
//
//   T = (k + d) * (ts + tw*m/k)      (k = chunks; d >= 2 and m a multiple of k)
//   d = 1: the last of the k + 1 steps is empty, T = k * (ts + tw*m/k)
//   uneven chunks (m not a multiple of k): at most (k + d) * (ts + tw*ceil(m/k))
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
#include <algorithm>
#include "esbt_trees.hpp"
#include <stdexcept>
#include <string>

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

void broadcast_esbt(const Comm& c, Bytes buf, int root, int chunks) {
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

}  // namespace hypercomm::detail
