// Fault injection: one chosen VP throws a chosen exception at a chosen point of a run of
// collectives, thousands of times on one Machine per topology. Every run must rethrow the
// original exception (its type and message), never hang, and leave the Machine able to run a
// verified collective at once. Injection points: before the first collective, between
// collectives, at a collective's entry (runtime/src/faults.hpp), at the n-th send or receive of a
// collective (after its first sends, before the receives its peers wait on), inside the user's
// reduction operator on the message path and in a shared-memory meeting, inside a value-form
// collective, and after a pause while every other VP is blocked. The time from the throw to
// run's return (the release) is printed as p50/p99/max.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "faults.hpp"  // runtime/src: the test-only fault hook
#include "support.hpp"

namespace hc = hypercomm;

namespace {

enum class Point : int {
  before_first,  // the body throws before its first collective
  between,       // after collective `call` returned
  entry,         // at the entry of collective `call` (the fault hook)
  message,       // before the `message`-th send or receive of collective `call` (the fault hook)
  op_messages,   // in the user's operator, collective `call` sent as messages
  op_meeting,    // in the user's operator, collective `call` as a meeting (value form)
  value_form,    // at the entry of a value-form collective
  while_blocked  // after a pause that leaves every other VP blocked in collective `call`
};
constexpr int kPoints = 8;
const char* const kPointNames[kPoints] = {"before first", "between",      "entry",
                                          "message",      "op/messages",  "op/meeting",
                                          "value form",   "while blocked"};

struct Boom : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NotAnError {  // not even a std::exception
  int vp;
};

// The injection of the next run: written by the test thread before Machine::run, which
// publishes it to the VP threads.
struct Plan {
  Point point = Point::before_first;
  int vp = -1;
  int call = 1;     // collectives numbered from 1 in the body
  int message = 1;  // Point::message
  int type = 0;     // which exception
};
Plan plan;
std::atomic<std::int64_t> thrown_at{0};  // steady_clock ticks of the throw
constexpr int kCalls = 6;                // collectives per body
constexpr int kPoison = 1 << 20;         // op_meeting: the value whose combine throws
thread_local int current_vp = -1;
thread_local int current_call = 0;

[[noreturn]] void raise(int vp) {
  thrown_at.store(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::string what = "injected on VP " + std::to_string(vp);
  switch (plan.type) {
    case 0: throw Boom(what);
    case 1: throw std::out_of_range(what);
    case 2: throw std::bad_alloc();
    default: throw NotAnError{vp};
  }
}

// The user's operator: throws on the target's thread (op_messages) or when it combines the
// target's poisoned value (op_meeting, where the last VP to arrive combines every input).
struct FaultyPlus {
  int operator()(int a, int b) const {
    if (plan.point == Point::op_messages && current_vp == plan.vp && current_call == plan.call)
      raise(current_vp);
    if (plan.point == Point::op_meeting && (a >= kPoison || b >= kPoison)) raise(plan.vp);
    return a + b;
  }
};

void hook(hc::detail::FaultSite& site) {
  if (site.vp.id() != plan.vp || current_call != plan.call) return;
  if (site.point == hc::detail::FaultPoint::call_entry) {
    if (plan.point == Point::entry || plan.point == Point::value_form) raise(site.vp.id());
    if (plan.point == Point::message) site.watch_messages = true;
  } else if (plan.point == Point::message && site.message == plan.message) {
    raise(site.vp.id());
  }
}

// Collective number k of the body: a mix of shapes, message sizes and forms.
void collective(hc::Proc& vp, int k) {
  const int p = vp.size();
  current_call = k;
  const bool target = vp.id() == plan.vp && k == plan.call;
  switch (k) {
    case 1: {  // a large all_reduce: messages, never a meeting
      std::vector<int> in(2048, 1), out(2048);
      hc::all_reduce(vp, in, out, FaultyPlus{});
      break;
    }
    case 2: {
      std::vector<int> buf(256, vp.id());
      hc::broadcast(vp, buf, p - 1);
      break;
    }
    case 3: {  // value form, small: a meeting when VPs outnumber cores
      const int mine = target && plan.point == Point::op_meeting ? kPoison : 1;
      (void)hc::all_reduce(vp, mine, FaultyPlus{});
      break;
    }
    case 4: hc::barrier(vp); break;
    case 5: {
      std::vector<int> in(static_cast<std::size_t>(p) * 64, vp.id()), out(in.size());
      hc::all_to_all(vp, in, out);
      break;
    }
    default: (void)hc::broadcast(vp, vp.id(), 0); break;  // value form
  }
}

void body(hc::Proc& vp) {
  current_vp = vp.id();
  current_call = 0;
  const bool target = vp.id() == plan.vp;
  if (target && plan.point == Point::before_first) raise(vp.id());
  for (int k = 1; k <= kCalls; ++k) {
    if (target && k == plan.call && plan.point == Point::while_blocked) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      raise(vp.id());
    }
    collective(vp, k);
    if (target && k == plan.call && plan.point == Point::between) raise(vp.id());
  }
}

// Which call a point may use: op_messages needs call 1, op_meeting call 3, value_form a value
// form (3 or 6).
int call_for(Point point, std::mt19937& rng) {
  switch (point) {
    case Point::op_messages: return 1;
    case Point::op_meeting: return 3;
    case Point::value_form: return rng() % 2 == 0 ? 3 : 6;
    default: return 1 + static_cast<int>(rng() % kCalls);
  }
}

struct Tally {
  int injections = 0;
  int wrong = 0;  // another exception, or none
  int hangs = 0;  // a run slower than the hang bound
  int verified = 0;
  std::vector<double> release;  // seconds from the throw to run's return
};

enum class Outcome { none, planned, other };

// What run rethrew: the planned exception, another, or none.
Outcome run_planned(hc::Machine& machine, std::string& other) {
  const std::string what = "injected on VP " + std::to_string(plan.vp);
  auto planned = [](bool yes) { return yes ? Outcome::planned : Outcome::other; };
  try {
    machine.run(body);
  } catch (const Boom& e) {
    return planned(plan.type == 0 && e.what() == what);
  } catch (const std::out_of_range& e) {
    // A <stdexcept> type comes back led by the name of the VP whose call threw it (a meeting's
    // fold may run the operator on another VP's thread than the target's).
    const std::string_view got = e.what();
    return planned(plan.type == 1 && got.starts_with("VP ") && got.ends_with(": " + what));
  } catch (const std::bad_alloc&) {
    return planned(plan.type == 2);
  } catch (const NotAnError& e) {
    return planned(plan.type == 3 && e.vp == plan.vp);
  } catch (const std::exception& e) {
    other = e.what();
    return Outcome::other;
  }
  return Outcome::none;
}

void inject(hc::Machine& machine, int count, std::mt19937& rng, Tally& tally,
            std::vector<int>& per_point) {
  const int p = machine.topology().size();
  for (int i = 0; i < count; ++i) {
    plan = Plan{};
    plan.point = static_cast<Point>(i % kPoints);
    plan.vp = static_cast<int>(rng() % static_cast<unsigned>(p));
    plan.call = call_for(plan.point, rng);
    plan.message = 1 + static_cast<int>(rng() % 3);
    plan.type = static_cast<int>(rng() % 4);
    thrown_at.store(0);
    const auto start = std::chrono::steady_clock::now();
    std::string other;
    const Outcome outcome = run_planned(machine, other);
    const auto end = std::chrono::steady_clock::now();
    const std::int64_t thrown = thrown_at.load();
    const bool raised = thrown != 0;
    // The message point fires only when the call has that many messages on the target (a VP
    // may send and receive once in a small call); the op/meeting point only when the call met.
    if (!raised && outcome == Outcome::none &&
        (plan.point == Point::message || plan.point == Point::op_meeting ||
         plan.point == Point::op_messages)) {
      ++tally.verified;  // the run completed correctly: nothing was injected
      continue;
    }
    ++tally.injections;
    ++per_point[static_cast<std::size_t>(plan.point)];
    if (outcome != Outcome::planned) {
      ++tally.wrong;
      MESSAGE("wrong outcome: " << machine.topology().name() << " point "
                                << kPointNames[static_cast<int>(plan.point)] << " vp " << plan.vp
                                << " call " << plan.call << " type " << plan.type << ": "
                                << (outcome == Outcome::none ? "no exception" : other));
    }
    if (end - start > std::chrono::seconds(5)) ++tally.hangs;
    if (raised)
      tally.release.push_back(
          std::chrono::duration<double>(end - std::chrono::steady_clock::time_point(
                                                  std::chrono::steady_clock::duration(thrown)))
              .count());
    // The same Machine at once runs a verified collective.
    if (i % 4 == 0) {
      plan = Plan{};
      std::vector<long> sums(static_cast<std::size_t>(p));
      machine.run([&](hc::Proc& vp) {
        sums[static_cast<std::size_t>(vp.id())] = hc::all_reduce(vp, long{vp.id()}, std::plus<>{});
      });
      const long want = static_cast<long>(p) * (p - 1) / 2;
      const bool good = std::all_of(sums.begin(), sums.end(), [&](long s) { return s == want; });
      CHECK(good);
      tally.verified += good ? 1 : 0;
    }
  }
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

TEST_CASE("injected faults surface from run as themselves, at once, and the Machine runs on") {
  hc::detail::set_fault_hook(&hook);
  struct Reset {
    ~Reset() { hc::detail::set_fault_hook(nullptr); }
  } reset;
  const int per_topology = hctest::kSanitized ? 40 : 400;
  std::mt19937 rng(20240607);
  Tally tally;
  std::vector<int> per_point(kPoints, 0);
  const auto start = std::chrono::steady_clock::now();
  for (const char* topology :
       {"ring:8", "ring:64", "mesh:4x4", "mesh:8x8", "hypercube:3", "hypercube:6"}) {
    hc::Options o;
    o.pinning = hc::Pinning::none;
    o.deadlock_timeout = std::chrono::seconds(10);
    hc::Machine machine(hc::Topology::parse(topology), o);
    inject(machine, per_topology, rng, tally, per_point);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fault injection: %d injections (", tally.injections);
  for (int k = 0; k < kPoints; ++k)
    std::printf("%s%s %d", k == 0 ? "" : ", ", kPointNames[k],
                per_point[static_cast<std::size_t>(k)]);
  std::printf("), %d wrong, %d hangs, %d verified runs, %.1f s\n", tally.wrong, tally.hangs,
              tally.verified, seconds);
  std::printf("release (throw -> run returns): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
              percentile(tally.release, 0.5) * 1e3, percentile(tally.release, 0.99) * 1e3,
              percentile(tally.release, 1.0) * 1e3);
  std::fflush(stdout);
  CHECK(tally.injections >= (hctest::kSanitized ? 150 : 2000));
  CHECK(tally.wrong == 0);
  CHECK(tally.hangs == 0);
  for (int k = 0; k < kPoints; ++k) CHECK(per_point[static_cast<std::size_t>(k)] > 0);
}
