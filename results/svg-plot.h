// svg-plot.h: small self-contained SVG charts for the HTML report: a scatter with labelled
// points and a line chart, with axes, "nice" ticks and units (bytes shown in B/KiB/MiB/GiB
// chosen from the data, fractions as percent). Plain strings out; no JS, no fonts, no
// network. Each data mark carries data-series="<label>" so tests and tools can find it.
// Not here: what is plotted (report-html.cpp).
#pragma once
#include <string>
#include <vector>

namespace kvarena::results {

enum class axis_unit {
  number,   // plain values
  bytes,    // ticks in the binary unit that suits the largest value; the title gets "(MiB)"
  percent,  // values are fractions in [0, 1], shown as 0..100 %
};

struct plot_axis {
  std::string title;
  axis_unit unit = axis_unit::number;
};

struct plot_series {
  std::string label;
  std::string color;            // CSS colour, e.g. "#1f77b4"
  std::vector<double> x, y;     // (n,) each
  // Scatter only, optional: (n,) interval ends drawn as whiskers through each point
  // (e.g. a success rate's 95% interval); NaN ends are skipped.
  std::vector<double> y_low, y_high;
};

// A dashed horizontal reference line across the plot (e.g. the oracle's success rate).
struct plot_hline {
  std::string label;
  double y = 0;
};

struct plot_spec {
  std::string title;
  plot_axis x, y;
  std::vector<plot_series> series;
  bool lines = false;           // each series a polyline (else one circle per point)
  bool label_points = false;    // write the series label beside each point (scatter)
  std::vector<plot_hline> hlines;
  int width = 720, height = 420;  // pixels
};

// The chart as one <svg> element. Axes start at 0; an axis with no data spans [0, 1].
std::string svg_plot(const plot_spec& p);

// Tick values from 0 (or lo) to at least hi, 1, 2 or 5 times a power of ten apart, at most
// about `max_ticks` of them. hi <= lo gives {lo, lo + 1}.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);

// The binary unit that suits `max_bytes`: {"B", 1}, {"KiB", 1024}, {"MiB", 1 << 20}, {"GiB", 1 << 30}.
struct unit_scale {
  const char* name;
  double scale;
};
unit_scale byte_unit_for(double max_bytes);
// "12.5 MiB", "640 B"; "-" for NaN.
std::string format_bytes(double bytes);

// &, <, >, " and ' escaped for XML text and attribute values.
std::string xml_escape(const std::string& s);

}  // namespace kvarena::results
