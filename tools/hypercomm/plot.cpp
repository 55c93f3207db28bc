// CSV and gnuplot output of `hypercomm sweep` (plot.hpp).
#include "plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "args.hpp"

extern char** environ;

namespace hypercomm::cli {

namespace {

// A gnuplot single-quoted string: only ' needs escaping, as ''.
std::string gp_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// Log axes cannot show zero: such points are left out (NaN).
std::string positive(double v) {
  if (!(v > 0) || !std::isfinite(v)) return "NaN";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

// One datablock per series key, rows (x, wall, model, formula) sorted by x.
using Series = std::map<std::uint64_t, std::map<std::uint64_t, const SweepRow*>>;

// One PNG; false (and nothing written) when no point has an x a log axis can show.
bool write_plot(std::ofstream& gp, const Series& series, const std::string& name,
                const std::string& output, const std::string& title, const std::string& xlabel,
                bool x_is_p, const std::string& key_unit) {
  // Tics at the measured x values, labelled like the command line takes them.
  std::set<std::uint64_t> xs;
  for (const auto& entry : series)
    for (const auto& point : entry.second)
      if (point.first > 0) xs.insert(point.first);
  if (xs.empty()) return false;
  int index = 0;
  for (const auto& [key, points] : series) {
    gp << "$" << name << index++ << " << EOD\n";
    for (const auto& [x, row] : points)
      gp << (x_is_p ? std::to_string(x) : positive(static_cast<double>(x))) << ' '
         << positive(row->wall_seconds) << ' ' << positive(row->model_seconds) << ' '
         << positive(row->formula_seconds) << '\n';
    gp << "EOD\n";
  }
  std::string tics;
  for (const std::uint64_t x : xs)
    tics += std::string(tics.empty() ? "" : ", ") +
            gp_quote(x_is_p ? std::to_string(x) : format_bytes(x)) + " " + std::to_string(x);
  gp << "set output " << gp_quote(output) << "\n"
     << "set title " << gp_quote(title) << "\n"
     << "set xlabel " << gp_quote(xlabel) << "\n"
     << "set ylabel 'time (s)'\n"
     << "unset logscale\n"
     << "set logscale x 2\n"
     << "set xtics (" << tics << ")\n"
     << "set xrange [" << static_cast<double>(*xs.begin()) / 1.3 << ":"
     << static_cast<double>(*xs.rbegin()) * 1.3 << "]\n"
     << "set offsets 0, 0, graph 0.05, graph 0.05\n"
     << "set logscale y 10\n"
     << "set format y '%.0e'\n";
  gp << "plot \\\n";
  index = 0;
  for (const auto& entry : series) {
    const std::string label =
        key_unit == "bytes" ? format_bytes(entry.first) : "p = " + std::to_string(entry.first);
    const std::string block = "$" + name + std::to_string(index);
    const int color = index + 1;
    gp << "  " << block << " using 1:2 with linespoints lc " << color << " dt 1 pt 7 lw 2 title "
       << gp_quote(label + " measured") << ", \\\n"
       << "  " << block << " using 1:3 with linespoints lc " << color << " dt 2 pt 6 title "
       << gp_quote(label + " model") << ", \\\n"
       << "  " << block << " using 1:4 with lines lc " << color << " dt 3 lw 2 title "
       << gp_quote(label + " formula");
    ++index;
    gp << (index < static_cast<int>(series.size()) ? ", \\\n" : "\n");
  }
  return true;
}

}  // namespace

void write_csv(std::FILE* out, const std::vector<SweepRow>& rows) {
  std::fprintf(out, "%s\n", kCsvHeader);
  for (const SweepRow& r : rows)
    std::fprintf(out, "%s,%s,%s,%d,%llu,%.9g,%.9g,%.9g,%llu,%llu,%s\n", r.op.c_str(),
                 r.topology.c_str(), r.algo.c_str(), r.p, static_cast<unsigned long long>(r.bytes),
                 r.wall_seconds, r.model_seconds, r.formula_seconds,
                 static_cast<unsigned long long>(r.messages),
                 static_cast<unsigned long long>(r.bytes_moved), r.verified ? "ok" : "WRONG");
}

std::optional<std::string> find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string rest = path;
  while (true) {
    const auto colon = rest.find(':');
    std::string dir = rest.substr(0, colon);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    rest.erase(0, colon + 1);
  }
  return std::nullopt;
}

std::vector<std::string> plot(const std::vector<SweepRow>& rows, const std::string& prefix,
                              const std::string& gnuplot) {
  if (rows.empty()) throw std::runtime_error("nothing to plot");
  const std::string script = prefix + ".gp", vs_p = prefix + "-vs-p.png",
                    vs_bytes = prefix + "-vs-bytes.png";
  Series by_bytes, by_p;  // by_bytes[bytes][p], by_p[p][bytes]
  for (const SweepRow& r : rows) {
    by_bytes[r.bytes][static_cast<std::uint64_t>(r.p)] = &r;
    by_p[static_cast<std::uint64_t>(r.p)][r.bytes] = &r;
  }
  std::vector<std::string> written;
  const std::string what = rows.front().op + " (" + rows.front().algo + ") on " +
                           rows.front().topology.substr(0, rows.front().topology.find(':'));
  {
    std::ofstream gp(script);
    if (!gp) throw std::runtime_error("cannot write the gnuplot script " + script);
    gp << "# Generated by `hypercomm sweep`: gnuplot " << gp_quote(script) << "\n"
       << "# Solid: measured wall time; dashed: Report::model_time; dotted: the card's formula.\n"
       << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
       << "  set terminal pngcairo size 1200,750 noenhanced\n"
       << "} else {\n"
       << "  set terminal png size 1200,750 noenhanced\n"
       << "}\n"
       << "set grid\nset key outside right top\n";
    if (write_plot(gp, by_bytes, "vs_p_", vs_p, what + ": time against p", "p (VPs)", true,
                   "bytes"))
      written.push_back(vs_p);
    if (write_plot(gp, by_p, "vs_bytes_", vs_bytes, what + ": time against bytes (log-log)",
                   "bytes per VP", false, "p"))
      written.push_back(vs_bytes);
    gp << "set output\n";
    if (!gp) throw std::runtime_error("writing the gnuplot script " + script + " failed");
  }
  pid_t pid = 0;
  std::string arg0 = "gnuplot", arg1 = script;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  if (const int err = posix_spawn(&pid, gnuplot.c_str(), nullptr, nullptr, argv, environ); err != 0)
    throw std::runtime_error("cannot start " + gnuplot + ": " + std::strerror(err));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("gnuplot failed on " + script);
  return written;
}

}  // namespace hypercomm::cli
