// Every misuse caught fast and by name (API.md, "Errors"): a table of wrong programs, each with
// the error type it must raise and the words its message must carry (the VP, the operation, the
// values). The table is printed, misuse by misuse, so that a reader sees every message.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;
using hctest::test_options;

namespace {

// A user operator's failure, carried out of run as itself.
struct OperatorFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
thread_local int current_vp = -1;  // the VP whose thread runs the operator

// Throws on the first combine that VP `vp`'s thread makes.
struct FailingPlus {
  int vp;
  int operator()(int a, int b) const {
    if (current_vp == vp)
      throw OperatorFailed("VP " + std::to_string(vp) + ": the user's operator failed");
    return a + b;
  }
};
// Throws when it combines the value VP `vp` contributed (whichever thread combines it: in a
// meeting the last VP to arrive combines every input).
struct FailingOnValue {
  int bad;
  int operator()(int a, int b) const {
    if (a == bad || b == bad)
      throw OperatorFailed("VP " + std::to_string(bad - 1000) + "'s value reached the operator");
    return a + b;
  }
};

struct Misuse {
  std::string name;
  std::string type;  // the expected error's name, for the table
  bool (*is_expected)(const std::exception&);
  std::function<void()> act;          // runs the wrong program (or makes the bad value)
  std::vector<std::string> mentions;  // words the message must contain
  bool names_vp = true;               // outside a run there is no VP to name
  double within_seconds = 1.0;        // mismatches are found at once, not by the watchdog
};

template <class E>
bool is(const std::exception& e) {
  return dynamic_cast<const E*>(&e) != nullptr;
}

constexpr auto kTimeout = std::chrono::seconds(2);

hc::Options options(bool meetings = true, hc::Links links = hc::Links::routed) {
  hc::Options o = test_options();
  o.deadlock_timeout = kTimeout;
  o.meetings = meetings;
  o.links = links;
  return o;
}

std::function<void()> in_run(const char* topology, std::function<void(hc::Proc&)> body,
                             hc::Options o = options()) {
  return [=] {
    hc::run(
        hc::Topology::parse(topology),
        [&](hc::Proc& vp) {
          current_vp = vp.id();
          body(vp);
        },
        o);
  };
}

template <class E>
Misuse misuse(std::string name, std::function<void()> act, std::vector<std::string> mentions,
              bool names_vp = true, double within = 1.0) {
  std::string type = typeid(E).name();
  for (const char* known : {"TopologyError", "LinkError", "SizeMismatch", "CollectiveMismatch",
                            "AlgorithmError", "Aborted", "Deadlock", "OperatorFailed", "Error"})
    if (type.find(known) != std::string::npos) {
      type = known;
      break;
    }
  return Misuse{std::move(name),     type,     &is<E>, std::move(act),
                std::move(mentions), names_vp, within};
}

using V = std::vector<int>;
using Counts = std::vector<std::size_t>;
const double kDeadlock = std::chrono::duration<double>(kTimeout).count() + 3.0;

std::vector<Misuse> table() {
  std::vector<Misuse> t;
  // Sizes.
  t.push_back(misuse<hc::SizeMismatch>("recv of 4 ints from a send of 3",
                                       in_run("ring:2",
                                              [](hc::Proc& vp) {
                                                if (vp.id() == 0) vp.send(1, V(3));
                                                V in(4);
                                                if (vp.id() == 1) vp.recv(0, in);
                                              }),
                                       {"VP 1", "12", "16"}));
  t.push_back(misuse<hc::SizeMismatch>("all_reduce with out shorter than in",
                                       in_run("ring:4",
                                              [](hc::Proc& vp) {
                                                V in(4), out(3);
                                                hc::all_reduce(vp, in, out, std::plus<>{});
                                              }),
                                       {"all_reduce", "3", "4"}));
  t.push_back(misuse<hc::SizeMismatch>("all_gather with out not p blocks",
                                       in_run("hypercube:2",
                                              [](hc::Proc& vp) {
                                                V in(2), out(7);
                                                hc::all_gather(vp, in, out);
                                              }),
                                       {"all_gather", "7"}));
  t.push_back(misuse<hc::SizeMismatch>("reduce whose root's out is short",
                                       in_run("ring:4",
                                              [](hc::Proc& vp) {
                                                V in(4), out(vp.id() == 2 ? 2 : 4);
                                                hc::reduce(vp, in, out, std::plus<>{}, 2);
                                              }),
                                       {"VP 2", "reduce", "root"}));
  t.push_back(misuse<hc::SizeMismatch>("scatter whose root's in is not p blocks",
                                       in_run("mesh:2x2",
                                              [](hc::Proc& vp) {
                                                V in(vp.id() == 0 ? 5 : 0), out(2);
                                                hc::scatter(vp, in, out, 0);
                                              }),
                                       {"VP 0", "scatter", "5"}));
  t.push_back(misuse<hc::SizeMismatch>("reduce_scatter with in not p blocks",
                                       in_run("ring:3",
                                              [](hc::Proc& vp) {
                                                V in(5), out(2);
                                                hc::reduce_scatter(vp, in, out, std::plus<>{});
                                              }),
                                       {"reduce_scatter", "5"}));
  t.push_back(misuse<hc::SizeMismatch>("all_to_all with blocks that do not divide",
                                       in_run("ring:4",
                                              [](hc::Proc& vp) {
                                                V in(6), out(6);
                                                hc::all_to_all(vp, in, out);
                                              }),
                                       {"all_to_all", "6"}));
  // Roots out of range.
  t.push_back(misuse<hc::LinkError>("broadcast with root -1",
                                    in_run("ring:4",
                                           [](hc::Proc& vp) {
                                             V b(2);
                                             hc::broadcast(vp, b, -1);
                                           }),
                                    {"broadcast", "root -1"}));
  t.push_back(misuse<hc::LinkError>("reduce with root p",
                                    in_run("hypercube:2",
                                           [](hc::Proc& vp) {
                                             V in(2), out(2);
                                             hc::reduce(vp, in, out, std::plus<>{}, 4);
                                           }),
                                    {"reduce", "root 4"}));
  t.push_back(misuse<hc::LinkError>("gather with root 99",
                                    in_run("ring:3",
                                           [](hc::Proc& vp) {
                                             V in(1), out(3);
                                             hc::gather(vp, in, out, 99);
                                           }),
                                    {"gather", "root 99"}));
  t.push_back(misuse<hc::LinkError>("scatter on a row with root 5 of 4",
                                    in_run("mesh:4x4",
                                           [](hc::Proc& vp) {
                                             V in(4), out(1);
                                             hc::scatter(vp.row(), in, out, 5);
                                           }),
                                    {"scatter", "root 5", "row"}));
  // VPs that disagree on the root, the count, the algorithm or the collective.
  t.push_back(
      misuse<hc::CollectiveMismatch>("broadcast where VP 1 passes root 1, the others root 0",
                                     in_run("ring:8",
                                            [](hc::Proc& vp) {
                                              V b(4);
                                              hc::broadcast(vp, b, vp.id() == 1 ? 1 : 0);
                                            }),
                                     {"broadcast", "root 1", "root 0"}));
  t.push_back(misuse<hc::CollectiveMismatch>("reduce where VP 0 passes root p-1",
                                             in_run("hypercube:3",
                                                    [](hc::Proc& vp) {
                                                      V in(4), out(4);
                                                      hc::reduce(vp, in, out, std::plus<>{},
                                                                 vp.id() == 0 ? 7 : 0);
                                                    }),
                                             {"reduce", "root 7", "root 0"}));
  t.push_back(misuse<hc::CollectiveMismatch>("gather with roots 0 and 1",
                                             in_run("ring:8",
                                                    [](hc::Proc& vp) {
                                                      V in(1), out(8);
                                                      hc::gather(vp, in, out, vp.id() % 2);
                                                    }),
                                             {"gather", "root 0", "root 1"}));
  // VPs that reduce with different operators, or one operator on other element types.
  t.push_back(misuse<hc::CollectiveMismatch>(
      "all_reduce where VP 2 passes hypercomm::max<>, the others std::plus<>",
      in_run("hypercube:3",
             [](hc::Proc& vp) {
               V in(3), out(3);
               if (vp.id() == 2)
                 hc::all_reduce(vp, in, out, hc::max<>{});
               else
                 hc::all_reduce(vp, in, out, std::plus<>{});
             }),
      {"all_reduce", "operator", hctest::operator_text("std::plus<void>", "int"),
       hctest::operator_text("hypercomm::max<void>", "int")}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "scan where VP 0 passes floats, the others ints (messages)",
      in_run(
          "ring:4",
          [](hc::Proc& vp) {
            if (vp.id() == 0)
              (void)hc::scan(vp, 1.0f, std::plus<>{});
            else
              (void)hc::scan(vp, 1, std::plus<>{});
          },
          options(false)),
      {"scan", "operator", hctest::operator_text("std::plus<void>", "float"),
       hctest::operator_text("std::plus<void>", "int")}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "all_reduce where VP 3 passes 2 elements, the others 1 (meeting)",
      in_run("ring:8",
             [](hc::Proc& vp) {
               V in(vp.id() == 3 ? 2 : 1), out(in.size());
               hc::all_reduce(vp, in, out, std::plus<>{});
             }),
      {"all_reduce", "VP 3", "1 element (4 bytes)", "2 elements (8 bytes)"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "all_reduce with disagreeing counts (messages)",
      in_run(
          "ring:8",
          [](hc::Proc& vp) {
            V in(vp.id() == 3 ? 2 : 1), out(in.size());
            hc::all_reduce(vp, in, out, std::plus<>{});
          },
          options(false)),
      {"all_reduce", "VP 3", "1 element (4 bytes)", "2 elements (8 bytes)"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "broadcast where VP 5 passes 3 elements, others 4",
      in_run("hypercube:3",
             [](hc::Proc& vp) {
               V b(vp.id() == 5 ? 3 : 4);
               hc::broadcast(vp, b, 0);
             }),
      {"broadcast", "3 elements (12 bytes)", "4 elements (16 bytes)"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "broadcast where VP 2 forces ring, the others two_phase",
      in_run("ring:8",
             [](hc::Proc& vp) {
               V b(8);
               hc::broadcast(vp, b, 0, vp.id() == 2 ? hc::Algo::ring : hc::Algo::two_phase);
             }),
      {"broadcast", "algorithm", "ring", "two_phase"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "all_gather where VP 0 forces hypercube, the others ring",
      in_run("hypercube:3",
             [](hc::Proc& vp) {
               V in(2), out(16);
               hc::all_gather(vp, in, out, vp.id() == 0 ? hc::Algo::hypercube : hc::Algo::ring);
             }),
      {"all_gather", "algorithm", "hypercube", "ring"}));
  // Asking for the algorithm that automatic would run is still asking for another one.
  t.push_back(misuse<hc::CollectiveMismatch>(
      "all_gather where VP 4 forces ring, the others automatic (which runs ring there)",
      in_run("ring:5",
             [](hc::Proc& vp) {
               V in(2), out(10);
               hc::all_gather(vp, in, out, vp.id() == 4 ? hc::Algo::ring : hc::Algo::automatic);
             }),
      {"all_gather", "algorithm", "automatic -> ring", "algorithm ring)"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "all_reduce where VP 0 forces the algorithm automatic runs, the others automatic "
      "(messages)",
      in_run(
          "hypercube:3",
          [](hc::Proc& vp) {
            V in(1), out(1);
            const hc::Algo chosen = hc::resolve(hc::Collective::all_reduce, hc::Algo::automatic,
                                                vp.topology(), hc::Links::routed, sizeof(int));
            hc::all_reduce(vp, in, out, std::plus<>{}, vp.id() == 0 ? chosen : hc::Algo::automatic);
          },
          options(false)),
      {"all_reduce", "algorithm", "automatic -> "}));
  t.push_back(misuse<hc::CollectiveMismatch>("barrier on VP 5, all_reduce elsewhere (meeting)",
                                             in_run("ring:8",
                                                    [](hc::Proc& vp) {
                                                      if (vp.id() == 5) return hc::barrier(vp);
                                                      V in(1), out(1);
                                                      hc::all_reduce(vp, in, out, std::plus<>{});
                                                    }),
                                             {"barrier", "all_reduce", "VP 5"}));
  t.push_back(misuse<hc::CollectiveMismatch>("reduce on VP 1, broadcast elsewhere",
                                             in_run(
                                                 "ring:6",
                                                 [](hc::Proc& vp) {
                                                   V in(2), out(2);
                                                   if (vp.id() == 1)
                                                     return hc::reduce(vp, in, out, std::plus<>{},
                                                                       0);
                                                   hc::broadcast(vp, out, 0);
                                                 },
                                                 options(false)),
                                             {"reduce", "broadcast", "VP 1"}));
  t.push_back(misuse<hc::CollectiveMismatch>("all_gather on even VPs, all_to_all on odd",
                                             in_run("hypercube:2",
                                                    [](hc::Proc& vp) {
                                                      V in(4), out(4), one(1);
                                                      if (vp.id() % 2 == 0)
                                                        return hc::all_gather(vp, one, out);
                                                      hc::all_to_all(vp, in, out);
                                                    }),
                                             {"all_gather", "all_to_all"}));
  t.push_back(misuse<hc::CollectiveMismatch>("scan on VP 2, exscan elsewhere",
                                             in_run("ring:4",
                                                    [](hc::Proc& vp) {
                                                      V in(1), out(1);
                                                      if (vp.id() == 2)
                                                        return hc::scan(vp, in, out, std::plus<>{});
                                                      hc::exscan(vp, in, out, std::plus<>{});
                                                    }),
                                             {"scan", "exscan", "VP 2"}));
  t.push_back(misuse<hc::CollectiveMismatch>("circular_shift by 1 on VP 0, by 2 elsewhere",
                                             in_run("ring:5",
                                                    [](hc::Proc& vp) {
                                                      V in(1), out(1);
                                                      hc::circular_shift(vp, in, out,
                                                                         vp.id() == 0 ? 1 : 2);
                                                    }),
                                             {"circular_shift", "shift 1", "shift 2"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "broadcast inside row 2 of mesh:4x4 with roots 0 and 1",
      in_run("mesh:4x4",
             [](hc::Proc& vp) {
               V b(2);
               const hc::Group row = vp.row();
               hc::broadcast(row, b, vp.id() == 9 ? 1 : 0);
             }),
      {"broadcast", "row 2 of mesh:4x4", "root 1", "root 0", "VP 9"}));
  t.push_back(
      misuse<hc::CollectiveMismatch>("all_reduce inside column 3 of mesh:4x4 with counts 1 and 2",
                                     in_run("mesh:4x4",
                                            [](hc::Proc& vp) {
                                              V in(vp.id() == 7 ? 2 : 1), out(in.size());
                                              hc::all_reduce(vp.column(), in, out, std::plus<>{});
                                            }),
                                     {"all_reduce", "column 3 of mesh:4x4", "VP 7"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "reduce inside a subcube of hypercube:4 with roots 0 and 3",
      in_run("hypercube:4",
             [](hc::Proc& vp) {
               V in(1), out(1);
               hc::reduce(vp.subcube(0b0011), in, out, std::plus<>{}, vp.id() == 2 ? 3 : 0);
             }),
      {"reduce", "subcube", "root 3", "root 0"}));
  // Irregular collectives whose members pass different counts.
  t.push_back(misuse<hc::CollectiveMismatch>(
      "all_gatherv where VP 1 passes other counts",
      in_run("ring:4",
             [](hc::Proc& vp) {
               const Counts counts = vp.id() == 1 ? Counts{1, 2, 1, 1} : Counts{1, 1, 1, 1};
               V in(counts[static_cast<std::size_t>(vp.id())]), out(vp.id() == 1 ? 5 : 4);
               hc::all_gatherv(vp, in, out, counts);
             }),
      {"all_gatherv", "counts", "VP 1"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "gatherv where the root passes other counts",
      in_run("hypercube:2",
             [](hc::Proc& vp) {
               const Counts counts = vp.id() == 0 ? Counts{1, 1, 1, 2} : Counts{1, 1, 1, 1};
               V in(counts[static_cast<std::size_t>(vp.id())]), out(vp.id() == 0 ? 5 : 0);
               hc::gatherv(vp, in, out, counts, 0);
             }),
      {"gatherv", "counts", "VP 0"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "reduce_scatterv where VP 2 passes other counts",
      in_run("ring:3",
             [](hc::Proc& vp) {
               const Counts counts = vp.id() == 2 ? Counts{2, 1, 1} : Counts{1, 1, 2};
               V in(4), out(counts[static_cast<std::size_t>(vp.id())]);
               hc::reduce_scatterv(vp, in, out, std::plus<>{}, counts);
             }),
      {"reduce_scatterv", "counts", "VP 2"}));
  t.push_back(misuse<hc::SizeMismatch>(
      "all_to_allv where VP 0 sends 2 to rank 1, which expects 1",
      in_run("ring:2",
             [](hc::Proc& vp) {
               const Counts send = vp.id() == 0 ? Counts{1, 2} : Counts{1, 1};
               const Counts recv{1, 1};
               V in(send[0] + send[1]), out(2);
               hc::all_to_allv(vp, in, send, out, recv);
             }),
      {"VP 1", "all_to_allv", "8", "4"}));
  // Ids out of range, sends to oneself, non-neighbours under Links::strict.
  t.push_back(misuse<hc::LinkError>("send to VP -1",
                                    in_run("ring:4", [](hc::Proc& vp) { vp.send(-1, V(1)); }),
                                    {"send", "-1", "outside"}));
  t.push_back(misuse<hc::LinkError>("recv from VP p",
                                    in_run("ring:4",
                                           [](hc::Proc& vp) {
                                             V in(1);
                                             vp.recv(4, in);
                                           }),
                                    {"recv", "VP 4", "outside"}));
  t.push_back(misuse<hc::LinkError>("send to oneself",
                                    in_run("ring:4",
                                           [](hc::Proc& vp) {
                                             if (vp.id() == 2) vp.send(2, V(1));
                                           }),
                                    {"VP 2", "itself"}));
  t.push_back(misuse<hc::LinkError>("send to a non-neighbour under Links::strict",
                                    in_run(
                                        "ring:8",
                                        [](hc::Proc& vp) {
                                          if (vp.id() == 0) vp.send(4, V(1));
                                        },
                                        options(true, hc::Links::strict)),
                                    {"VP 0", "VP 4", "not a neighbour"}));
  t.push_back(misuse<hc::LinkError>("group send to rank 9 of a row of 4",
                                    in_run("mesh:4x4",
                                           [](hc::Proc& vp) {
                                             if (vp.id() == 5) vp.row().send(9, V(1));
                                           }),
                                    {"VP 5", "rank 9", "row 1 of mesh:4x4"}));
  t.push_back(misuse<hc::LinkError>("collective on an empty split group",
                                    in_run("ring:4",
                                           [](hc::Proc& vp) {
                                             const hc::Group g = hc::split(
                                                 vp.world(), vp.id() == 3 ? -1 : 0, vp.id());
                                             hc::barrier(g);
                                           }),
                                    {"VP 3", "barrier", "empty group"}));
  // Invalid topologies and topology strings (outside a run: no VP to name).
  t.push_back(misuse<hc::TopologyError>(
      "ring of 0 VPs", [] { (void)hc::Topology::ring(0); }, {"0"}, false));
  t.push_back(misuse<hc::TopologyError>(
      "mesh 0x4", [] { (void)hc::Topology::mesh(0, 4); }, {"0"}, false));
  t.push_back(misuse<hc::TopologyError>(
      "hypercube of dimension 13", [] { (void)hc::Topology::hypercube(13); }, {"13"}, false));
  t.push_back(misuse<hc::TopologyError>(
      "topology string ring:x", [] { (void)hc::Topology::parse("ring:x"); }, {"ring:x"}, false));
  t.push_back(misuse<hc::TopologyError>(
      "topology string cube:3", [] { (void)hc::Topology::parse("cube:3"); }, {"cube:3"}, false));
  t.push_back(misuse<hc::Error>(
      "deadlock_timeout of zero",
      [] {
        hc::Options o = options();
        o.deadlock_timeout = std::chrono::seconds(0);
        hc::run(
            hc::Topology::ring(2), [](hc::Proc&) {}, o);
      },
      {"deadlock_timeout"}, false));
  // Algorithms that cannot run.
  t.push_back(misuse<hc::AlgorithmError>("hypercube broadcast on ring:6",
                                         in_run("ring:6",
                                                [](hc::Proc& vp) {
                                                  V b(2);
                                                  hc::broadcast(vp, b, 0, hc::Algo::hypercube);
                                                }),
                                         {"broadcast", "hypercube", "6"}));
  t.push_back(misuse<hc::AlgorithmError>("dimension_exchange all_to_all on ring:6",
                                         in_run("ring:6",
                                                [](hc::Proc& vp) {
                                                  V in(6), out(6);
                                                  hc::all_to_all(vp, in, out,
                                                                 hc::Algo::dimension_exchange);
                                                }),
                                         {"all_to_all", "dimension_exchange"}));
  t.push_back(misuse<hc::AlgorithmError>("hypercube all_reduce on ring:8 under Links::strict",
                                         in_run(
                                             "ring:8",
                                             [](hc::Proc& vp) {
                                               V in(2), out(2);
                                               hc::all_reduce(vp, in, out, std::plus<>{},
                                                              hc::Algo::hypercube);
                                             },
                                             options(true, hc::Links::strict)),
                                         {"all_reduce", "hypercube", "strict"}));
  t.push_back(misuse<hc::AlgorithmError>("mesh all_gather on a ring",
                                         in_run("ring:5",
                                                [](hc::Proc& vp) {
                                                  V in(1), out(5);
                                                  hc::all_gather(vp, in, out, hc::Algo::mesh);
                                                }),
                                         {"all_gather", "mesh"}));
  // Deadlocks of several shapes: the whole picture, who waits for whom.
  t.push_back(misuse<hc::Deadlock>(
      "a cycle of receives 0 <- 1 <- 2 <- 0",
      in_run("ring:3",
             [](hc::Proc& vp) {
               V in(1);
               vp.recv((vp.id() + 1) % 3, in);
             }),
      {"VP 0 waits in recv for VP 1", "VP 1 waits in recv for VP 2", "VP 2 waits in recv for VP 0"},
      true, kDeadlock));
  t.push_back(misuse<hc::Deadlock>("three VPs wait for VP 0, which returned early (ring:4)",
                                   in_run("ring:4",
                                          [](hc::Proc& vp) {
                                            V in(1);
                                            if (vp.id() != 0) vp.recv(0, in);
                                          }),
                                   {"VP 1 waits in recv for VP 0, which has already finished",
                                    "VP 2 waits in recv for VP 0, which has already finished",
                                    "VP 3 waits in recv for VP 0, which has already finished"}));
  t.push_back(misuse<hc::Deadlock>(
      "a cycle 0->1->2->0 and two VPs waiting for one that returned (ring:6)",
      in_run("ring:6",
             [](hc::Proc& vp) {
               V in(1);
               if (vp.id() < 3) vp.recv((vp.id() + 1) % 3, in);
               if (vp.id() > 3) vp.recv(3, in);
             }),
      {"VP 0 waits in recv for VP 1", "VP 1 waits in recv for VP 2", "VP 2 waits in recv for VP 0",
       "VP 4 waits in recv for VP 3, which has already finished",
       "VP 5 waits in recv for VP 3, which has already finished"}));
  t.push_back(misuse<hc::Deadlock>("a plain recv from a VP that waits in a barrier",
                                   in_run(
                                       "ring:4",
                                       [](hc::Proc& vp) {
                                         V in(1);
                                         if (vp.id() == 0) vp.recv(1, in);
                                         hc::barrier(vp);
                                       },
                                       options(false)),
                                   {"VP 0 waits in recv for VP 1", "barrier"}, true, kDeadlock));
  t.push_back(misuse<hc::CollectiveMismatch>("VP 3 skips the barrier the others call",
                                             in_run("ring:4",
                                                    [](hc::Proc& vp) {
                                                      if (vp.id() != 3) hc::barrier(vp);
                                                    }),
                                             {"barrier", "VP 3", "already finished"}));
  t.push_back(misuse<hc::CollectiveMismatch>("VP 6 skips the all_reduce the others meet in",
                                             in_run("ring:8",
                                                    [](hc::Proc& vp) {
                                                      if (vp.id() != 6)
                                                        (void)hc::all_reduce(vp, 1, std::plus<>{});
                                                    }),
                                             {"all_reduce", "VP 6", "already finished"}));
  // Exceptions from user operators: run rethrows them as they are.
  t.push_back(misuse<OperatorFailed>("the operator throws on VP 2 in an all_reduce (messages)",
                                     in_run(
                                         "ring:4",
                                         [](hc::Proc& vp) {
                                           V in(3, 1), out(3);
                                           hc::all_reduce(vp, in, out, FailingPlus{2});
                                         },
                                         options(false)),
                                     {"VP 2", "operator"}));
  t.push_back(misuse<OperatorFailed>(
      "the operator throws on VP 5's value in an all_reduce meeting",
      in_run("ring:8",
             [](hc::Proc& vp) { (void)hc::all_reduce(vp, 1000 + vp.id(), FailingOnValue{1005}); }),
      {"VP 5", "operator"}));
  t.push_back(misuse<OperatorFailed>("the operator throws on VP 2 in a reduce",
                                     in_run("hypercube:3",
                                            [](hc::Proc& vp) {
                                              V in(2, 1000 + vp.id()), out(2);
                                              hc::reduce(vp, in, out, FailingOnValue{1002}, 0);
                                            }),
                                     {"VP 2", "operator"}));
  t.push_back(misuse<OperatorFailed>(
      "the operator throws on VP 3 in a scan",
      in_run("ring:5", [](hc::Proc& vp) { (void)hc::scan(vp, 1, FailingPlus{3}); }),
      {"VP 3", "operator"}));
  // Group errors.
  t.push_back(misuse<hc::TopologyError>("row() on a ring",
                                        in_run("ring:4", [](hc::Proc& vp) { (void)vp.row(); }),
                                        {"row()", "ring:4"}));
  t.push_back(misuse<hc::TopologyError>(
      "column() on a hypercube", in_run("hypercube:2", [](hc::Proc& vp) { (void)vp.column(); }),
      {"column()", "hypercube"}));
  t.push_back(misuse<hc::TopologyError>(
      "subcube() on a mesh", in_run("mesh:2x2", [](hc::Proc& vp) { (void)vp.subcube(1); }),
      {"subcube", "mesh:2x2"}));
  t.push_back(misuse<hc::TopologyError>(
      "subcube mask 0b10000 on hypercube:3",
      in_run("hypercube:3", [](hc::Proc& vp) { (void)vp.subcube(0b10000); }),
      {"subcube(16)", "d = 3"}));
  t.push_back(
      misuse<hc::SizeMismatch>("a row's recv of 4 ints where rank 1 sent 3",
                               in_run("mesh:4x4",
                                      [](hc::Proc& vp) {
                                        const hc::Group row = vp.row();
                                        V three(3, 1), four(4);
                                        if (vp.id() == 9) row.send(2, three);
                                        if (vp.id() == 10) row.recv(1, four);
                                      }),
                               {"VP 10", "4", "3", "row 2 of mesh:4x4", "rank 2 from rank 1"}));
  t.push_back(misuse<hc::CollectiveMismatch>(
      "VP 4 calls barrier where the others split",
      in_run("ring:8",
             [](hc::Proc& vp) {
               if (vp.id() == 4)
                 hc::barrier(vp);
               else
                 (void)hc::split(vp.world(), vp.id() % 2, 0);
             }),
      // A VP that called split names it; VP 4 sees split's exchange, an all_gather.
      {"barrier", "all_gather"}));
  return t;
}

// Runs one misuse: the error, its message and how long it took.
struct Outcome {
  std::string type = "(none)";
  std::string message;
  double seconds = 0;
  bool expected = false;
};

Outcome attempt(const Misuse& m) {
  Outcome out;
  const auto start = std::chrono::steady_clock::now();
  try {
    m.act();
  } catch (const std::exception& e) {
    out.expected = m.is_expected(e);
    out.type = typeid(e).name();
    out.message = e.what();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

TEST_CASE("every misuse raises its error type, fast, with a message that names it") {
  const std::vector<Misuse> misuses = table();
  REQUIRE(misuses.size() >= 40);
  std::printf("%zu misuses:\n", misuses.size());
  int index = 0;
  for (const Misuse& m : misuses) {
    const Outcome out = attempt(m);
    std::printf("%2d. %s\n    %s after %.3f s: %s\n", ++index, m.name.c_str(), m.type.c_str(),
                out.seconds, out.message.c_str());
    CAPTURE(m.name);
    CAPTURE(out.type);
    CAPTURE(out.message);
    CHECK(out.expected);
    if (m.names_vp) CHECK(out.message.find("VP ") != std::string::npos);
    for (const std::string& word : m.mentions) {
      CAPTURE(word);
      CHECK(out.message.find(word) != std::string::npos);
    }
    CHECK(out.seconds < m.within_seconds);
  }
  std::fflush(stdout);
}

namespace {

// Runs a mismatched collective on every VP of `topology`, each VP stamping the time just before
// it enters: the seconds from the last entry to run's return.
double mismatch_latency(hc::Machine& machine, const std::function<void(hc::Proc&)>& call) {
  std::vector<std::chrono::steady_clock::time_point> entered(
      static_cast<std::size_t>(machine.topology().size()));
  bool thrown = false;
  try {
    machine.run([&](hc::Proc& vp) {
      entered[static_cast<std::size_t>(vp.id())] = std::chrono::steady_clock::now();
      call(vp);
    });
  } catch (const hc::CollectiveMismatch&) {
    thrown = true;
  }
  const auto end = std::chrono::steady_clock::now();
  CHECK(thrown);
  return std::chrono::duration<double>(end - *std::max_element(entered.begin(), entered.end()))
      .count();
}

}  // namespace

TEST_CASE("a mismatch at 64 VPs on few cores is reported within 100 ms of the last entry") {
  struct Kind {
    const char* name;
    std::function<void(hc::Proc&)> call;
  };
  const std::vector<Kind> kinds{
      {"broadcast roots 1/0",
       [](hc::Proc& vp) {
         thread_local V b(4);
         hc::broadcast(vp, b, vp.id() == 1 ? 1 : 0);
       }},
      {"reduce root p-1 on VP 0",
       [](hc::Proc& vp) {
         thread_local V in(4), out(4);
         hc::reduce(vp, in, out, std::plus<>{}, vp.id() == 0 ? vp.size() - 1 : 0);
       }},
      {"gather roots 0/1",
       [](hc::Proc& vp) {
         thread_local V in(1), out(64);
         hc::gather(vp, in, out, vp.id() % 2);
       }},
      {"all_reduce counts",
       [](hc::Proc& vp) {
         thread_local V one(1), two(2);
         V& in = vp.id() == 3 ? two : one;
         hc::all_reduce(vp, in, in, std::plus<>{});
       }},
      // The non-roots leave their inputs in two pipelined gathers and go on to wait in a barrier:
      // their published calls are later ones by the time the root, in an all-reduce, looks.
      {"root elsewhere, 2 passed",
       [](hc::Proc& vp) {
         thread_local V in(1), out(64), sum(1);
         const int root = vp.size() - 1;
         if (vp.id() == root) {
           hc::all_reduce(vp, in, sum, std::plus<>{});
         } else {
           hc::gather(vp, in, out, root);
           hc::gather(vp, in, out, root);
         }
         hc::barrier(vp);
       }},
      {"in a split group too",
       [](hc::Proc& vp) {
         thread_local V in(1), out(32), sum(1);
         const hc::Group g = hc::split(vp.world(), vp.id() % 2, vp.id());
         const int root = g.size() - 1;
         if (g.rank() == root) {
           hc::all_reduce(g, in, sum, std::plus<>{});
         } else {
           hc::gather(g, in, out, root);
           hc::gather(g, in, out, root);
         }
         hc::barrier(g);
       }},
      // Each pair's members (VPs i and i + 3, no neighbours on either machine: neither looks at
      // the other's channel) leave a pipelined meeting with different calls (a scan's first
      // step, then a scatter's root, which checks no one) and wait for it to conclude at their
      // next meeting, where their published calls agree.
      {"a pair passes each other",
       [](hc::Proc& vp) {
         thread_local V in(1), out(1), blocks(2);
         const hc::Group g = hc::split(vp.world(), vp.id() < 6 ? vp.id() % 3 : -1, vp.id());
         if (g.size() == 0) {
         } else if (g.rank() == 0) {
           hc::scan(g, in, out, std::plus<>{});
         } else {
           std::this_thread::sleep_for(std::chrono::milliseconds(20));
           hc::scatter(g, blocks, out, 1);
         }
         hc::barrier(vp);
       }},
      {"broadcast algorithms",
       [](hc::Proc& vp) {
         thread_local V b(4);
         hc::broadcast(vp, b, 0, vp.id() == 2 ? hc::Algo::ring : hc::Algo::two_phase);
       }},
  };
  for (const char* topology : {"ring:64", "hypercube:6"}) {
    for (const bool meetings : {true, false}) {
      hc::Options o;  // pinned, as a user runs it
      o.deadlock_timeout = std::chrono::seconds(5);
      o.meetings = meetings;
      hc::Machine machine(hc::Topology::parse(topology), o);
      for (const Kind& kind : kinds) {
        std::vector<double> times;
        for (int trial = 0; trial < (hctest::kSanitized ? 2 : 5); ++trial)
          times.push_back(mismatch_latency(machine, kind.call));
        std::sort(times.begin(), times.end());
        const double median = times[times.size() / 2];
        std::printf("%-12s meetings %-5s %-24s median %6.1f ms, max %6.1f ms\n", topology,
                    meetings ? "on" : "off", kind.name, median * 1e3, times.back() * 1e3);
        CAPTURE(topology);
        CAPTURE(kind.name);
        CHECK(median < (hctest::kSanitized ? 1.0 : 0.1));
        CHECK(times.back() < 2.0);  // never the 5 s watchdog
      }
    }
  }
  std::fflush(stdout);
}

// Found by the fault search (tests/test_fault_search.cpp): on linear:6 without meetings, VP 4
// names another root of a gather in split group {4, 2, 0} than its members do, so that its
// message goes to VP 0 (neither a neighbour of VP 0's nor a VP it sent to: VP 0 never looks at
// it), and passes the next two calls as the line's sender before VP 2, the root the others
// named, looks for its header among VP 4's published calls: its last 8 are, where 2 were not.
TEST_CASE("a member that named another root and went on is found among its last calls") {
  hc::Options o = hctest::test_options();
  o.meetings = false;
  o.deadlock_timeout = std::chrono::seconds(5);
  const auto start = std::chrono::steady_clock::now();
  std::string what;
  try {
    hc::run(
        hc::Topology::linear(6),
        [](hc::Proc& vp) {
          V in(5), out(15), all(30);
          const hc::Group g = hc::split(vp.world(), vp.id() % 2, vp.size() - vp.id());
          hc::gather(g, in, out, vp.id() == 4 ? 2 : 1);
          hc::gather(vp, in, all, 0);
          hc::gather(vp, in, all, 0);
          hc::barrier(vp);
        },
        o);
  } catch (const hc::CollectiveMismatch& e) {
    what = e.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(what);
  CHECK(what.find("VP 4 calls gather (call 1 on split color 0, root 2") != std::string::npos);
  CHECK(what.find("nothing delivered for") == std::string::npos);  // not the watchdog's
  CHECK(seconds < 2.0);
}

// API.md: AlgorithmError only where an algorithm cannot run. Under Links::strict the bit-mask
// algorithms need every pair id, id XOR 2^k to be neighbours: true of a hypercube and of the
// shapes that are one (1 or 2 VPs on any topology, a 2 x 2 mesh), false of a ring or linear
// array of 4 and of a 2 x 4 mesh, where ids 0 and 2 are two hops apart.
TEST_CASE("Links::strict: the bit-mask algorithms run wherever every XOR partner is a neighbour") {
  hc::Options o = test_options();
  o.links = hc::Links::strict;
  const auto program = [](hc::Proc& vp) {
    const int p = vp.size();
    const int me = vp.id();
    std::vector<int> b(3, me == p - 1 ? 7 : -1);
    hc::broadcast(vp, std::span<int>(b), p - 1, hc::Algo::hypercube);
    CHECK(b == std::vector<int>(3, 7));
    std::vector<int> e(5, me == 0 ? 11 : -1);
    hc::broadcast(vp, std::span<int>(e), 0, hc::Algo::esbt);
    CHECK(e == std::vector<int>(5, 11));
    const std::vector<int> in{me, 1};
    std::vector<int> sum(2);
    hc::all_reduce(vp, in, sum, std::plus<>{}, hc::Algo::hypercube);
    CHECK(sum == std::vector<int>{p * (p - 1) / 2, p});
    std::vector<int> blocks(static_cast<std::size_t>(p)), got(static_cast<std::size_t>(p));
    for (int j = 0; j < p; ++j) blocks[static_cast<std::size_t>(j)] = 100 * me + j;
    hc::all_to_all(vp, blocks, got, hc::Algo::dimension_exchange);
    for (int i = 0; i < p; ++i) CHECK(got[static_cast<std::size_t>(i)] == 100 * i + me);
    std::vector<int> all(static_cast<std::size_t>(p));
    hc::all_gather(vp, std::vector<int>{me}, all, hc::Algo::hypercube);
    for (int i = 0; i < p; ++i) CHECK(all[static_cast<std::size_t>(i)] == i);
    std::vector<int> total(1);
    hc::reduce(vp, std::vector<int>{me + 1}, total, std::plus<>{}, 0, hc::Algo::hypercube);
    if (me == 0) CHECK(total[0] == p * (p + 1) / 2);
  };
  for (const char* name : {"ring:1", "ring:2", "linear:2", "mesh:1x2", "mesh:2x1", "mesh:2x2",
                           "mesh:2x2:open", "hypercube:1", "hypercube:3"}) {
    CAPTURE(name);
    CHECK_NOTHROW(hc::run(hc::Topology::parse(name), program, o));
  }
  for (const char* name : {"ring:4", "linear:4", "mesh:2x4", "mesh:4x2:open"}) {
    CAPTURE(name);
    CHECK_THROWS_AS(hc::run(hc::Topology::parse(name), program, o), hc::AlgorithmError);
  }
}

// A Group (or Proc) handed from one VP's body to another's acts as the VP that made it; a call
// through it on another thread threw nothing and hung (the watchdog saw the caller's own VP
// running), or sent as the other VP. It throws Error naming both VPs, on a 2-VP machine with
// meetings on and on 8 VPs with meetings off; a thread the body starts may still use its VP.
TEST_CASE("a Proc or Group used on another VP's thread throws Error naming both VPs") {
  for (const auto& entry :
       {std::pair{"ring:2", true}, std::pair{"ring:8", false}, std::pair{"hypercube:3", true}}) {
    // Not bound in the for: Clang before 16 cannot capture a structured binding.
    const auto& shape = entry.first;
    const auto& meetings = entry.second;
    CAPTURE(shape);
    hc::Options opt = test_options();
    opt.meetings = meetings;
    opt.deadlock_timeout = std::chrono::seconds(20);
    for (const int kind : {0, 1, 2}) {  // a barrier, a broadcast on a row-like group, a send
      CAPTURE(kind);
      const hc::Topology t = hc::Topology::parse(shape);
      std::vector<std::optional<hc::Group>> worlds(static_cast<std::size_t>(t.size()));
      std::atomic<int> made{0};
      std::string message;
      const auto start = std::chrono::steady_clock::now();
      try {
        hc::run(
            t,
            [&](hc::Proc& vp) {
              worlds[static_cast<std::size_t>(vp.id())].emplace(vp.world());
              made.fetch_add(1);
              while (made.load() < vp.size()) std::this_thread::yield();
              if (vp.id() == 0) {
                const hc::Group& other = *worlds[1];
                std::vector<int> v(2, 0);
                if (kind == 0) hc::barrier(other);
                if (kind == 1) hc::broadcast(other, v, 0);
                if (kind == 2) other.send(0, v);
              } else if (kind != 2) {
                hc::barrier(vp);
              }
            },
            opt);
      } catch (const hc::Aborted&) {
        message = "(Aborted)";
      } catch (const hc::Error& e) {
        message = e.what();
      }
      CAPTURE(message);
      CHECK(message.find("VP 0:") == 0);
      CHECK(message.find("through VP 1's Proc or Group on VP 0's thread") != std::string::npos);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    }
  }
  // A thread of a VP body's own making may call through its Proc, one at a time.
  const hc::Report r = hc::run(hc::Topology::ring(2), [](hc::Proc& vp) {
    std::vector<int> v(1, vp.id());
    std::thread helper([&] {
      if (vp.id() == 0) vp.send(1, v);
      if (vp.id() == 1) vp.recv(0, v);
    });
    helper.join();
    CHECK(v[0] == 0);
  });
  CHECK(r.messages == 1);
}

// A deadlock with a VP waiting in a group's meeting (VPs outnumber cores) names the members not
// in it, as a whole-machine meeting's does; with messages, the member it waits for.
TEST_CASE("a deadlock in a group's meeting names the members not in it") {
  hc::Options opt = test_options();
  opt.deadlock_timeout = std::chrono::milliseconds(500);
  for (const bool meetings : {true, false}) {
    CAPTURE(meetings);
    opt.meetings = meetings;
    std::string message;
    try {
      hc::run(
          hc::Topology::ring(8),
          [](hc::Proc& vp) {
            const hc::Group g = hc::split(vp.world(), vp.id() % 3, vp.id());  // color 2: VPs 2, 5
            if (vp.id() == 5) {
              std::vector<int> never(1);
              vp.recv(2, never);
            } else {
              hc::barrier(g);
            }
          },
          opt);
    } catch (const hc::Deadlock& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(message.find("VP 2 waits in barrier (call 1 on split color 2) for ") !=
          std::string::npos);
    if (message.find("for every member to join it") != std::string::npos)
      CHECK(message.find("(not in it: VP 5)") != std::string::npos);
    else
      CHECK(message.find("for VP 5") != std::string::npos);
  }
}
