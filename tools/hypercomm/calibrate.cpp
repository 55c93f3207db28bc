// `hypercomm calibrate`: measures ts and tw on this machine by ping-pong between two VPs of a
// ring:2 Machine, fits time = ts + tw*m to the one-way times, and saves the model file that
// `run` and `sweep` read (model_file.hpp).
//
// The fit is least squares with each point weighted by 1/time^2 (relative error): plain least
// squares over sizes from 8 B to 4 MiB would let a 1% wobble of the largest message (tens of
// microseconds) swamp ts (a fraction of a microsecond).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "args.hpp"
#include "commands.hpp"

namespace hypercomm::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Point {
  std::uint64_t bytes = 0;
  double one_way = 0;  // seconds, median over trials
  int trials = 0;
  int round_trips = 0;  // per trial
};

struct Fit {
  double ts = 0, tw = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Least squares of time = ts + tw*m weighted by 1/time^2; ts > 0 and tw >= 0.
Fit fit(const std::vector<Point>& points) {
  double s = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (const Point& p : points) {
    const double w = 1 / (p.one_way * p.one_way), x = static_cast<double>(p.bytes);
    s += w, sx += w * x, sxx += w * x * x, sy += w * p.one_way, sxy += w * x * p.one_way;
  }
  Fit f;
  const double det = s * sxx - sx * sx;
  if (det > 0) {
    f.tw = (s * sxy - sx * sy) / det;
    f.ts = (sy - f.tw * sx) / s;
  }
  if (!(f.ts > 0)) {  // degenerate: the smallest message's time, then tw for that ts
    f.ts = points.front().one_way;
    double num = 0, den = 0;
    for (const Point& p : points) {
      const double w = 1 / (p.one_way * p.one_way), x = static_cast<double>(p.bytes);
      num += w * x * (p.one_way - f.ts), den += w * x * x;
    }
    f.tw = den > 0 ? num / den : 0;
  }
  f.tw = std::max(f.tw, 0.0);
  return f;
}

// Seconds one way for `round_trips` ping-pongs of `bytes` between VP 0 and VP 1.
double ping_pong(Machine& machine, std::vector<std::vector<std::byte>>& buffers, int round_trips) {
  double seconds = 0;
  machine.run([&](Proc& vp) {
    auto& buf = buffers[static_cast<std::size_t>(vp.id())];
    if (vp.id() == 0) {
      const auto t0 = Clock::now();
      for (int i = 0; i < round_trips; ++i) {
        vp.send(1, buf);
        vp.recv(1, buf);
      }
      seconds = std::chrono::duration<double>(Clock::now() - t0).count() / (2.0 * round_trips);
    } else {
      for (int i = 0; i < round_trips; ++i) {
        vp.recv(0, buf);
        vp.send(0, buf);
      }
    }
  });
  return seconds;
}

class CalibrateCommand final : public Command {
 public:
  explicit CalibrateCommand(CLI::App& parent) {
    app_ = parent.add_subcommand(
        "calibrate", "Measure ts and tw by ping-pong between two VPs and save them for run/sweep");
    app_->footer(
        "The model file: --out, else $HYPERCOMM_MODEL_FILE, else "
        "$XDG_CONFIG_HOME/hypercomm/model,\n"
        "else ~/.config/hypercomm/model. Takes about 8 s (--quick: about 1.5 s).");
    app_->add_option("--out", out_, "where to save the model (default: see below)");
    app_->add_flag("--quick", quick_, "fewer sizes and shorter timing (about 1.5 s)");
  }

  int execute() override {
    const auto path = out_.empty() ? model_file_path() : std::filesystem::path(out_);
    if (!path)
      throw UsageError(
          "nowhere to save the model: give --out or set HYPERCOMM_MODEL_FILE, "
          "XDG_CONFIG_HOME or HOME");
    check_writable(*path);

    std::vector<std::uint64_t> sizes;
    if (quick_)
      sizes = {8, 128, 2048, 32768, 524288, 4194304};
    else
      for (std::uint64_t m = 8; m <= (4u << 20); m *= 4) sizes.push_back(m);
    if (sizes.back() != (4u << 20)) sizes.push_back(4u << 20);
    const double budget = (quick_ ? 1.0 : 5.5) / static_cast<double>(sizes.size());  // per size

    Options options;  // VP 0 and VP 1 on two different cores where there are two
    Machine machine(Topology::ring(2), options);
    std::printf(
        "hypercomm calibrate: ping-pong between VP 0 and VP 1 of ring:2; one-way time = "
        "round trip / 2\n");
    std::printf("%12s  %14s  %7s\n", "bytes", "one-way", "trials");
    std::fflush(stdout);
    std::vector<Point> points;
    for (const std::uint64_t bytes : sizes) {
      Point point = measure(machine, bytes, budget);
      std::printf("%12s  %14s  %7d\n", format_bytes(bytes).c_str(),
                  format_seconds(point.one_way).c_str(), point.trials);
      std::fflush(stdout);
      points.push_back(point);
    }
    const Fit f = fit(points);
    std::printf("\nfit: time = ts + tw*m, least squares weighted by 1/time^2 (relative error)\n");
    std::printf("  ts = %.4g s (%s per message)\n", f.ts, format_seconds(f.ts).c_str());
    std::printf("  tw = %.4g s/byte (%.3g GB/s)\n", f.tw, f.tw > 0 ? 1e-9 / f.tw : INFINITY);
    std::printf("%12s  %14s  %14s  %8s\n", "bytes", "measured", "fit", "error");
    double worst = 0;
    for (const Point& p : points) {
      const double model = f.ts + f.tw * static_cast<double>(p.bytes);
      const double error = (model - p.one_way) / p.one_way;
      worst = std::max(worst, std::fabs(error));
      std::printf("%12s  %14s  %14s  %+7.1f%%\n", format_bytes(p.bytes).c_str(),
                  format_seconds(p.one_way).c_str(), format_seconds(model).c_str(), error * 100);
    }
    if (worst > 0.5)
      std::printf(
          "note: the line misses some sizes by more than 50%% (caches, or a busy "
          "machine); run it again on an idle machine for steadier values\n");
    save_model(*path, CostModel{.ts = f.ts, .tw = f.tw, .th = 0});
    std::printf("saved to %s (ts, tw, th = 0): `hypercomm run` and `hypercomm sweep` use it\n",
                path->c_str());
    return kExitOk;
  }

 private:
  // Creates the folder and opens the file for appending (as root, access() would say yes to
  // anything); a file that did not exist is removed again.
  static void check_writable(const std::filesystem::path& path) {
    std::error_code ec;
    const auto fail = [&](const std::string& why) {
      return UsageError("cannot save the model to " + path.string() + ": " + why);
    };
    if (std::filesystem::is_directory(path, ec)) throw fail("it is a folder");
    if (path.has_parent_path()) {
      std::filesystem::create_directories(path.parent_path(), ec);
      if (ec) throw fail("cannot create " + path.parent_path().string() + ": " + ec.message());
    }
    const bool existed = std::filesystem::exists(path, ec);
    {
      std::ofstream probe(path, std::ios::app);
      if (!probe) throw fail(std::strerror(errno));
    }
    if (!existed) std::filesystem::remove(path, ec);
  }

  static Point measure(Machine& machine, std::uint64_t bytes, double budget) {
    std::vector<std::vector<std::byte>> buffers(2, std::vector<std::byte>(bytes, std::byte{1}));
    Point point{bytes, 0, 0, 2};
    // Warm-up (first touch of the channels' buffers), and an estimate of one round trip.
    (void)ping_pong(machine, buffers, 2);
    const double round_trip = 2 * ping_pong(machine, buffers, 4);
    constexpr int kMinTrials = 5, kMaxTrials = 15;
    const double per_trial = budget / 8;
    const auto trips_for = [&](double seconds_per_trip) {
      return static_cast<int>(
          std::clamp(per_trial / std::max(seconds_per_trip, 1e-9), 1.0, 200000.0));
    };
    point.round_trips = trips_for(round_trip);
    std::vector<double> times;
    const auto start = Clock::now();
    while (static_cast<int>(times.size()) < kMaxTrials) {
      const auto t0 = Clock::now();
      times.push_back(ping_pong(machine, buffers, point.round_trips));
      const auto t1 = Clock::now();
      const double spent = std::chrono::duration<double>(t1 - start).count();
      const int trials = static_cast<int>(times.size());
      if ((trials >= kMinTrials && spent >= budget) || (trials >= 3 && spent >= 2 * budget)) break;
      // The next trial sized by what this one took (a busy machine makes the estimate drift).
      point.round_trips =
          trips_for(std::chrono::duration<double>(t1 - t0).count() / point.round_trips);
    }
    point.trials = static_cast<int>(times.size());
    point.one_way = median(times);
    return point;
  }

  std::string out_;
  bool quick_ = false;
};

}  // namespace

std::unique_ptr<Command> make_calibrate_command(CLI::App& parent) {
  return std::make_unique<CalibrateCommand>(parent);
}

}  // namespace hypercomm::cli
