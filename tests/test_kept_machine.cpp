// hypercomm::run keeps its last machine for the next run of the same topology and options
// (runtime/src/machine.cpp, KeptMachine): every run must behave as on a fresh machine, whatever
// ran before it, failed, ran beside it, forked or nested.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace hc = hypercomm;

namespace {

// Every VP's all-reduce of its id, checked; the number of VPs that ran.
int checked_sum(const hc::Topology& t, const hc::Options& o = {}) {
  std::atomic<int> ran{0}, wrong{0};
  (void)hc::run(
      t,
      [&](hc::Proc& vp) {
        const int p = vp.size();
        if (hc::all_reduce(vp, vp.id(), std::plus<>{}) != p * (p - 1) / 2) ++wrong;
        ++ran;
      },
      o);
  CHECK(wrong == 0);
  return ran;
}

}  // namespace

TEST_CASE("run after run: the same topology and options, again and again") {
  const hc::Topology t = hc::Topology::hypercube(3);
  for (int i = 0; i < 50; ++i) REQUIRE(checked_sum(t) == 8);
  // A different shape between, and back.
  for (const char* name : {"ring:5", "hypercube:3", "mesh:2x3", "hypercube:3", "linear:1"})
    CHECK(checked_sum(hc::Topology::parse(name)) == hc::Topology::parse(name).size());
}

TEST_CASE("run after run honours each run's options") {
  const hc::Topology t = hc::Topology::ring(6);
  const auto body = [](hc::Proc& vp) {
    std::vector<int> one{vp.id()}, got(1);
    vp.send((vp.id() + 2) % vp.size(), one);  // not a neighbour: routed, or LinkError if strict
    vp.recv((vp.id() + vp.size() - 2) % vp.size(), got);
  };
  hc::Options routed;
  routed.model = {.ts = 1.0, .tw = 0.0, .th = 0.5};
  const hc::Report a = hc::run(t, body, routed);
  CHECK(a.model_time == doctest::Approx(2.0));  // ts + 2 hops * th
  hc::Options slower = routed;
  slower.model.ts = 3.0;
  CHECK(hc::run(t, body, slower).model_time == doctest::Approx(4.0));
  hc::Options strict = routed;
  strict.links = hc::Links::strict;
  CHECK_THROWS_AS(hc::run(t, body, strict), hc::LinkError);
  CHECK(hc::run(t, body, routed).model_time == doctest::Approx(2.0));
  hc::Options traced = routed;
  traced.trace = true;
  CHECK(!hc::run(t, body, traced).events.empty());
  CHECK(hc::run(t, body, routed).events.empty());
  hc::Options patient = routed;
  patient.deadlock_timeout = std::chrono::milliseconds(200);
  CHECK_THROWS_AS(hc::run(
                      t,
                      [](hc::Proc& vp) {
                        std::vector<int> x(1);
                        vp.recv((vp.id() + 1) % vp.size(), x);
                      },
                      patient),
                  hc::Deadlock);
  hc::Options bad = routed;
  bad.model.tw = -1;
  CHECK_THROWS_AS(hc::run(t, body, bad), hc::Error);
  CHECK(hc::run(t, body, routed).model_time == doctest::Approx(2.0));
}

TEST_CASE("a run that fails leaves the next run whole") {
  const hc::Topology t = hc::Topology::hypercube(2);
  for (int i = 0; i < 5; ++i) {
    CHECK_THROWS_AS(hc::run(t,
                            [](hc::Proc& vp) {
                              if (vp.id() == 2) throw std::runtime_error("VP 2 gives up");
                              hc::barrier(vp);
                            }),
                    std::runtime_error);
    // A message no VP received ends with its run: the next run's receive takes its own.
    (void)hc::run(t, [](hc::Proc& vp) {
      std::vector<int> x{7};
      if (vp.id() == 0) vp.send(1, x);
    });
    CHECK(checked_sum(t) == 4);
    int got = -1;
    (void)hc::run(t, [&](hc::Proc& vp) {
      std::vector<int> x{vp.id() + 10}, in(1);
      if (vp.id() == 0) vp.send(1, x);
      if (vp.id() == 1) {
        vp.recv(0, in);
        got = in[0];
      }
    });
    CHECK(got == 10);
  }
}

TEST_CASE("runs from several threads at once, and a run inside a run") {
  const hc::Topology t = hc::Topology::ring(4);
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      for (int i = 0; i < 20; ++i) total += checked_sum(t);
    });
  for (auto& caller : callers) caller.join();
  CHECK(total == 3 * 20 * 4);

  std::atomic<int> inner{0};
  (void)hc::run(t, [&](hc::Proc& vp) {
    if (vp.id() == 0) inner += checked_sum(t);  // the outer run holds its machine
    hc::barrier(vp);
  });
  CHECK(inner == 4);
  CHECK(checked_sum(t) == 4);
}

TEST_CASE("one Machine run from two threads at once, or from its own VP, throws Error") {
  hc::Machine machine(hc::Topology::ring(2));
  // From one of its own VPs: it would wait for itself.
  std::atomic<int> refused{0};
  CHECK_THROWS_AS(machine.run([&](hc::Proc& vp) {
    if (vp.id() == 0) try {
        (void)machine.run([](hc::Proc&) {});
      } catch (const hc::Error& e) {
        refused += std::string(e.what()).find("one body at a time") != std::string::npos;
        throw;
      }
  }),
                  hc::Error);
  CHECK(refused == 1);
  // From another thread while a body runs (the first run's VP waits for the second's refusal).
  std::atomic<bool> started{false}, tried{false};
  std::thread second([&] {
    while (!started) std::this_thread::yield();
    CHECK_THROWS_AS((void)machine.run([](hc::Proc&) {}), hc::Error);
    tried = true;
  });
  (void)machine.run([&](hc::Proc& vp) {
    if (vp.id() != 0) return;
    started = true;
    while (!tried) std::this_thread::yield();
  });
  second.join();
  // And it runs on.
  std::atomic<int> sum{0};
  (void)machine.run([&](hc::Proc& vp) { sum += hc::all_reduce(vp, vp.id() + 1, std::plus<>()); });
  CHECK(sum == 6);
}

// ThreadSanitizer does not run threads started after a multi-threaded process forks.
#if !defined(__SANITIZE_THREAD__)
TEST_CASE("a child process runs on its own machine after fork") {
  const hc::Topology t = hc::Topology::hypercube(2);
  REQUIRE(checked_sum(t) == 4);  // the parent keeps a machine of this shape
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The kept machine's threads are the parent's: a run on them would never start.
    ::alarm(120);  // a hang here fails the test rather than the suite's time limit
    int sum = -1;
    (void)hc::run(t, [&](hc::Proc& vp) {
      const int s = hc::all_reduce(vp, vp.id(), std::plus<>{});
      if (vp.id() == 0) sum = s;
    });
    ::_exit(sum == 6 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(checked_sum(t) == 4);
}
#endif
