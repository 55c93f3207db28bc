#include "report_wire.hpp"

#include <algorithm>
#include <cstring>
#include <hypercomm/errors.hpp>
#include <mutex>
#include <set>
#include <string_view>
#include <type_traits>

namespace hypercomm::mpi::detail {

namespace {

class Writer {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  void put_string(std::string_view s) {
    put(static_cast<std::uint64_t>(s.size()));
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    bytes_.insert(bytes_.end(), p, p + s.size());
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::string get_string() {
    const auto size = static_cast<std::size_t>(get<std::uint64_t>());
    need(size);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + at_), size);
    at_ += size;
    return s;
  }

 private:
  void need(std::size_t n) const {
    if (bytes_.size() - at_ < n)
      throw Error("hypercomm::mpi: a process's report is cut short (" +
                  std::to_string(bytes_.size()) + " bytes)");
  }
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

// Event names and algorithms are static strings of the process that wrote them: the others keep
// a copy for as long as the program runs.
const char* interned(const std::string& s) {
  static std::mutex mutex;
  static std::set<std::string> strings;
  const std::lock_guard lock(mutex);
  return strings.insert(s).first->c_str();
}

}  // namespace

std::vector<std::byte> encode(const ReportPart& part) {
  Writer w;
  const Report& r = part.report;
  w.put(static_cast<std::uint8_t>(part.failed));
  w.put_string(part.error);
  w.put_string(part.problem);
  w.put(r.wall_seconds);
  w.put(r.model_time);
  w.put(r.messages);
  w.put(r.bytes);
  w.put(static_cast<std::uint64_t>(r.clocks.size()));
  for (const double c : r.clocks) w.put(c);
  w.put(static_cast<std::uint64_t>(r.link_traffic.size()));
  for (const auto& [link, stats] : r.link_traffic) {
    w.put(link.first);
    w.put(link.second);
    w.put(stats);
  }
  w.put(static_cast<std::uint64_t>(r.operations.size()));
  for (const auto& ops : r.operations) {
    w.put(static_cast<std::uint64_t>(ops.size()));
    for (const CommOp& op : ops) w.put(op);
  }
  w.put(static_cast<std::uint64_t>(r.events.size()));
  for (const Event& e : r.events) {
    Event plain = e;
    plain.name = plain.algo = nullptr;
    w.put(plain);
    w.put_string(e.name != nullptr ? e.name : "");
    w.put_string(e.algo != nullptr ? e.algo : "");
  }
  return w.take();
}

ReportPart decode(std::span<const std::byte> bytes) {
  Reader in(bytes);
  ReportPart part;
  Report& r = part.report;
  part.failed = in.get<std::uint8_t>() != 0;
  part.error = in.get_string();
  part.problem = in.get_string();
  r.wall_seconds = in.get<double>();
  r.model_time = in.get<double>();
  r.messages = in.get<std::uint64_t>();
  r.bytes = in.get<std::uint64_t>();
  r.clocks.resize(in.get<std::uint64_t>());
  for (double& c : r.clocks) c = in.get<double>();
  for (auto links = in.get<std::uint64_t>(); links > 0; --links) {
    const int from = in.get<int>();
    const int to = in.get<int>();
    r.link_traffic[{from, to}] = in.get<LinkStats>();
  }
  r.operations.resize(in.get<std::uint64_t>());
  for (auto& ops : r.operations) {
    ops.resize(in.get<std::uint64_t>());
    for (CommOp& op : ops) op = in.get<CommOp>();
  }
  r.events.resize(in.get<std::uint64_t>());
  for (Event& e : r.events) {
    e = in.get<Event>();
    e.name = interned(in.get_string());
    e.algo = interned(in.get_string());
  }
  return part;
}

void merge(Report& whole, Report part) {
  whole.wall_seconds = std::max(whole.wall_seconds, part.wall_seconds);
  whole.model_time = std::max(whole.model_time, part.model_time);
  whole.messages += part.messages;
  whole.bytes += part.bytes;
  whole.clocks.insert(whole.clocks.end(), part.clocks.begin(), part.clocks.end());
  for (const auto& [link, stats] : part.link_traffic) {
    LinkStats& sum = whole.link_traffic[link];
    sum.messages += stats.messages;
    sum.bytes += stats.bytes;
  }
  for (auto& ops : part.operations) whole.operations.push_back(std::move(ops));
  whole.events.insert(whole.events.end(), part.events.begin(), part.events.end());
}

}  // namespace hypercomm::mpi::detail
