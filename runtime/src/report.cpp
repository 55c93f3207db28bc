// Report::write_chrome_trace: Chrome/Perfetto trace JSON ("X" complete events), one track per VP,
// wall time as process 0 and model time as process 1.
#include <hypercomm/errors.hpp>
#include <hypercomm/report.hpp>

#include <fstream>
#include <set>

namespace hypercomm {

namespace {

const char* kind_name(Event::Kind k) noexcept {
  switch (k) {
    case Event::Kind::send: return "send";
    case Event::Kind::recv: return "recv";
    case Event::Kind::sendrecv: return "sendrecv";
    case Event::Kind::collective: return "collective";
    case Event::Kind::wait: return "wait";
  }
  return "event";
}

void write_event(std::ofstream& out, const Event& e, int pid, double begin, double end,
                 bool& first) {
  out << (first ? "\n" : ",\n") << R"({"name":")" << e.name << R"(","cat":")"
      << kind_name(e.kind) << R"(","ph":"X","pid":)" << pid << R"(,"tid":)" << e.vp
      << R"(,"ts":)" << begin * 1e6 << R"(,"dur":)" << (end - begin) * 1e6
      << R"(,"args":{"peer":)" << e.peer << R"(,"bytes":)" << e.bytes << R"(,"algorithm":")"
      << e.algo << R"("}})";
  first = false;
}

}  // namespace

void Report::write_chrome_trace(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw Error("write_chrome_trace: cannot open '" + path + "' for writing");
  out.precision(15);
  out << R"({"displayTimeUnit":"ns","traceEvents":[)";
  bool first = true;
  std::set<int> vps;
  for (const Event& e : events) vps.insert(e.vp);
  for (int pid : {0, 1}) {
    out << (first ? "\n" : ",\n") << R"({"name":"process_name","ph":"M","pid":)" << pid
        << R"(,"args":{"name":")" << (pid == 0 ? "wall time (us)" : "model time (units x 1e6)")
        << R"("}})";
    first = false;
    for (int vp : vps)
      out << ",\n"
          << R"({"name":"thread_name","ph":"M","pid":)" << pid << R"(,"tid":)" << vp
          << R"(,"args":{"name":"VP )" << vp << R"("}})";
  }
  for (const Event& e : events) write_event(out, e, 0, e.wall_begin, e.wall_end, first);
  for (const Event& e : events) write_event(out, e, 1, e.model_begin, e.model_end, first);
  out << "\n]}\n";
  if (!out) throw Error("write_chrome_trace: writing '" + path + "' failed");
}

}  // namespace hypercomm
