// The irregular collectives' schedules (schedules.hpp).
#include "schedules.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "exchange_util.hpp"

namespace hypercomm::detail {

namespace {

using C = Collective;
using A = Algo;

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

}  // namespace

ScheduleTimes irregular_schedule(Collective op, Algo algo, const Topology& t,
                                 std::span<const std::size_t> counts, const CostModel& model,
                                 const CallShape& shape) {
  const Clocks c = irregular_clocks(op, algo, t, counts, model, shape);
  return {c.finish(), c.own_sends(), c.rounds()};
}

}  // namespace hypercomm::detail
