// write_link_heatmap_svg: Report::link_traffic on the topology's drawing, each directed link
// coloured and thickened by the bytes it carried.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <hypercomm/errors.hpp>
#include <hypercomm/picture.hpp>

#include "picture_svg.hpp"

namespace hypercomm {

namespace {

using detail::picture::bytes_text;
using detail::picture::num;
using detail::picture::Point;

// ColorBrewer YlOrRd, light to dark (its palest yellow left out: too faint on white).
constexpr std::array<std::array<double, 3>, 5> kScale{
    {{254, 217, 118}, {254, 178, 76}, {253, 141, 60}, {240, 59, 32}, {189, 0, 38}}};

std::string colour(double t) {
  t = std::clamp(t, 0.0, 1.0) * (kScale.size() - 1);
  const auto k = std::min(static_cast<std::size_t>(t), kScale.size() - 2);
  const double f = t - static_cast<double>(k);
  char buf[8];
  std::snprintf(
      buf, sizeof buf, "#%02x%02x%02x",
      static_cast<unsigned>(std::lround(kScale[k][0] + f * (kScale[k + 1][0] - kScale[k][0]))),
      static_cast<unsigned>(std::lround(kScale[k][1] + f * (kScale[k + 1][1] - kScale[k][1]))),
      static_cast<unsigned>(std::lround(kScale[k][2] + f * (kScale[k + 1][2] - kScale[k][2]))));
  return buf;
}

}  // namespace

void write_link_heatmap_svg(const Report& report, const Topology& topology,
                            const std::string& path) {
  detail::picture::check_topology(report, topology, "write_link_heatmap_svg");
  const auto l = detail::picture::layout_of(topology);
  constexpr double kHeader = 56, kLegend = 72, kMargin = 14;
  const double width = std::max(l.width + 2 * kMargin, 440.0);
  detail::picture::Svg svg(width, kHeader + l.height + kLegend);

  std::uint64_t most = 0, total_messages = 0;
  for (const auto& [link, stats] : report.link_traffic) {
    most = std::max(most, stats.bytes);
    total_messages += stats.messages;
  }
  svg.text({kMargin, 22}, topology.name() + ": traffic per directed link", 15, "start",
           "font-weight=\"bold\"");
  svg.text({kMargin, 41},
           std::to_string(report.link_traffic.size()) + " directed links used, " +
               std::to_string(total_messages) + " link crossings; busiest link " + bytes_text(most),
           11, "start", "fill=\"#444\"");
  svg.text({kMargin, kHeader + l.height + kLegend - 8},
           "Each direction is drawn on the right-hand side of its travel; hover for counts.", 10,
           "start", "fill=\"#666\"");

  const Point origin{(width - l.width) / 2, kHeader};
  svg.topology(topology, l, origin);
  for (const auto& [link, stats] : report.link_traffic) {
    const double t = most == 0 ? 0 : static_cast<double>(stats.bytes) / static_cast<double>(most);
    const auto p = detail::picture::connection(topology, l, link.first, link.second);
    svg.raw("<path class=\"link\" d=\"" + detail::picture::path_d(p, origin, 3.6, l.node_r + 1) +
            "\" fill=\"none\" stroke=\"" + colour(t) + "\" stroke-width=\"" + num(2 + 3 * t) +
            "\" stroke-linecap=\"round\" marker-end=\"url(#head-grey)\"><title>" +
            std::to_string(link.first) + " \u2192 " + std::to_string(link.second) + ": " +
            std::to_string(stats.messages) + (stats.messages == 1 ? " message, " : " messages, ") +
            std::to_string(stats.bytes) + " bytes</title></path>\n");
  }
  if (report.link_traffic.empty())
    svg.text({width / 2, kHeader + l.height / 2}, "(no link carried any message)", 12);

  // Legend: the colour scale from 0 to the busiest link's bytes.
  const double y = kHeader + l.height + 18, bar = std::min(260.0, width - 2 * kMargin - 120);
  std::string stops;
  for (int k = 0; k <= 8; ++k)
    stops += "<stop offset=\"" + num(k / 8.0) + "\" stop-color=\"" + colour(k / 8.0) + "\"/>";
  svg.raw("<defs><linearGradient id=\"scale\">" + stops + "</linearGradient></defs>\n");
  svg.text({kMargin, y + 11}, "bytes", 11, "start", "fill=\"#444\"");
  svg.raw("<rect class=\"legend\" x=\"" + num(kMargin + 44) + "\" y=\"" + num(y) + "\" width=\"" +
          num(bar) + "\" height=\"12\" fill=\"url(#scale)\" stroke=\"#999\"/>\n");
  svg.text({kMargin + 44, y + 28}, "0", 10.5, "middle", "fill=\"#444\"");
  svg.text({kMargin + 44 + bar / 2, y + 28}, bytes_text(most / 2), 10.5, "middle", "fill=\"#444\"");
  svg.text({kMargin + 44 + bar, y + 28}, bytes_text(most), 10.5, "middle", "fill=\"#444\"");
  svg.save(path, "write_link_heatmap_svg");
}

std::string detail::picture::bytes_text(std::uint64_t b) {
  char buf[32];
  if (b >= 10u << 20)
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 10u << 10)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  return buf;
}

}  // namespace hypercomm
