// One collective call as a measurable, verifiable workload (verify.hpp).
//
// VP v's input element k is value(v, k) = (v+1) * 2^24 + (k mod 2^24): distinct for every
// (VP, position) a data-moving collective could confuse, exact as a double, and with sums over
// VPs in closed form, so checking a result costs O(1) per element:
//   sum over v < c of value(v, k) = 2^24 * c(c+1)/2 + c * (k mod 2^24).
// Every value stays below 2^37 and every sum (p <= 4096) below 2^49.
#include "verify.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>

namespace hypercomm::cli {

namespace {

constexpr std::int64_t kVpScale = std::int64_t{1} << 24;

// What a verification names when VP i's out[k] is wrong.
template <class T>
std::string wrong_element(int i, std::size_t k, T got, std::int64_t want) {
  std::ostringstream why;
  why.precision(17);
  why << "VP " << i << ", element " << k << ": got " << got << ", expected " << want;
  return why.str();
}

std::int64_t value(int vp, std::size_t k) {
  return (vp + 1) * kVpScale + static_cast<std::int64_t>(k % static_cast<std::size_t>(kVpScale));
}

// Sum of value(v, k) over v = 0 .. count-1.
std::int64_t sum_below(int count, std::size_t k) {
  const std::int64_t c = count;
  return kVpScale * (c * (c + 1) / 2) +
         c * static_cast<std::int64_t>(k % static_cast<std::size_t>(kVpScale));
}

// Elements of VP v's in and out buffers for n elements as textbook_time counts them.
struct Shape {
  std::size_t in = 0, out = 0;
};
Shape shape_of(Collective op, std::size_t n, int p, int v, int root) {
  const std::size_t pn = static_cast<std::size_t>(p) * n;
  const bool at_root = v == root;
  switch (op) {
    case Collective::broadcast: return {0, n};
    case Collective::reduce: return {n, at_root ? n : 0};
    case Collective::all_reduce:
    case Collective::scan:
    case Collective::exscan:
    case Collective::all_to_all:
    case Collective::circular_shift: return {n, n};
    case Collective::all_gather: return {n, pn};
    case Collective::reduce_scatter: return {pn, n};
    case Collective::scatter: return {at_root ? pn : 0, n};
    case Collective::gather: return {n, at_root ? pn : 0};
    case Collective::barrier: return {0, 0};
    default: break;  // the irregular collectives are not offered by run and sweep yet
  }
  return {0, 0};
}

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{8} << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

// "12.3 GiB": three significant digits, for sizes too large to state exactly.
std::string approx_bytes(long double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char text[64];
  std::snprintf(text, sizeof text, "%.3Lg %s", bytes, units[u]);
  return text;
}

template <class T>
class Typed final : public Workload {
 public:
  Typed(const Plan& plan, int p)
      : op_(plan.spec.op),
        algo_(plan.spec.algo),
        root_(plan.spec.root),
        shift_(plan.spec.shift),
        p_(p),
        n_(plan.elements),
        in_(static_cast<std::size_t>(p)),
        out_(static_cast<std::size_t>(p)) {
    for (int v = 0; v < p; ++v) {
      const Shape s = shape_of(op_, n_, p_, v, root_);
      auto& in = in_[static_cast<std::size_t>(v)];
      in.resize(s.in);
      for (std::size_t k = 0; k < s.in; ++k) in[k] = static_cast<T>(value(v, k));
      out_[static_cast<std::size_t>(v)].assign(s.out, kSentinel);
    }
  }

  void reset(int v) override {
    auto& out = out_[static_cast<std::size_t>(v)];
    if (op_ == Collective::broadcast && v == root_) {
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = static_cast<T>(value(v, k));
    } else {
      std::fill(out.begin(), out.end(), kSentinel);
    }
  }

  void call(Proc& vp) override {
    const auto& in = in_[static_cast<std::size_t>(vp.id())];
    auto& out = out_[static_cast<std::size_t>(vp.id())];
    switch (op_) {
      case Collective::broadcast: broadcast(vp, out, root_, algo_); break;
      case Collective::reduce: reduce(vp, in, out, std::plus<>(), root_, algo_); break;
      case Collective::all_reduce: all_reduce(vp, in, out, std::plus<>(), algo_); break;
      case Collective::all_gather: all_gather(vp, in, out, algo_); break;
      case Collective::reduce_scatter: reduce_scatter(vp, in, out, std::plus<>(), algo_); break;
      case Collective::scan: scan(vp, in, out, std::plus<>()); break;
      case Collective::exscan: exscan(vp, in, out, std::plus<>()); break;
      case Collective::scatter: scatter(vp, in, out, root_); break;
      case Collective::gather: gather(vp, in, out, root_); break;
      case Collective::all_to_all: all_to_all(vp, in, out, algo_); break;
      case Collective::circular_shift: circular_shift(vp, in, out, shift_); break;
      case Collective::barrier: barrier(vp); break;
      default: break;  // not offered by run and sweep (parse_collective stops at barrier)
    }
  }

  [[nodiscard]] std::optional<std::string> verify() const override {
    for (int i = 0; i < p_; ++i) {
      if (op_ == Collective::exscan && i == 0) continue;  // VP 0's out is left untouched
      const auto& out = out_[static_cast<std::size_t>(i)];
      for (std::size_t k = 0; k < out.size(); ++k) {
        const std::int64_t want = expected(i, k);
        if (out[k] != static_cast<T>(want)) return wrong_element(i, k, out[k], want);
      }
    }
    return std::nullopt;
  }

 private:
  static constexpr T kSentinel = static_cast<T>(-1);

  // VP i's expected out[k].
  [[nodiscard]] std::int64_t expected(int i, std::size_t k) const {
    const std::size_t n = n_;
    switch (op_) {
      case Collective::broadcast: return value(root_, k);
      case Collective::reduce:
      case Collective::all_reduce: return sum_below(p_, k);
      case Collective::all_gather:
      case Collective::gather: return value(static_cast<int>(k / n), k % n);
      case Collective::reduce_scatter: return sum_below(p_, static_cast<std::size_t>(i) * n + k);
      case Collective::scan: return sum_below(i + 1, k);
      case Collective::exscan: return sum_below(i, k);
      case Collective::scatter: return value(root_, static_cast<std::size_t>(i) * n + k);
      case Collective::all_to_all: {
        const std::size_t block = n / static_cast<std::size_t>(p_);
        return value(static_cast<int>(k / block), static_cast<std::size_t>(i) * block + k % block);
      }
      case Collective::circular_shift: return value(((i - shift_) % p_ + p_) % p_, k);
      case Collective::barrier: break;
      default: break;  // the irregular collectives are not offered by run and sweep yet
    }
    return 0;
  }

  Collective op_;
  Algo algo_;
  int root_;
  int shift_;
  int p_;
  std::size_t n_;
  std::vector<std::vector<T>> in_, out_;
};

// An irregular collective's buffers: the plan's counts, every block's elements value(owner, k)
// with k its index in the owner's buffer, so that the oracles are as above.
template <class T>
class Irregular final : public Workload {
 public:
  Irregular(const Plan& plan, int p)
      : op_(plan.spec.op),
        algo_(plan.spec.algo),
        root_(plan.spec.root),
        p_(p),
        counts_(plan.counts),
        send_(static_cast<std::size_t>(p)),
        recv_(static_cast<std::size_t>(p)),
        in_(static_cast<std::size_t>(p)),
        out_(static_cast<std::size_t>(p)) {
    const auto up = static_cast<std::size_t>(p);
    std::size_t total = 0;
    if (op_ != Collective::all_to_allv)
      for (const std::size_t c : counts_) total += c;
    for (int v = 0; v < p; ++v) {
      const auto uv = static_cast<std::size_t>(v);
      std::size_t in = 0, out = 0;
      switch (op_) {
        case Collective::all_gatherv: in = counts_[uv], out = total; break;
        case Collective::gatherv: in = counts_[uv], out = v == root_ ? total : 0; break;
        case Collective::scatterv: in = v == root_ ? total : 0, out = counts_[uv]; break;
        case Collective::reduce_scatterv: in = total, out = counts_[uv]; break;
        default:  // all_to_allv: row v of the matrix out, column v in
          for (std::size_t j = 0; j < up; ++j) {
            send_[uv].push_back(counts_[uv * up + j]);
            recv_[uv].push_back(counts_[j * up + uv]);
            in += send_[uv].back(), out += recv_[uv].back();
          }
      }
      const int owner = op_ == Collective::scatterv ? root_ : v;
      in_[uv].resize(in);
      for (std::size_t k = 0; k < in; ++k) in_[uv][k] = static_cast<T>(value(owner, k));
      out_[uv].assign(out, kSentinel);
    }
  }

  void reset(int v) override {
    auto& out = out_[static_cast<std::size_t>(v)];
    std::fill(out.begin(), out.end(), kSentinel);
  }

  void call(Proc& vp) override {
    const auto v = static_cast<std::size_t>(vp.id());
    const auto& in = in_[v];
    auto& out = out_[v];
    switch (op_) {
      case Collective::all_gatherv: all_gatherv(vp, in, out, counts_, algo_); break;
      case Collective::gatherv: gatherv(vp, in, out, counts_, root_); break;
      case Collective::scatterv: scatterv(vp, in, out, counts_, root_); break;
      case Collective::reduce_scatterv:
        reduce_scatterv(vp, in, out, std::plus<>(), counts_, algo_);
        break;
      default: all_to_allv(vp, in, send_[v], out, recv_[v], algo_); break;
    }
  }

  [[nodiscard]] std::optional<std::string> verify() const override {
    const auto up = static_cast<std::size_t>(p_);
    std::vector<std::size_t> offset(up + 1, 0);  // of the blocks in rank order
    if (op_ != Collective::all_to_allv)
      for (std::size_t i = 0; i < up; ++i) offset[i + 1] = offset[i] + counts_[i];
    for (int i = 0; i < p_; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      const auto& out = out_[ui];
      // Which block out[k] is in, and its expected value.
      std::size_t block = 0, start = 0;
      std::vector<std::size_t> from(up + 1, 0);  // all_to_allv: out's blocks by sender
      for (std::size_t j = 0; j < up && op_ == Collective::all_to_allv; ++j)
        from[j + 1] = from[j] + recv_[ui][j];
      for (std::size_t k = 0; k < out.size(); ++k) {
        std::int64_t want = 0;
        switch (op_) {
          case Collective::all_gatherv:
          case Collective::gatherv:
            while (k >= offset[block + 1]) ++block;
            want = value(static_cast<int>(block), k - offset[block]);
            break;
          case Collective::scatterv: want = value(root_, offset[ui] + k); break;
          case Collective::reduce_scatterv: want = sum_below(p_, offset[ui] + k); break;
          default: {  // from sender j: its elements after what it sent ranks 0 .. i-1
            while (k >= from[block + 1]) ++block;
            start = 0;
            for (std::size_t l = 0; l < ui; ++l) start += counts_[block * up + l];
            want = value(static_cast<int>(block), start + (k - from[block]));
          }
        }
        if (out[k] != static_cast<T>(want)) return wrong_element(i, k, out[k], want);
      }
    }
    return std::nullopt;
  }

 private:
  static constexpr T kSentinel = static_cast<T>(-1);

  Collective op_;
  Algo algo_;
  int root_;
  int p_;
  std::vector<std::size_t> counts_;
  std::vector<std::vector<std::size_t>> send_, recv_;  // all_to_allv, per VP
  std::vector<std::vector<T>> in_, out_;
};

// `total` elements shared out among p ranks by weight: uniform 1 each, zipf 1/(i+1), one-heavy
// 9*(p-1) for the last rank and 1 for the others (it holds 90%). Rounded down, the remainder one
// element each to the first ranks, so they add up to total.
std::vector<std::size_t> share(Distribution d, std::size_t total, int p) {
  std::vector<double> weight(static_cast<std::size_t>(p), 1.0);
  if (d == Distribution::zipf)
    for (int i = 0; i < p; ++i) weight[static_cast<std::size_t>(i)] = 1.0 / (i + 1);
  if (d == Distribution::one_heavy && p > 1) weight.back() = 9.0 * (p - 1);
  double sum = 0;
  for (const double w : weight) sum += w;
  std::vector<std::size_t> counts(weight.size());
  std::size_t given = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    counts[i] = static_cast<std::size_t>(static_cast<double>(total) * weight[i] / sum);
    given += counts[i];
  }
  for (std::size_t i = 0; given < total; i = (i + 1) % counts.size()) ++counts[i], ++given;
  return counts;
}

}  // namespace

const char* to_string(Distribution d) noexcept {
  switch (d) {
    case Distribution::uniform: return "uniform";
    case Distribution::zipf: return "zipf";
    case Distribution::one_heavy: return "one-heavy";
  }
  return "?";
}

Distribution parse_distribution(std::string_view text) {
  if (text == "uniform") return Distribution::uniform;
  if (text == "zipf") return Distribution::zipf;
  if (text == "one-heavy" || text == "one_heavy") return Distribution::one_heavy;
  throw UsageError("unknown count distribution '" + std::string(text) +
                   "' for --counts (expected uniform, zipf or one-heavy)");
}

bool irregular(Collective op) noexcept { return op >= Collective::all_gatherv; }

const char* meaning_of_bytes(Collective op) noexcept {
  switch (op) {
    case Collective::all_gather:
    case Collective::gather: return "one block (out holds p blocks)";
    case Collective::reduce_scatter:
    case Collective::scatter: return "one block (in holds p blocks)";
    case Collective::all_to_all: return "the whole in, p blocks (the formula's m is one block)";
    case Collective::barrier: return "no data";
    case Collective::all_gatherv:
    case Collective::gatherv:
    case Collective::scatterv:
    case Collective::reduce_scatterv:
      return "the mean block (--counts shares p of them out among the ranks)";
    case Collective::all_to_allv:
      return "the mean whole in (--counts shares each sender's out among the receivers)";
    default: return "the whole buffer";
  }
}

bool has_root(Collective op) noexcept {
  return op == Collective::broadcast || op == Collective::reduce || op == Collective::scatter ||
         op == Collective::gather;
}

namespace {

[[noreturn]] void too_big(const Spec& spec, int p, long double footprint, std::uint64_t limit) {
  throw UsageError("--bytes " + format_bytes(spec.bytes) + " of " + to_string(spec.op) + " on " +
                   std::to_string(p) + " VPs needs about " + approx_bytes(footprint) +
                   " of buffers, more than half of this machine's memory (" +
                   approx_bytes(static_cast<long double>(limit)) + ")");
}

// make_plan for an irregular collective: the counts from the distribution, and the algorithm
// resolve_v picks for them.
Plan make_irregular_plan(Plan plan, const Topology& topology, Links links) {
  const Spec& spec = plan.spec;
  const int p = topology.size();
  const auto up = static_cast<std::size_t>(p);
  const std::size_t elem = size_of(spec.type);
  plan.elements = static_cast<std::size_t>(spec.bytes / elem);
  plan.bytes = plan.elements * elem;
  // Buffers: all_gatherv and reduce_scatterv hold the whole on every VP; the others about twice
  // the whole once.
  const long double whole = static_cast<long double>(plan.bytes) * p;
  const long double footprint =
      spec.op == Collective::all_gatherv || spec.op == Collective::reduce_scatterv ? whole * (p + 1)
                                                                                   : 2 * whole;
  const std::uint64_t limit = physical_memory() / 2;
  if (footprint > static_cast<long double>(limit)) too_big(spec, p, footprint, limit);
  plan.footprint = static_cast<std::uint64_t>(footprint);
  if (spec.op == Collective::all_to_allv) {
    const std::vector<std::size_t> row = share(spec.counts, plan.elements, p);
    for (std::size_t i = 0; i < up; ++i)
      plan.counts.insert(plan.counts.end(), row.begin(), row.end());
  } else {
    plan.counts = share(spec.counts, plan.elements * up, p);
  }
  try {
    plan.resolved = resolve_v(spec.op, spec.algo, topology, links, plan.counts, elem);
  } catch (const AlgorithmError& e) {
    std::string why = reason_of(e);
    if (links == Links::strict) {
      try {
        (void)resolve_v(spec.op, spec.algo, topology, Links::routed, plan.counts, elem);
        why += " (it can run with --links routed)";
      } catch (const AlgorithmError&) {
      }
    }
    throw UsageError(why);
  }
  plan.card = find_card_v(spec.op, plan.resolved, topology, links, plan.counts, elem);
  return plan;
}

}  // namespace

Plan make_plan(const Spec& spec, const Topology& topology, Links links) {
  Plan plan;
  plan.spec = spec;
  const int p = topology.size();
  const std::size_t elem = size_of(spec.type);
  if (has_root(spec.op) && (spec.root < 0 || spec.root >= p))
    throw UsageError("--root " + std::to_string(spec.root) + " is outside [0, " +
                     std::to_string(p) + ") on " + topology.name());

  if (irregular(spec.op)) return make_irregular_plan(plan, topology, links);

  // Round down to whole elements, and all_to_all's p blocks to whole blocks.
  std::uint64_t elements = spec.op == Collective::barrier ? 0 : spec.bytes / elem;
  if (spec.op == Collective::all_to_all) elements -= elements % static_cast<std::uint64_t>(p);
  plan.elements = static_cast<std::size_t>(elements);
  plan.bytes = elements * elem;

  // All VPs' buffers together must fit comfortably in memory.
  const long double n = static_cast<long double>(elements), q = p;
  long double footprint = 2 * q * n;  // in and out of n elements on every VP
  if (spec.op == Collective::all_gather || spec.op == Collective::reduce_scatter)
    footprint = q * n + q * q * n;  // p blocks on one side
  else if (spec.op == Collective::broadcast)
    footprint = q * n;
  footprint *= static_cast<long double>(elem);
  const std::uint64_t limit = physical_memory() / 2;
  if (footprint > static_cast<long double>(limit)) too_big(spec, p, footprint, limit);
  plan.footprint = static_cast<std::uint64_t>(footprint);

  try {
    plan.resolved = resolve(spec.op, spec.algo, topology, links, plan.bytes);
  } catch (const AlgorithmError& e) {
    std::string why = reason_of(e);
    if (links == Links::strict) {
      try {
        (void)resolve(spec.op, spec.algo, topology, Links::routed, plan.bytes);
        why += " (it can run with --links routed)";
      } catch (const AlgorithmError&) {
      }
    }
    throw UsageError(why);
  }
  plan.card = find_card(spec.op, plan.resolved, topology, links, plan.bytes, spec.shift);
  return plan;
}

std::unique_ptr<Workload> make_workload(const Plan& plan, const Topology& topology) {
  if (irregular(plan.spec.op)) {
    if (plan.spec.type == DataType::float64)
      return std::make_unique<Irregular<double>>(plan, topology.size());
    return std::make_unique<Irregular<std::int64_t>>(plan, topology.size());
  }
  if (plan.spec.type == DataType::float64)
    return std::make_unique<Typed<double>>(plan, topology.size());
  return std::make_unique<Typed<std::int64_t>>(plan, topology.size());
}

Measurement measure(Machine& machine, Workload& workload, int repeat) {
  Measurement m;
  m.report = machine.run([&](Proc& vp) {
    workload.reset(vp.id());
    workload.call(vp);
  });
  m.failure = workload.verify();
  const int p = machine.topology().size();
  std::vector<double> took(static_cast<std::size_t>(p));
  for (int rep = 0; rep < repeat; ++rep) {
    machine.run([&](Proc& vp) {
      workload.reset(vp.id());
      barrier(vp);
      const auto t0 = std::chrono::steady_clock::now();
      workload.call(vp);
      took[static_cast<std::size_t>(vp.id())] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    m.wall.push_back(*std::max_element(took.begin(), took.end()));
  }
  if (!m.failure) m.failure = workload.verify();  // the last timed run's results as well
  std::vector<double> sorted = m.wall;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    const std::size_t mid = sorted.size() / 2;
    m.wall_median = sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
  return m;
}

Report traced_run(const Topology& topology, Options options, Workload& workload) {
  options.trace = true;
  return run(
      topology,
      [&](Proc& vp) {
        workload.reset(vp.id());
        workload.call(vp);
      },
      options);
}

double formula_time(const Plan& plan, const Topology& topology, Links links,
                    const CostModel& model) {
  if (irregular(plan.spec.op))
    return textbook_time_v(plan.spec.op, plan.resolved, topology, links, plan.counts, model,
                           plan.shape());
  return textbook_time(plan.spec.op, plan.resolved, topology, links, plan.bytes, model,
                       plan.shape());
}

TimeBounds formula_bounds(const Plan& plan, const Topology& topology, Links links,
                          const CostModel& model) {
  if (irregular(plan.spec.op))
    return textbook_bounds_v(plan.spec.op, plan.resolved, topology, links, plan.counts, model,
                             plan.shape());
  return textbook_bounds(plan.spec.op, plan.resolved, topology, links, plan.bytes, model,
                         plan.shape());
}

std::string describe_counts(const Plan& plan) {
  if (plan.counts.empty()) return "";
  const auto [low, high] = std::minmax_element(plan.counts.begin(), plan.counts.end());
  std::size_t total = 0;
  for (const std::size_t c : plan.counts) total += c;
  const bool matrix = plan.spec.op == Collective::all_to_allv;
  return std::string(to_string(plan.spec.counts)) + ": " + std::to_string(*low) + " to " +
         std::to_string(*high) + " elements per " + (matrix ? "pair" : "rank") + ", " +
         std::to_string(total) + " in all";
}

}  // namespace hypercomm::cli
