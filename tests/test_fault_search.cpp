// A randomized fault search (README, "Reliability"): random sequences of collectives on random
// machines, on the whole machine, split groups and rows, with and without meetings; at a random
// call one VP throws, or disagrees with its group on the root, the count, the counts array or the
// collective. Every run must end with the fault's error, the VP's own exception or
// CollectiveMismatch / SizeMismatch, found by a VP (not the deadlock watchdog's report, "nothing
// delivered for ... s", which would mean no VP saw the disagreement itself). A disagreement that
// changes nothing the call depends on (a root where the call has none, a group of one) completes.
#include <doctest/doctest.h>

#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "support.hpp"

namespace hc = hypercomm;

namespace {

enum class Fault { none, raise, root, count, kind };
constexpr const char* kFaultNames[] = {"none", "raise", "root", "count", "kind"};
constexpr int kKinds = 17;
constexpr int kCircularShift = 14, kBarrier = 15;

// Whether a collective of this kind has a root (broadcast, reduce, scatter, gather, gatherv,
// scatterv) or a shift (circular_shift), which the root fault changes.
bool rooted(int kind) {
  return kind == 0 || kind == 1 || kind == 5 || kind == 6 || kind == 10 || kind == 11 ||
         kind == kCircularShift;
}

// One collective on g; `fault` changes this member's call. Returns false when the fault changes
// nothing the call depends on.
bool call(const hc::Group& g, int kind, std::size_t m, int root, Fault fault) {
  const int p = g.size();
  root %= p;
  bool matters = p > 1;
  if (fault == Fault::raise) throw std::runtime_error("injected fault");
  if (fault == Fault::root) {
    matters = matters && rooted(kind);
    root = (root + 1) % p;
  }
  if (fault == Fault::count) {
    m += 1 + m % 3;
    // A barrier has no count; a shift by 0 copies each member's own input and sends nothing.
    matters = matters && kind != kBarrier && !(kind == kCircularShift && root == 0);
  }
  if (fault == Fault::kind) kind = (kind + 1) % kKinds;
  const auto n = static_cast<std::size_t>(p);
  std::vector<double> in(m, g.rank()), out(m), blocks(m * n, 1.0), all(m * n);
  std::vector<std::size_t> counts(n);
  for (std::size_t j = 0; j < n; ++j) counts[j] = (m + j) % 4;
  if (fault == Fault::count) counts[0] += 1;
  std::size_t total = 0;
  for (const std::size_t c : counts) total += c;
  std::vector<double> mine(counts[static_cast<std::size_t>(g.rank())]), gathered(total);
  switch (kind) {
    case 0: hc::broadcast(g, in, root); break;
    case 1: hc::reduce(g, in, out, std::plus<>{}, root); break;
    case 2: hc::all_reduce(g, in, out, std::plus<>{}); break;
    case 3: hc::all_gather(g, in, all); break;
    case 4: hc::scan(g, in, out, std::plus<>{}); break;
    case 5: hc::scatter(g, blocks, out, root); break;
    case 6: hc::gather(g, in, all, root); break;
    case 7: hc::all_to_all(g, blocks, all); break;
    case 8: hc::reduce_scatter(g, blocks, out, std::plus<>{}); break;
    case 9: hc::all_gatherv(g, mine, gathered, counts); break;
    case 10: hc::gatherv(g, mine, gathered, counts, root); break;
    case 11: hc::scatterv(g, gathered, mine, counts, root); break;
    case 13: hc::exscan(g, in, out, std::plus<>{}); break;
    case kCircularShift: hc::circular_shift(g, in, out, root); break;
    case kBarrier: hc::barrier(g); break;
    case 16: hc::reduce_scatterv(g, gathered, mine, std::plus<>{}, counts); break;
    case 12: {
      const std::size_t k = m % 3;
      std::vector<std::size_t> send(n, k), recv(n, k);
      if (fault == Fault::count) send[static_cast<std::size_t>((g.rank() + 1) % p)] += 1;
      std::vector<double> sbuf(n * k + (fault == Fault::count ? 1 : 0)), rbuf(n * k);
      hc::all_to_allv(g, sbuf, send, rbuf, recv);
    }
  }
  return matters;
}

}  // namespace

TEST_CASE("a randomized fault search: every fault ends in its error, before the timeout") {
  // HCTEST_FAULT_SEEDS="first,count" runs other seeds (a longer search by hand).
  std::uint64_t first = 1, seeds = hctest::kSanitized ? 60 : 1000;
  if (const char* range = std::getenv("HCTEST_FAULT_SEEDS"))
    if (std::sscanf(range, "%" SCNu64 ",%" SCNu64, &first, &seeds) != 2)
      FAIL("HCTEST_FAULT_SEEDS is \"", range, "\"; expected first,count");
  std::map<std::string, int> outcomes;
  for (std::uint64_t seed = first; seed < first + seeds; ++seed) {
    std::mt19937_64 r(seed);
    hc::Topology t = hc::Topology::ring(2);
    switch (r() % 4) {
      case 0: t = hc::Topology::ring(2 + static_cast<int>(r() % 15)); break;
      case 1:
        t = hc::Topology::mesh(2 + static_cast<int>(r() % 3), 1 + static_cast<int>(r() % 4));
        break;
      case 2: t = hc::Topology::linear(2 + static_cast<int>(r() % 10)); break;
      default: t = hc::Topology::hypercube(1 + static_cast<int>(r() % 5)); break;
    }
    hc::Options opt = hctest::test_options();
    opt.meetings = r() % 4 != 0;
    opt.deadlock_timeout = std::chrono::seconds(5);
    const int calls = 3 + static_cast<int>(r() % 30);
    const int fault_at = static_cast<int>(r() % static_cast<std::uint64_t>(calls));
    const int fault_vp = static_cast<int>(r() % static_cast<std::uint64_t>(t.size()));
    const auto fault = static_cast<Fault>(1 + r() % 4);
    const std::uint64_t call_seed = r();
    const bool mesh = t.name().rfind("mesh", 0) == 0;
    bool matters = true;
    int fault_kind = -1;  // the collective the faulty VP was to call
    std::string outcome;
    bool by_watchdog = false;
    try {
      hc::run(
          t,
          [&](hc::Proc& vp) {
            std::mt19937_64 g(call_seed);  // every VP draws the same calls
            for (int k = 0; k < calls; ++k) {
              const int kind = static_cast<int>(g() % kKinds);
              const std::size_t m = g() % 5 == 0 ? 1 + g() % 5000 : 1 + g() % 8;
              const int root = static_cast<int>(g() % static_cast<std::uint64_t>(vp.size()));
              const int shape = static_cast<int>(g() % 3);
              hc::Group group = vp.world();
              if (shape == 1) group = hc::split(vp.world(), vp.id() % 2, vp.size() - vp.id());
              if (shape == 2 && mesh) group = vp.row();
              const bool faulty = k == fault_at && vp.id() == fault_vp;
              if (faulty) fault_kind = kind;
              const bool changed = call(group, kind, m, root, faulty ? fault : Fault::none);
              if (faulty && !changed) matters = false;
            }
          },
          opt);
      outcome = "completed";
    } catch (const hc::CollectiveMismatch& e) {
      outcome = "CollectiveMismatch";
      by_watchdog = std::string(e.what()).find("nothing delivered for") != std::string::npos;
    } catch (const hc::SizeMismatch&) {
      outcome = "SizeMismatch";
    } catch (const hc::Error& e) {
      outcome = std::string(typeid(e).name()) + ": " + e.what();
    } catch (const std::runtime_error& e) {
      outcome = std::string(e.what()).find("injected fault") != std::string::npos
                    ? "the VP's exception"
                    : e.what();
    }
    const std::string name = kFaultNames[static_cast<int>(fault)];
    ++outcomes[name + " -> " + outcome];
    CAPTURE(seed);
    CAPTURE(t.name());
    CAPTURE(opt.meetings);
    CAPTURE(name);
    CAPTURE(fault_at);
    CAPTURE(fault_vp);
    CAPTURE(fault_kind);
    CAPTURE(outcome);
    if (fault == Fault::raise)
      CHECK(outcome == "the VP's exception");
    else if (matters)
      CHECK((outcome == "CollectiveMismatch" || outcome == "SizeMismatch"));
    else
      CHECK(outcome == "completed");
    CHECK_FALSE(by_watchdog);
  }
  for (const auto& [what, runs] : outcomes) std::printf("%5d  %s\n", runs, what.c_str());
  std::fflush(stdout);
}
