// profile/TimelineSvg.cpp - laying out the timeline: fixed sizes in pixels,
// time scaled to the plot's width.
#include "profile/TimelineSvg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string_view>
#include <vector>

namespace cg::profile {
namespace {

constexpr double kLabelWidth = 110; // the track names' column
constexpr double kPlotWidth = 1000;
constexpr double kTop = 48; // title and axis
constexpr double kRowHeight = 30;
constexpr double kBoxHeight = 20;
constexpr double kCharWidth = 6.2; // of the 10 px labels inside boxes

struct Kind {
  std::string_view category, colour, legend;
};
constexpr Kind kKinds[] = {
    {"read", "#f2b447", "READ (waiting included)"},
    {"compute", "#4e79a7", "COMPUTE"},
    {"write", "#59a14f", "WRITE"},
    {"execute", "#9c9c9c", "execute()"},
    {"get", "#c7c7c7", "get()"},
    {"device", "#b07aa1", "GPU work (CUDA events)"},
};

std::string_view colourOf(const std::string& category) {
  for (const Kind& kind : kKinds)
    if (kind.category == category)
      return kind.colour;
  return "#e15759";
}

std::string escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

// A round step (1, 2 or 5 times a power of ten) giving about 8 ticks.
double tickStep(double span) {
  const double rough = span / 8;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= rough)
      return m * power;
  return 10 * power;
}

std::string duration(double us) {
  return us >= 1000 ? fmt::format("{:g} ms", us / 1000) : fmt::format("{:g} us", us);
}

} // namespace

std::string renderTimelineSvg(const Trace& trace, unsigned executions) {
  // Which executions: the last ones the driver got, else the last begun.
  std::set<std::uint64_t> got, all;
  for (const Slice& slice : trace.slices) {
    all.insert(slice.execution);
    if (slice.tid == 0 && slice.category == "get")
      got.insert(slice.execution);
  }
  const std::set<std::uint64_t>& pool = got.empty() ? all : got;
  std::vector<std::uint64_t> chosen(pool.begin(), pool.end());
  if (chosen.size() > executions)
    chosen.erase(chosen.begin(), chosen.end() - executions);
  const auto picked = [&](const Slice& s) {
    return std::binary_search(chosen.begin(), chosen.end(), s.execution);
  };

  // The window: from the first chosen execute() (a READ may have waited
  // long before it, for the driver: it is cut there) to the last operation's end.
  std::vector<const Slice*> slices;
  double t0 = 0, t1 = 0;
  bool driverStart = false;
  for (const Slice& slice : trace.slices) {
    if (!picked(slice))
      continue;
    if (slice.tid == 0 && slice.category == "execute" && (!driverStart || slice.start < t0)) {
      t0 = slice.start;
      driverStart = true;
    }
    if (!driverStart)
      t0 = slices.empty() ? slice.start : std::min(t0, slice.start);
    t1 = slices.empty() ? slice.end() : std::max(t1, slice.end());
    slices.push_back(&slice);
  }
  const double span = std::max(t1 - t0, 1e-3);
  const auto x = [&](double t) { return kLabelWidth + (std::max(t, t0) - t0) / span * kPlotWidth; };

  std::vector<int> rows; // tids: the driver first, then the actors
  for (const auto& [tid, name] : trace.tracks)
    rows.push_back(tid);
  for (const Slice* slice : slices)
    if (std::find(rows.begin(), rows.end(), slice->tid) == rows.end())
      rows.push_back(slice->tid);
  // As a viewer shows them (an actor's GPU track under it), else by tid.
  const auto order = [&](int tid) {
    auto it = trace.sort_index.find(tid);
    return it != trace.sort_index.end() ? it->second : 2L * tid;
  };
  std::sort(rows.begin(), rows.end(), [&](int a, int b) { return order(a) < order(b); });
  const auto rowY = [&](int tid) {
    return kTop + kRowHeight *
                      static_cast<double>(std::find(rows.begin(), rows.end(), tid) - rows.begin());
  };
  const double plotBottom = kTop + kRowHeight * static_cast<double>(rows.size());
  const double width = kLabelWidth + kPlotWidth + 20;
  const double height = plotBottom + 44;

  std::string out;
  auto it = std::back_inserter(out);
  fmt::format_to(it,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"Helvetica, Arial, sans-serif\">\n",
                 width, height);
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"6\" "
         "markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#555\"/>"
         "</marker></defs>\n";
  const std::string which = chosen.empty() ? std::string("no execution")
                            : chosen.size() == 1
                                ? fmt::format("execution {}", chosen.front())
                                : fmt::format("executions {} to {}", chosen.front(), chosen.back());
  fmt::format_to(it, "<text x=\"8\" y=\"18\" font-size=\"13\">{}</text>\n",
                 escaped(fmt::format("graph '{}': {}, {}{}", trace.graph, which,
                                     span >= 1000 ? fmt::format("{:.2f} ms", span / 1000)
                                                  : fmt::format("{:.1f} us", span),
                                     sampledNote(trace))));

  // The time axis: ticks from the window's start, with grid lines.
  const double step = tickStep(span);
  for (double t = 0; t <= span + 1e-9; t += step) {
    const double tx = x(t0 + t);
    fmt::format_to(it,
                   "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e6e6e6\"/>"
                   "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"9\" text-anchor=\"middle\" "
                   "fill=\"#555\">{4}</text>\n",
                   tx, kTop - 4, plotBottom, kTop - 8, duration(t));
  }
  for (int tid : rows)
    fmt::format_to(it, "<text class=\"track\" x=\"8\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n",
                   rowY(tid) + kRowHeight / 2 + 4, escaped(trace.track(tid)));

  for (const Slice* slice : slices) {
    const double left = x(slice->start);
    const double boxWidth = std::max(x(slice->end()) - left, 0.6);
    const double top = rowY(slice->tid) + (kRowHeight - kBoxHeight) / 2;
    fmt::format_to(it,
                   "<rect class=\"op\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" "
                   "fill=\"{}\"><title>{}</title></rect>\n",
                   left, top, boxWidth, kBoxHeight, colourOf(slice->category),
                   escaped(fmt::format("{} (execution {}): {:.2f} us", slice->name,
                                       slice->execution, slice->duration)));
    // Its name inside, when it fits.
    if (boxWidth > kCharWidth * static_cast<double>(slice->name.size()) + 6)
      fmt::format_to(it,
                     "<text x=\"{:.2f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"white\" "
                     "pointer-events=\"none\">{}</text>\n",
                     left + 3, top + kBoxHeight / 2 + 3.5, escaped(slice->name));
  }

  // Each value's trip: from its WRITE's end to the end of each READ of it.
  for (const Slice* write : slices) {
    if (write->category != "write")
      continue;
    for (const Slice* read : slices)
      if (read->category == "read" && read->channel == write->channel &&
          read->execution == write->execution && read->tid != write->tid)
        fmt::format_to(it,
                       "<line class=\"flow\" x1=\"{:.2f}\" y1=\"{:.1f}\" x2=\"{:.2f}\" "
                       "y2=\"{:.1f}\" stroke=\"#555\" stroke-width=\"0.8\" "
                       "marker-end=\"url(#arrow)\"/>\n",
                       x(write->end()), rowY(write->tid) + kRowHeight / 2, x(read->end()),
                       rowY(read->tid) + kRowHeight / 2);
  }

  // The legend.
  double lx = kLabelWidth;
  for (const Kind& kind : kKinds) {
    fmt::format_to(it,
                   "<rect x=\"{0:.1f}\" y=\"{1}\" width=\"12\" height=\"12\" fill=\"{2}\"/>"
                   "<text x=\"{3:.1f}\" y=\"{4}\" font-size=\"10\">{5}</text>\n",
                   lx, plotBottom + 16, kind.colour, lx + 16, plotBottom + 26,
                   escaped(kind.legend));
    lx += 40 + kCharWidth * static_cast<double>(kind.legend.size());
  }
  fmt::format_to(it,
                 "<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">arrows: a value from its "
                 "WRITE to the READ it ends</text>\n",
                 lx, plotBottom + 26);
  out += "</svg>\n";
  return out;
}

} // namespace cg::profile
