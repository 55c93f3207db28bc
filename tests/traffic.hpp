// Random point-to-point traffic and collectives, for the tests of the channels in one process
// (test_traffic) and between processes (tests/mpi/mpi_suite.cpp): every VP draws the same plan
// for each step from a seed they share, so that every send meets its receive: a permutation of
// sends (some senders or receivers late, so that receives are posted before and after their
// messages come), bursts of messages on one channel, many VPs to one (received in a shuffled
// order), exchanges in pairs, and rooted and symmetric collectives; the sizes (in longs) are the
// caller's, chosen where a message changes its way. Every byte must arrive, in order; nothing may
// hang.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace hctest {

inline int rank_of(const hypercomm::Proc& vp) { return vp.id(); }
inline int rank_of(const hypercomm::Group& group) { return group.rank(); }

// One VP's part of a run of random traffic, on the whole machine (a Proc) or on a group (ranks,
// messages and collectives by group rank): `steps` steps of the plan drawn from `seed`, each
// message of a size drawn from `sizes`; check(ok, what) takes every result. Rank `thrower`
// throws std::runtime_error at step `throw_at` (none where -1). A SizeMismatch, the sign of a
// message overtaken by the next on its channel, is printed with the step before it is rethrown.
template <class Comm, class Check>
void traffic(Comm& vp, std::span<const std::size_t> sizes, std::uint64_t seed, int steps,
             Check&& check, int thrower = -1, int throw_at = -1) {
  namespace hc = hypercomm;
  const auto value = [](int from, int to, int step, int j, std::size_t k) {
    return ((from * 131L + to) * 1000003L + step * 7919L + j * 17L) * 4096L + static_cast<long>(k);
  };
  const auto fill = [&](std::vector<long>& x, int from, int to, int step, int j) {
    for (std::size_t k = 0; k < x.size(); ++k) x[k] = value(from, to, step, j, k);
  };
  const auto whole = [&](const std::vector<long>& x, int from, int to, int step, int j) {
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k] != value(from, to, step, j, k)) return false;
    return true;
  };
  const int p = vp.size(), me = rank_of(vp);
  for (int step = 0; step < steps; ++step) {
    std::mt19937_64 rng(seed * 100003 + static_cast<std::uint64_t>(step));
    const auto draw = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    std::vector<std::size_t> size(static_cast<std::size_t>(p));
    std::vector<int> late(static_cast<std::size_t>(p));  // 1: sends late, 2: receives late
    for (int v = 0; v < p; ++v) {
      size[static_cast<std::size_t>(v)] = sizes[draw(sizes.size())];
      late[static_cast<std::size_t>(v)] = static_cast<int>(draw(4));
    }
    const auto size_of = [&](int v) { return size[static_cast<std::size_t>(v)]; };
    const auto pause = [&](int v, int when) {
      if (late[static_cast<std::size_t>(v)] == when)
        std::this_thread::sleep_for(std::chrono::microseconds(300));
    };
    std::vector<int> order(static_cast<std::size_t>(p));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int> from(order.size());  // VP v sends to order[v]; from[order[v]] = v
    for (int v = 0; v < p; ++v) from[static_cast<std::size_t>(order[v])] = v;
    const int to = order[static_cast<std::size_t>(me)];
    const int src = from[static_cast<std::size_t>(me)];
    const int root = static_cast<int>(draw(static_cast<std::size_t>(p)));
    if (me == thrower && step == throw_at)
      throw std::runtime_error("injected failure in VP " + std::to_string(me));
    const std::size_t kind = draw(6);
    try {
      switch (kind) {
        case 0: {  // a permutation: each VP sends to one and receives from one
          if (to != me) {
            pause(me, 1);
            std::vector<long> out(size_of(me));
            fill(out, me, to, step, 0);
            vp.send(to, out);
          }
          if (src != me) {
            pause(me, 2);
            std::vector<long> in(size_of(src));
            vp.recv(src, in);
            check(whole(in, src, me, step, 0), "a message of a permutation");
          }
          break;
        }
        case 1: {  // a burst of one to five messages each way of the permutation
          const int burst = 1 + static_cast<int>(draw(5));
          if (to != me) {
            pause(me, 1);
            for (int j = 0; j < burst; ++j) {
              std::vector<long> out(sizes[(static_cast<std::size_t>(me) * 7 + j) % sizes.size()]);
              fill(out, me, to, step, j);
              vp.send(to, out);
            }
          }
          if (src != me) {
            pause(me, 2);
            for (int j = 0; j < burst; ++j) {
              std::vector<long> in(sizes[(static_cast<std::size_t>(src) * 7 + j) % sizes.size()]);
              vp.recv(src, in);
              check(whole(in, src, me, step, j), "a message of a burst");
            }
          }
          break;
        }
        case 2: {  // every VP to one, which takes them in the shuffled order
          if (me != root) {
            pause(me, 1);
            std::vector<long> out(size_of(me));
            fill(out, me, root, step, 0);
            vp.send(root, out);
          } else {
            pause(me, 2);
            for (const int v : order) {
              if (v == root) continue;
              std::vector<long> in(size_of(v));
              vp.recv(v, in);
              check(whole(in, v, root, step, 0), "a message of many to one");
            }
          }
          break;
        }
        case 3: {  // exchanges between the pairs of neighbours in the shuffled order
          const std::size_t mine = static_cast<std::size_t>(src) ^ 1;  // src: me in order
          if (mine >= order.size()) break;                             // the odd one out
          const int partner = order[mine];
          pause(me, 1);
          std::vector<long> out(size_of(me)), in(size_of(partner));
          fill(out, me, partner, step, 0);
          vp.sendrecv(partner, out, in);
          check(whole(in, partner, me, step, 0), "an exchange");
          break;
        }
        case 4: {  // a rooted collective of the root's size
          const std::size_t n = size_of(root);
          pause(me, 1);
          std::vector<long> buf(n);
          if (me == root) fill(buf, root, -1, step, 0);
          hc::broadcast(vp, buf, root);
          check(whole(buf, root, -1, step, 0), "broadcast");
          std::vector<long> in(n), sum(me == root ? n : 0);
          for (std::size_t k = 0; k < n; ++k) in[k] = me * 1000L + static_cast<long>(k);
          hc::reduce(vp, in, sum, std::plus<>{}, root);
          bool right = true;
          for (std::size_t k = 0; k < sum.size(); ++k)
            right = right && sum[k] == 1000L * (p * (p - 1) / 2) + p * static_cast<long>(k);
          check(right, "reduce");
          break;
        }
        default: {  // the symmetric collectives, blocks of a size that fits p of them
          const std::size_t n = std::max<std::size_t>(1, size_of(root) / 4);
          pause(me, 2);
          std::vector<long> block(n), all(n * static_cast<std::size_t>(p));
          fill(block, me, -1, step, 0);
          hc::all_gather(vp, block, all);
          bool right = true;
          for (int v = 0; v < p; ++v)
            for (std::size_t k = 0; k < n; ++k)
              right = right && all[static_cast<std::size_t>(v) * n + k] == value(v, -1, step, 0, k);
          check(right, "all_gather");
          std::vector<long> blocks(all.size()), got(all.size());
          for (int j = 0; j < p; ++j)
            for (std::size_t k = 0; k < n; ++k)
              blocks[static_cast<std::size_t>(j) * n + k] = value(me, j, step, 1, k);
          hc::all_to_all(vp, blocks, got);
          right = true;
          for (int v = 0; v < p; ++v)
            for (std::size_t k = 0; k < n; ++k)
              right = right && got[static_cast<std::size_t>(v) * n + k] == value(v, me, step, 1, k);
          check(right, "all_to_all");
          std::vector<long> in(n), sum(n);
          for (std::size_t k = 0; k < n; ++k) in[k] = me * 1000L + static_cast<long>(k);
          hc::all_reduce(vp, in, sum, std::plus<>{});
          right = true;
          for (std::size_t k = 0; k < n; ++k)
            right = right && sum[k] == 1000L * (p * (p - 1) / 2) + p * static_cast<long>(k);
          check(right, "all_reduce");
          break;
        }
      }
    } catch (const hc::SizeMismatch& e) {
      // A message overtaken by the next one on its channel shows as the wrong size: where.
      std::fprintf(stderr, "random traffic on %d VPs, seed %llu, step %d (case %zu): %s\n", p,
                   static_cast<unsigned long long>(seed), step, kind, e.what());
      throw;
    }
  }
}

}  // namespace hctest
