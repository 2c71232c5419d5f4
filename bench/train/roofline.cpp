// The roofline table and plot (see roofline.hpp).
#include "roofline.hpp"

#include <axon/train/atomic_file.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace axon::bench {
namespace {

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A decade's label: 0.01, 0.1, 1, 10, 100, ...
std::string decade(int e) { return fmt("%g", std::pow(10.0, e)); }

// Log-log axes mapped onto the plot area.
struct Axes {
  int x_lo, x_hi, y_lo, y_hi;  // decades shown
  double left = 80, top = 50, width = 760, height = 480;
  double x(double v) const { return left + width * (std::log10(v) - x_lo) / (x_hi - x_lo); }
  double y(double v) const { return top + height - height * (std::log10(v) - y_lo) / (y_hi - y_lo); }
};

// Each Bound's name in the table and colour in the plot, in the enum's order.
struct BoundStyle {
  const char* name;
  const char* colour;
};
constexpr BoundStyle kBoundStyles[] = {{"compute", "#36c"}, {"memory", "#e90"}, {"call", "#999"}};

const char* bound_colour(Bound b) { return kBoundStyles[static_cast<int>(b)].colour; }

// One op and layer's totals against the roofs (its calls have one shape).
RooflineRow layer_row(const OpTime& t, const Roofs& roofs) {
  RooflineRow r;
  r.op = t;
  r.name = t.layer.empty() ? t.op : t.op + " " + t.layer;
  const double flops = static_cast<double>(t.flops), bytes = static_cast<double>(t.bytes);
  const double compute_s = flops / (roofs.peak_gflops * 1e9), memory_s = bytes / (roofs.bandwidth_gbs * 1e9);
  const double work_s = std::max(compute_s, memory_s);
  const double calls_s = static_cast<double>(t.calls) * roofs.call_seconds;
  r.bound = calls_s > work_s ? Bound::call : compute_s >= memory_s ? Bound::compute : Bound::memory;
  r.bound_seconds = calls_s + work_s;
  return r;
}

// The rates and share from a row's totals and bound time.
void finish(RooflineRow& r) {
  const double flops = static_cast<double>(r.op.flops), bytes = static_cast<double>(r.op.bytes);
  r.intensity = bytes > 0 ? flops / bytes : 0;
  r.gflops = r.op.seconds > 0 ? flops / r.op.seconds / 1e9 : 0;
  r.gbs = r.op.seconds > 0 ? bytes / r.op.seconds / 1e9 : 0;
  r.share = r.op.seconds > 0 ? r.bound_seconds / r.op.seconds : 0;
}

}  // namespace

const char* bound_name(Bound b) { return kBoundStyles[static_cast<int>(b)].name; }

std::vector<RooflineRow> roofline_layer_rows(const std::vector<OpTime>& by_layer, const Roofs& roofs) {
  std::vector<RooflineRow> rows;
  for (const OpTime& t : by_layer) {
    rows.push_back(layer_row(t, roofs));
    finish(rows.back());
  }
  return rows;
}

std::vector<RooflineRow> roofline_rows(const std::vector<OpTime>& by_layer, const Roofs& roofs) {
  // The layers' rows summed per (op, bound), in order of first appearance.
  std::vector<RooflineRow> rows;
  for (const OpTime& t : by_layer) {
    const RooflineRow part = layer_row(t, roofs);
    auto row = std::find_if(rows.begin(), rows.end(),
                            [&](const RooflineRow& r) { return r.op.op == t.op && r.bound == part.bound; });
    if (row == rows.end()) {
      RooflineRow r;
      r.op.op = t.op;
      r.op.device = t.device;
      r.bound = part.bound;
      row = rows.insert(rows.end(), r);
    }
    row->op.calls += t.calls;
    row->op.seconds += t.seconds;
    row->op.flops += t.flops;
    row->op.bytes += t.bytes;
    row->bound_seconds += part.bound_seconds;
  }
  for (RooflineRow& r : rows) {
    const auto same_op = [&](const RooflineRow& o) { return o.op.op == r.op.op; };
    const bool split = std::count_if(rows.begin(), rows.end(), same_op) > 1;
    r.name = split ? r.op.op + " (" + bound_name(r.bound) + ")" : r.op.op;
    finish(r);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const RooflineRow& a, const RooflineRow& b) { return a.op.seconds > b.op.seconds; });
  return rows;
}

void print_roofline(const std::vector<RooflineRow>& rows, const Roofs& roofs, bool legend) {
  size_t width = 38;
  for (const RooflineRow& r : rows) width = std::max(width, r.name.size());
  const int w = static_cast<int>(width);
  std::printf("  %-*s %9s %9s %8s %8s %8s %7s %9s %7s\n", w, "op", "GFLOP", "MB", "FLOP/B", "GFLOP/s", "GB/s", "bound",
              "bound ms", "share");
  for (const RooflineRow& r : rows)
    std::printf("  %-*s %9.3f %9.1f %8.2f %8.2f %8.2f %7s %9.3f %6.1f%%\n", w, r.name.c_str(),
                static_cast<double>(r.op.flops) / 1e9, static_cast<double>(r.op.bytes) / 1e6, r.intensity, r.gflops,
                r.gbs, bound_name(r.bound), 1e3 * r.bound_seconds, 100 * r.share);
  if (!legend) return;
  std::printf("  (bound, per op and layer: compute when FLOP/B >= the balance %.2f, else memory, or call where the "
              "calls' floor of %.2f us\n   each exceeds that roof's time; an op whose layers fall under several "
              "bounds has a row for each; bound ms: the calls' floor\n   plus the roof's time; share: the bound time "
              "over the time taken)\n",
              roofs.balance(), 1e6 * roofs.call_seconds);
}

void write_roofline_svg(const std::filesystem::path& file, const std::vector<RooflineRow>& rows, const Roofs& roofs,
                        const std::string& title) {
  double total = 0;
  double i_lo = roofs.balance(), i_hi = roofs.balance(), g_lo = roofs.peak_gflops, g_hi = roofs.peak_gflops;
  for (const RooflineRow& r : rows) {
    total += r.op.seconds;
    if (r.intensity <= 0 || r.gflops <= 0) continue;
    i_lo = std::min(i_lo, r.intensity), i_hi = std::max(i_hi, r.intensity);
    g_lo = std::min(g_lo, r.gflops), g_hi = std::max(g_hi, r.gflops);
  }
  // Whole decades with room around the points and roofs.
  Axes ax{static_cast<int>(std::floor(std::log10(i_lo / 2))), static_cast<int>(std::ceil(std::log10(i_hi * 2))),
          static_cast<int>(std::floor(std::log10(g_lo / 2))), static_cast<int>(std::ceil(std::log10(g_hi * 2)))};
  const double x_min = std::pow(10.0, ax.x_lo), x_max = std::pow(10.0, ax.x_hi);
  const double y_min = std::pow(10.0, ax.y_lo);

  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"600\" viewBox=\"0 0 900 600\" "
       "font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"900\" height=\"600\" fill=\"white\"/>\n"
    << "<text x=\"450\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << xml_escaped(title) << "</text>\n"
    << "<clipPath id=\"plot\"><rect x=\"" << ax.left << "\" y=\"" << ax.top << "\" width=\"" << ax.width
    << "\" height=\"" << ax.height << "\"/></clipPath>\n";
  // Decade grid and labels.
  for (int e = ax.x_lo; e <= ax.x_hi; ++e) {
    const double x = ax.x(std::pow(10.0, e));
    s << "<line x1=\"" << x << "\" y1=\"" << ax.top << "\" x2=\"" << x << "\" y2=\"" << ax.top + ax.height
      << "\" stroke=\"#ddd\"/>\n<text x=\"" << x << "\" y=\"" << ax.top + ax.height + 16
      << "\" text-anchor=\"middle\">" << decade(e) << "</text>\n";
  }
  for (int e = ax.y_lo; e <= ax.y_hi; ++e) {
    const double y = ax.y(std::pow(10.0, e));
    s << "<line x1=\"" << ax.left << "\" y1=\"" << y << "\" x2=\"" << ax.left + ax.width << "\" y2=\"" << y
      << "\" stroke=\"#ddd\"/>\n<text x=\"" << ax.left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
      << decade(e) << "</text>\n";
  }
  s << "<rect x=\"" << ax.left << "\" y=\"" << ax.top << "\" width=\"" << ax.width << "\" height=\"" << ax.height
    << "\" fill=\"none\" stroke=\"black\"/>\n"
    << "<text x=\"" << ax.left + ax.width / 2 << "\" y=\"" << ax.top + ax.height + 36
    << "\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte)</text>\n"
    << "<text transform=\"translate(24 " << ax.top + ax.height / 2
    << ") rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>\n";
  // The roofs: bandwidth x intensity up to the balance, the sgemm rate after.
  s << "<g clip-path=\"url(#plot)\"><polyline class=\"roof\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2\" points=\""
    << ax.x(x_min) << "," << ax.y(roofs.bandwidth_gbs * x_min) << " " << ax.x(roofs.balance()) << ","
    << ax.y(roofs.peak_gflops) << " " << ax.x(x_max) << "," << ax.y(roofs.peak_gflops) << "\"/></g>\n"
    << "<text x=\"" << ax.x(roofs.balance()) + 6 << "\" y=\"" << ax.y(roofs.peak_gflops) - 6 << "\" fill=\"#c00\">"
    << fmt("sgemm %.1f GFLOP/s", roofs.peak_gflops) << "</text>\n"
    << "<text x=\"" << ax.left << "\" y=\"" << ax.top - 8 << "\" fill=\"#c00\">"
    << fmt("memory %.1f GB/s", roofs.bandwidth_gbs) << fmt(", balance %.2f FLOP/B", roofs.balance()) << "</text>\n";
  // One point per op; its area is its share of the ops' time. A label that
  // would overlap an earlier one moves down a line.
  int on_edge = 0;
  struct Box {
    double x0, y0, x1, y1;
  };
  std::vector<Box> labels;
  auto place_label = [&labels](double x, double y, size_t chars) {
    const double w = 6.2 * static_cast<double>(chars), h = 12;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Box& b : labels)
        if (x < b.x1 && x + w > b.x0 && y - h < b.y1 && y > b.y0) {
          y = b.y1 + h;
          moved = true;
        }
    }
    labels.push_back({x, y - h, x + w, y});
    return y;
  };
  for (const RooflineRow& r : rows) {
    const bool plotted = r.intensity > 0 && r.gflops > 0;
    const double x = plotted ? ax.x(r.intensity) : ax.left + 12 + 150.0 * (on_edge / 4);
    const double y = plotted ? ax.y(r.gflops) : ax.y(y_min) - 12 - 12.0 * (on_edge % 4);
    if (!plotted) ++on_edge;
    const double radius = 2 + 24 * std::sqrt(total > 0 ? r.op.seconds / total : 0);
    const std::string name = xml_escaped(r.name);
    const std::string label = r.name + (plotted ? "" : " (no FLOPs)");
    const double label_y = place_label(x + radius + 2, y + 4, label.size());
    s << "<g class=\"op\" data-op=\"" << name << "\"><title>" << name << ": "
      << fmt("%.3g FLOP/B, ", r.intensity) << fmt("%.3g GFLOP/s, ", r.gflops)
      << fmt("%.1f%% of the ops' time, ", total > 0 ? 100 * r.op.seconds / total : 0)
      << fmt("%.1f%% of its bound", 100 * r.share) << "</title><circle cx=\"" << x << "\" cy=\"" << y << "\" r=\""
      << radius << "\" fill=\"" << bound_colour(r.bound) << "\" fill-opacity=\"0.5\" stroke=\"#333\"/>"
      << "<text x=\"" << x + radius + 2 << "\" y=\"" << label_y << "\">" << xml_escaped(label) << "</text></g>\n";
  }
  s << "<text x=\"" << ax.left + ax.width << "\" y=\"" << ax.top - 8 << "\" text-anchor=\"end\" fill=\"#555\">"
    << "blue: compute-bound, orange: memory-bound, grey: call-bound; area: share of the ops' time</text>\n"
    << "</svg>\n";
  train::write_file_atomically(file, s.str());
}

}  // namespace axon::bench
