// Report::write_chrome_trace, read back with nlohmann-json: a track per VP in the wall-time and
// the model-time process, one span per VP per collective call, sends and receives nested in
// their collective, model timestamps equal to the events' model times, and a flow arrow from
// each send to its receive.
#include <doctest/doctest.h>

#include <hypercomm/hypercomm.hpp>

#include "support.hpp"

#if __has_include(<nlohmann/json.hpp>)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace hc = hypercomm;
using nlohmann::json;

namespace {

constexpr int kWallPid = 1;
constexpr int kModelPid = 2;

std::int64_t ns_of_us(const json& v) { return std::llround(v.get<double>() * 1000.0); }
std::int64_t ns_of_s(double seconds) { return std::llround(seconds * 1e9); }

json write_and_parse(const hc::Report& r, const std::string& path) {
  r.write_chrome_trace(path);
  std::ifstream in(path);
  REQUIRE(in.good());
  json doc = json::parse(in);  // throws on invalid JSON
  std::remove(path.c_str());
  return doc;
}

struct Slice {
  std::string name, cat;
  std::int64_t b, e;
  json args;
};

// (pid, tid) -> the complete events of that track, in file order.
std::map<std::pair<int, int>, std::vector<Slice>> tracks_of(const json& doc) {
  std::map<std::pair<int, int>, std::vector<Slice>> tracks;
  for (const json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "X") continue;
    const std::int64_t b = ns_of_us(ev.at("ts"));
    tracks[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}].push_back(
        {ev.at("name"), ev.at("cat"), b, b + ns_of_us(ev.at("dur")), ev.at("args")});
  }
  return tracks;
}

// Each VP calls these collectives, in this order.
const std::vector<std::string> kCalls = {"all_gather", "broadcast", "all_reduce", "scan",
                                         "barrier"};

hc::Report traced_run(const hc::Topology& t) {
  hc::Options o = hctest::test_options();
  o.trace = true;
  return hc::run(
      t,
      [](hc::Proc& vp) {
        const int p = vp.size();
        std::vector<int> in{vp.id()}, out(static_cast<std::size_t>(p));
        hc::all_gather(vp, in, out, hc::Algo::ring);
        std::vector<double> buf(3, vp.id() == 0 ? 1.5 : 0.0);
        hc::broadcast(vp, buf, 0);
        (void)hc::all_reduce(vp, vp.id(), std::plus<>{});
        (void)hc::scan(vp, vp.id() + 1, std::plus<>{});
        hc::barrier(vp);
      },
      o);
}

void check_trace(const hc::Topology& t) {
  CAPTURE(t.name());
  const hc::Report r = traced_run(t);
  const json doc = write_and_parse(r, "test_trace_" + std::to_string(t.size()) + ".json");
  const int p = t.size();
  CHECK(doc.at("otherData").at("topology") == t.name());

  // Metadata: both processes named, a named track per VP in each.
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  for (const json& ev : doc.at("traceEvents")) {
    if (ev.at("ph") != "M") continue;
    if (ev.at("name") == "process_name") processes[ev.at("pid")] = ev.at("args").at("name");
    if (ev.at("name") == "thread_name")
      threads[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}] = ev.at("args").at("name");
  }
  CHECK(processes.at(kWallPid) == "wall time");
  CHECK(processes.at(kModelPid).starts_with("model time"));
  CHECK(threads.size() == static_cast<std::size_t>(2 * p));
  for (int pid : {kWallPid, kModelPid})
    for (int vp = 0; vp < p; ++vp) CHECK(threads[{pid, vp + 1}] == "VP " + std::to_string(vp));

  // Every traced event appears once in each process with its own times (model: x 1e6 us).
  using Key = std::tuple<int, std::string, std::int64_t, std::int64_t>;
  std::multiset<Key> want_wall, want_model, got_wall, got_model;
  for (const hc::Event& e : r.events) {
    want_wall.insert({e.vp + 1, e.name, ns_of_s(e.wall_begin), ns_of_s(e.wall_end)});
    want_model.insert({e.vp + 1, e.name, ns_of_s(e.model_begin), ns_of_s(e.model_end)});
  }
  const auto tracks = tracks_of(doc);
  for (const auto& [track, slices] : tracks)
    for (const Slice& s : slices)
      (track.first == kWallPid ? got_wall : got_model).insert({track.second, s.name, s.b, s.e});
  CHECK(got_wall == want_wall);
  CHECK(got_model == want_model);

  for (const auto& entry : tracks) {
    // Not bound in the for: Clang before 16 cannot capture a structured binding.
    const auto& track = entry.first;
    const auto& slices = entry.second;
    CAPTURE(track.first);
    CAPTURE(track.second);
    std::vector<const Slice*> calls;
    for (const Slice& s : slices) {
      CHECK(s.e >= s.b);
      if (s.cat == "collective") calls.push_back(&s);
    }
    // One span per collective call, in order, with its algorithm and size.
    REQUIRE(calls.size() == kCalls.size());
    for (std::size_t k = 0; k < calls.size(); ++k) {
      CHECK(calls[k]->name == kCalls[k]);
      const std::string algo = calls[k]->args.at("algorithm");
      CHECK(!algo.empty());
      CHECK(algo != "automatic");
      if (k > 0) CHECK(calls[k]->b >= calls[k - 1]->e);
    }
    CHECK(calls[0]->args.at("algorithm") == "ring");
    CHECK(calls[0]->args.at("bytes") == sizeof(int));
    CHECK(calls[1]->args.at("bytes") == 3 * sizeof(double));
    // Every transfer and wait lies inside a collective span (all of them happen in one); one
    // of zero length may touch two, where one call ends and the next begins.
    for (const Slice& s : slices) {
      if (s.cat == "collective") continue;
      CAPTURE(s.name);
      int inside = 0;
      for (const Slice* c : calls) inside += c->b <= s.b && s.e <= c->e;
      CHECK(inside >= 1);
      if (s.e > s.b) CHECK(inside == 1);
    }
  }
  // And the span of each call matches the collective event on each VP in name and algorithm.
  for (const hc::Event& e : r.events) {
    if (e.kind != hc::Event::Kind::collective) continue;
    bool found = false;
    for (const Slice& s : tracks.at({kModelPid, e.vp + 1}))
      found |= s.cat == "collective" && s.name == e.name && s.args.at("algorithm") == e.algo &&
               s.args.at("bytes") == e.bytes && s.b == ns_of_s(e.model_begin);
    CHECK(found);
  }

  // Flow arrows: one per message in each process, from a slice that sends to the receiver to a
  // slice that receives from the sender.
  std::map<std::pair<int, long>, std::vector<json>> flows;  // (pid, id) -> its s and f
  for (const json& ev : doc.at("traceEvents"))
    if (ev.at("ph") == "s" || ev.at("ph") == "f")
      flows[{ev.at("pid").get<int>(), ev.at("id").get<long>()}].push_back(ev);
  CHECK(flows.size() == 2 * r.messages);
  auto innermost = [&](int pid, int tid, std::int64_t ts) -> const Slice* {
    const Slice* best = nullptr;
    for (const Slice& s : tracks.at({pid, tid}))
      if (s.b <= ts && ts <= s.e && s.cat != "collective" && s.cat != "wait") best = &s;
    return best;
  };
  for (const auto& [key, pair] : flows) {
    REQUIRE(pair.size() == 2);
    const json& s = pair[0].at("ph") == "s" ? pair[0] : pair[1];
    const json& f = pair[0].at("ph") == "s" ? pair[1] : pair[0];
    CHECK(f.at("bp") == "e");
    const int src = s.at("tid").get<int>() - 1, dst = f.at("tid").get<int>() - 1;
    CHECK(src != dst);
    if (key.first == kWallPid) CHECK(ns_of_us(s.at("ts")) <= ns_of_us(f.at("ts")));
    const Slice* from = innermost(key.first, src + 1, ns_of_us(s.at("ts")));
    const Slice* to = innermost(key.first, dst + 1, ns_of_us(f.at("ts")));
    REQUIRE(from != nullptr);
    REQUIRE(to != nullptr);
    CHECK((from->cat == "send" || from->cat == "sendrecv"));
    CHECK((to->cat == "recv" || to->cat == "sendrecv"));
    CHECK(from->args.at("to") == dst);
    CHECK(to->args.at("from") == src);
  }
}

}  // namespace

TEST_CASE("the Chrome trace of traced collectives on a ring, a mesh and a hypercube") {
  for (const char* name : {"ring:4", "mesh:2x2", "hypercube:3"})
    check_trace(hc::Topology::parse(name));
}

TEST_CASE("sends and receives of a shift are joined in FIFO order per pair") {
  hc::Options o = hctest::test_options();
  o.trace = true;
  const auto r = hc::run(
      hc::Topology::ring(3),
      [](hc::Proc& vp) {
        const int right = (vp.id() + 1) % 3, left = (vp.id() + 2) % 3;
        std::vector<int> a{1}, b(1), c{2, 3}, d(2);
        vp.send(right, a);
        vp.sendrecv(right, c, left,
                    b);  // the outgoing side goes right, the incoming comes from left
        vp.recv(left, d);
      },
      o);
  const json doc = write_and_parse(r, "test_trace_shift.json");
  std::map<long, std::vector<json>> flows;
  for (const json& ev : doc.at("traceEvents"))
    if ((ev.at("ph") == "s" || ev.at("ph") == "f") && ev.at("pid") == kWallPid)
      flows[ev.at("id").get<long>()].push_back(ev);
  REQUIRE(flows.size() == 6);
  const auto tracks = tracks_of(doc);
  for (const auto& [id, pair] : flows) {
    REQUIRE(pair.size() == 2);
    const json& s = pair[0].at("ph") == "s" ? pair[0] : pair[1];
    const json& f = pair[0].at("ph") == "s" ? pair[1] : pair[0];
    const int src = s.at("tid").get<int>() - 1, dst = f.at("tid").get<int>() - 1;
    CHECK(dst == (src + 1) % 3);
    // The first message from a VP (its send) ends in the first receive from it (the sendrecv),
    // the second (the sendrecv's outgoing side) in the plain recv: FIFO order per pair.
    std::string from_cat, to_cat;
    for (const Slice& sl : tracks.at({kWallPid, src + 1}))
      if (sl.b <= ns_of_us(s.at("ts")) && ns_of_us(s.at("ts")) <= sl.e && sl.cat != "wait")
        from_cat = sl.cat;
    for (const Slice& sl : tracks.at({kWallPid, dst + 1}))
      if (sl.b <= ns_of_us(f.at("ts")) && ns_of_us(f.at("ts")) <= sl.e && sl.cat != "wait")
        to_cat = sl.cat;
    CHECK(((from_cat == "send" && to_cat == "sendrecv") ||
           (from_cat == "sendrecv" && to_cat == "recv")));
  }
}

TEST_CASE("names are escaped, children are clamped into parents, bad paths throw") {
  hc::Report r;
  r.topology = "ring:2";
  r.clocks = {1.0, 1.0};
  hc::Event call;
  call.kind = hc::Event::Kind::collective;
  call.name = "odd \"name\"\\\n\t\x01";
  call.algo = "ring";
  call.wall_begin = 1e-6;
  call.wall_end = 2e-6;
  call.model_end = 1.0;
  hc::Event send;
  send.kind = hc::Event::Kind::send;
  send.name = "send";
  send.peer = 1;
  send.wall_begin = 1.5e-6;
  send.wall_end = 1.9e-6;
  send.model_begin = 0.5;
  send.model_end = 1.5;  // past its collective's end: clamped to it
  r.events = {call, send};
  const json doc = write_and_parse(r, "test_trace_escape.json");
  const auto tracks = tracks_of(doc);
  const auto& model = tracks.at({kModelPid, 1});
  REQUIRE(model.size() == 2);
  CHECK(model[0].name == call.name);
  CHECK(model[1].b == 500'000'000);
  CHECK(model[1].e == 1'000'000'000);
  CHECK(tracks.count({kWallPid, 2}) == 0);
  CHECK_THROWS_AS(r.write_chrome_trace("/nonexistent-dir/trace.json"), hc::Error);
}

#else
TEST_CASE("the Chrome trace tests need nlohmann-json (Debian nlohmann-json3-dev)") {}
#endif
