// What the meeting tests share (test_meeting.cpp, test_prefix_meeting.cpp): a meeting must be
// indistinguishable from the messages it stands in for, so each case runs twice, recorded
// (messages) and not (a meeting where VPs outnumber cores), and compares the two.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <hypercomm/hypercomm.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pinning.hpp"
#include "support.hpp"

namespace hctest {

// Whether a machine of p VPs holds meetings (Fabric: more VPs than allowed cores).
inline bool meets(int p) {
  return static_cast<std::size_t>(p) > hypercomm::detail::allowed_cpus().size();
}

// Values whose double sum depends on the order of the additions.
inline double tricky(int vp, std::size_t k) {
  const double big = std::ldexp(1.0, 53 + static_cast<int>(k % 3));
  return (vp % 3 == 0 ? big : vp % 3 == 1 ? -big : 1.0) + 0.1 * vp + static_cast<double>(k);
}

// Every VP's results, byte for byte, and the run's report.
struct MeetingResults {
  std::vector<std::vector<std::byte>> per_vp;
  hypercomm::Report report;
};

// Runs body(vp, keep) on t, where keep(values) appends the bytes of values (a vector) to the VP's
// results.
template <class Body>
MeetingResults run_keeping(const hypercomm::Topology& t, const hypercomm::Options& o, Body&& body) {
  MeetingResults r;
  r.per_vp.resize(static_cast<std::size_t>(t.size()));
  r.report = hypercomm::run(
      t,
      [&](hypercomm::Proc& vp) {
        std::vector<std::byte>& mine = r.per_vp[static_cast<std::size_t>(vp.id())];
        auto keep = [&mine](const auto& values) {
          const auto bytes = std::as_bytes(std::span(values));
          mine.insert(mine.end(), bytes.begin(), bytes.end());
        };
        body(vp, keep);
      },
      o);
  return r;
}

// Runs step(vp, i) for i in [0, iterations) on every VP of t, each VP yielding its core before
// the iterations where (i + its id) % yield_every == 0 (so that every VP arrives first and last
// now and then); step returns how many results it found wrong. CHECKs that none was.
template <class Step>
void check_loop(const hypercomm::Topology& t, long iterations, long yield_every, Step&& step) {
  std::vector<long> wrong(static_cast<std::size_t>(t.size()), 0);
  hypercomm::run(
      t,
      [&](hypercomm::Proc& vp) {
        long& bad = wrong[static_cast<std::size_t>(vp.id())];
        for (long i = 0; i < iterations; ++i) {
          if ((i + vp.id()) % yield_every == 0) std::this_thread::yield();
          bad += step(vp, i);
        }
      },
      test_options());
  for (long w : wrong) CHECK(w == 0);
}

inline void check_same(const MeetingResults& messages, const MeetingResults& meeting) {
  CHECK(meeting.per_vp == messages.per_vp);
  CHECK(meeting.report.clocks == messages.report.clocks);
  CHECK(meeting.report.model_time == messages.report.model_time);
  CHECK(meeting.report.messages == messages.report.messages);
  CHECK(meeting.report.bytes == messages.report.bytes);
  CHECK(meeting.report.link_traffic.size() == messages.report.link_traffic.size());
  for (const auto& entry : messages.report.link_traffic) {
    // Not bound in the for: Clang before 16 cannot capture a structured binding.
    const auto& link = entry.first;
    const auto& stats = entry.second;
    CAPTURE(link.first);
    CAPTURE(link.second);
    const auto it = meeting.report.link_traffic.find(link);
    REQUIRE(it != meeting.report.link_traffic.end());
    CHECK(it->second.messages == stats.messages);
    CHECK(it->second.bytes == stats.bytes);
  }
}

inline hypercomm::Options model_options() {
  hypercomm::Options o = test_options();
  o.model = hypercomm::CostModel{3.25, 0.125, 0.5};  // th > 0: routed rounds cost their hops
  return o;
}

// Runs body with a watchdog too slow to matter: the disagreement must be found by the meeting
// and message checks themselves. Returns the error's text.
inline std::string mismatch_text(const hypercomm::Topology& t,
                                 const std::function<void(hypercomm::Proc&)>& body) {
  hypercomm::Options o = test_options();
  o.deadlock_timeout = std::chrono::seconds(60);
  try {
    hypercomm::run(t, body, o);
  } catch (const hypercomm::CollectiveMismatch& e) {
    return e.what();
  }
  FAIL("no CollectiveMismatch");
  return {};
}

}  // namespace hctest
