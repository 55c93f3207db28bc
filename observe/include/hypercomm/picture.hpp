// Pictures of a traced run, drawn the way Grama et al. draw them (issue "The textbook side by
// side"): the topology as the book lays it out, one panel per communication step with an arrow
// per message and, beside every VP, the contributions it knows after the step; and a heat map
// of the bytes each directed link carried.
#pragma once

#include <hypercomm/export.hpp>
#include <hypercomm/report.hpp>
#include <hypercomm/topology.hpp>
#include <string>

HYPERCOMM_PUBLIC_BEGIN

namespace hypercomm {

// The step-by-step picture of a traced run (Options::trace = true; hypercomm::Error otherwise)
// as an SVG file. A step is what the VPs send at the same time under unit costs (every message
// takes one time unit: the model time with the default model, ts = 1, tw = th = 0), within one
// collective call; each collective call is drawn on its own, its steps numbered from 1. The
// label beside VP i is the set of VPs it has heard from, directly or through others, since its
// collective began: i at first, then a message from u to v adds to v what u knew when the step
// began (for all-to-all broadcast and prefix sums: Grama et al., Figures 4.8, 4.11 and 4.13).
// Layouts: ring, VPs on a circle; linear array, VPs in a row; open mesh, the grid; torus, the grid
// with its wraparound links as short stubs; hypercube, d <= 4 as the book's square, cube and pair
// of cubes, d > 4 as a grid of the low and the high half of the bits in Gray-code order. Messages
// between non-neighbours (routed) are dashed straight arrows. Panels carry class="panel",
// message arrows class="msg".
// Throws hypercomm::Error when the file cannot be written or the report is not of `topology`.
void write_svg(const Report& report, const Topology& topology, const std::string& path);

// Report::link_traffic as an SVG heat map: every directed link that carried traffic coloured
// (and thickened) by its bytes, drawn to the right of its direction, with a legend; links that
// carried nothing in light grey. Used links carry class="link" and a tooltip with their counts.
// Needs no trace. Throws hypercomm::Error as write_svg does.
void write_link_heatmap_svg(const Report& report, const Topology& topology,
                            const std::string& path);

// Report::write_chrome_trace as a free function, like the pictures: a Chrome/Perfetto trace
// (JSON) of a traced run, one track per VP in a "wall time" and a "model time" process, a span
// per collective, send, receive and wait, and a flow arrow per message. Throws hypercomm::Error
// when the file cannot be written.
void write_chrome_trace(const Report& report, const std::string& path);

// Converts an SVG file to PNG with the rsvg-convert command (Debian librsvg2-bin). Returns
// false when the command is not installed or fails.
bool svg_to_png(const std::string& svg, const std::string& png);

}  // namespace hypercomm

HYPERCOMM_PUBLIC_END
