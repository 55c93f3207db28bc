// The book's circular q-shift on a hypercube (Grama et al., section 4.6.2, Figure 4.22): the
// ring of 2^d VPs embedded by the reflected Gray code (section 2.7) as a group, rank k = VP
// gray(k), made by split(world, 0, gray_inverse(id)); on it circular_shift runs the book's
// algorithm, one phase per power of two in q (two steps each, one for 2^0), every message one
// link, under Links::strict: (ts + tw*m) * (2 * popcount(q) - q mod 2) <= (ts + tw*m)(2 log p - 1).
// The ring's own algorithm would take min(q, p - q) steps.
//
//   gray_q_shift [d [q [picture.svg]]]     (default: d = 3, q = 5, no picture)
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <hypercomm/hypercomm.hpp>
#include <iterator>
#include <string>
#include <vector>

namespace hc = hypercomm;

int main(int argc, char** argv) {
  const int d = argc > 1 ? std::atoi(argv[1]) : 3;
  const int q = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string picture = argc > 3 ? argv[3] : "";
  if (d < 2 || d > 10 || q < 0 || q >= (1 << d)) {
    std::fprintf(stderr, "usage: gray_q_shift [d in 2..10 [q in 0..2^d-1 [picture.svg]]]\n");
    return 2;
  }
  const int p = 1 << d;
  const std::size_t n = 100;  // doubles per VP
  hc::Options options;
  options.links = hc::Links::strict;  // neighbours only: the embedding has dilation 1
  options.model = {.ts = 1.0, .tw = 0.01, .th = 0.0};
  options.trace = !picture.empty();
  std::vector<int> right(static_cast<std::size_t>(p), 0);
  std::vector<double> span(static_cast<std::size_t>(p), 0);
  hc::Report report = hc::run(
      hc::Topology::hypercube(d),
      [&](hc::Proc& vp) {
        hc::Group ring = hc::split(vp.world(), 0, static_cast<int>(hc::gray_inverse(vp.id())));
        std::vector<double> in(n, ring.rank()), out(n, -1);
        const double start = vp.clock();
        hc::circular_shift(ring, in, out, q);
        span[static_cast<std::size_t>(vp.id())] = vp.clock() - start;
        right[static_cast<std::size_t>(vp.id())] =
            out == std::vector<double>(n, (ring.rank() - q + p) % p);
      },
      options);
  const bool ok = std::count(right.begin(), right.end(), 1) == p;
  const double step = options.model.ts + options.model.tw * static_cast<double>(n * sizeof(double));
  const int steps = q == 0 ? 0 : 2 * std::popcount(static_cast<unsigned>(q)) - (q & 1);
  const double took = *std::max_element(span.begin(), span.end());
  const double formula = hc::textbook_time(
      hc::Collective::circular_shift, hc::Algo::automatic, hc::Topology::ring(p), options.links,
      n * sizeof(double), options.model, hc::CallShape{.shift = q, .gray_ring = true});
  std::printf("q-shift by %d on the Gray-code ring of hypercube:%d (Links::strict): %s\n", q, d,
              ok ? "every rank got rank k - q's message" : "WRONG DATA");
  std::printf(
      "  model time %.2f = %d steps of ts + tw*m (the book: 2*popcount(q) - q mod 2 = %d; "
      "at most 2 log p - 1 = %d); the ring algorithm: %d steps; textbook_time %.2f\n",
      took, static_cast<int>(took / step + 0.5), steps, 2 * d - 1, std::min(q, p - q), formula);
  if (!picture.empty()) {
    // Draw the shift alone: keep its span and what ran inside it (not the split's all-gather
    // of keys before it), its model times counted from its start.
    struct Span {
      double begin = 0, end = -1;
    };
    std::vector<Span> shift_span(static_cast<std::size_t>(p));  // each VP's circular_shift
    for (const hc::Event& e : report.events)
      if (e.kind == hc::Event::Kind::collective && std::string(e.name) == "circular_shift")
        shift_span[static_cast<std::size_t>(e.vp)] = {e.wall_begin, e.wall_end};
    std::vector<hc::Event> kept;
    for (const hc::Event& e : report.events) {
      const Span& s = shift_span[static_cast<std::size_t>(e.vp)];
      if (s.begin <= e.wall_begin && e.wall_end <= s.end) kept.push_back(e);
    }
    double start = took;
    for (const hc::Event& e : kept) start = std::min(start, e.model_begin);
    for (hc::Event& e : kept) e.model_begin -= start, e.model_end -= start;
    // Each VP's operations in program order: the shift's are its last ones.
    for (std::size_t v = 0; v < report.operations.size(); ++v) {
      const auto mine = std::count_if(kept.begin(), kept.end(), [&](const hc::Event& e) {
        return e.vp == static_cast<int>(v) && e.kind != hc::Event::Kind::collective &&
               e.kind != hc::Event::Kind::wait;
      });
      auto& ops = report.operations[v];
      ops.erase(ops.begin(), ops.end() - std::min<std::ptrdiff_t>(mine, std::ssize(ops)));
    }
    report.events = kept;
    report.model_time = took;
    hc::write_svg(report, hc::Topology::hypercube(d), picture);
    std::printf("  picture: %s\n", picture.c_str());
  }
  const double want = std::min(steps, std::min(q, p - q)) * step;
  const auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, b); };
  return ok && near(took, formula) && near(formula, want) ? 0 : 1;
}
