// svg-plot.cpp: the SVG charts of svg-plot.h.
#include "svg-plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace kvarena::results {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string px(double v) { return fmt("%.1f", v); }

// <line .../> and <text ...>content</text>; `attrs` starts with a space (or is "").
std::string line_el(double x1, double y1, double x2, double y2, const std::string& attrs) {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\"" + attrs +
         "/>\n";
}

std::string text_el(double x, double y, const char* anchor, const std::string& escaped, const std::string& attrs) {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\"" + attrs + ">" + escaped +
         "</text>\n";
}

// A tick label with as many decimals as the tick step needs.
std::string tick_label(double v, double step) {
  int decimals = step >= 1 ? 0 : int(std::ceil(-std::log10(step) - 1e-9));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 6), v);
  return buf;
}

// One axis after looking at the data: how values map to display units and the ticks.
struct axis_scale {
  double factor = 1;            // display value = data value * factor
  std::string title;            // with the unit
  std::vector<double> ticks;    // in display units, from 0
  double hi() const { return ticks.back(); }
};

// `headroom` > 1 leaves space past the largest value (room for a point's label).
axis_scale make_axis(const plot_axis& a, double data_max, double headroom) {
  axis_scale s;
  s.title = a.title;
  if (!(data_max > 0) || !std::isfinite(data_max)) data_max = 0;
  switch (a.unit) {
    case axis_unit::number: break;
    case axis_unit::bytes: {
      auto u = byte_unit_for(data_max);
      s.factor = 1.0 / u.scale;
      s.title += std::string(" (") + u.name + ")";
      break;
    }
    case axis_unit::percent:
      s.factor = 100;
      s.title += " (%)";
      data_max = std::max(data_max, 1.0);
      break;
  }
  double hi = data_max * s.factor * (a.unit == axis_unit::percent ? 1 : headroom);
  s.ticks = nice_ticks(0, hi > 0 ? hi : 1, 6);
  return s;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  if (!(hi > lo)) return {lo, lo + 1};
  max_ticks = std::max(max_ticks, 2);
  double rough = (hi - lo) / (max_ticks - 1);
  double p10 = std::pow(10, std::floor(std::log10(rough)));
  double step = p10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * p10;
    if (step >= rough * (1 - 1e-9)) break;
  }
  std::vector<double> t;
  double first = std::floor(lo / step + 1e-9) * step;
  for (int i = 0;; ++i) {
    double v = first + i * step;
    if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0"
    t.push_back(v);
    if (v >= hi - step * 1e-9) break;
  }
  return t;
}

unit_scale byte_unit_for(double max_bytes) {
  if (max_bytes >= 1024.0 * 1024 * 1024) return {"GiB", 1024.0 * 1024 * 1024};
  if (max_bytes >= 1024.0 * 1024) return {"MiB", 1024.0 * 1024};
  if (max_bytes >= 1024.0) return {"KiB", 1024.0};
  return {"B", 1};
}

std::string format_bytes(double bytes) {
  if (std::isnan(bytes)) return "-";
  auto u = byte_unit_for(bytes);
  return u.scale == 1 ? fmt("%.0f B", bytes) : fmt("%.1f ", bytes / u.scale) + u.name;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string svg_plot(const plot_spec& p) {
  // Layout in pixels: the plot area inside the margins; the legend sits in the right margin.
  const double left = 78, right = p.lines ? 170 : 40, top = 40, bottom = 56;
  const double w = p.width - left - right, h = p.height - top - bottom;

  double xmax = 0, ymax = 0;
  for (const auto& s : p.series) {
    for (double v : s.x) if (std::isfinite(v)) xmax = std::max(xmax, v);
    for (double v : s.y) if (std::isfinite(v)) ymax = std::max(ymax, v);
    for (double v : s.y_high) if (std::isfinite(v)) ymax = std::max(ymax, v);
  }
  for (const auto& l : p.hlines) ymax = std::max(ymax, l.y);
  const double headroom = p.label_points ? 1.12 : 1;  // room for the label of the rightmost point
  const axis_scale ax = make_axis(p.x, xmax, headroom), ay = make_axis(p.y, ymax, headroom);
  // Data values to pixels; ticks are in display units (value * factor).
  auto X = [&](double v) { return left + v * ax.factor / ax.hi() * w; };
  auto Y = [&](double v) { return top + h - v * ay.factor / ay.hi() * h; };
  auto tick_x = [&](double t) { return X(t / ax.factor); };
  auto tick_y = [&](double t) { return Y(t / ay.factor); };

  const std::string W = std::to_string(p.width), H = std::to_string(p.height);
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + W + "\" height=\"" + H + "\" viewBox=\"0 0 " +
                  W + " " + H + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<title>" + xml_escape(p.title) + "</title>\n";
  o += text_el(left + w / 2, 22, "middle", xml_escape(p.title), " font-size=\"15\"");

  // Grid, tick labels, axis titles, axes.
  o += "<g stroke=\"#e3e3e3\">\n";
  for (double t : ax.ticks) o += line_el(tick_x(t), top, tick_x(t), top + h, "");
  for (double t : ay.ticks) o += line_el(left, tick_y(t), left + w, tick_y(t), "");
  o += "</g>\n<g fill=\"#333\">\n";
  const double xstep = ax.ticks[1] - ax.ticks[0], ystep = ay.ticks[1] - ay.ticks[0];
  for (double t : ax.ticks) o += text_el(tick_x(t), top + h + 17, "middle", tick_label(t, xstep), "");
  for (double t : ay.ticks) o += text_el(left - 7, tick_y(t) + 4, "end", tick_label(t, ystep), "");
  o += text_el(left + w / 2, p.height - 12, "middle", xml_escape(ax.title), "");
  o += "<text transform=\"translate(16," + px(top + h / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       xml_escape(ay.title) + "</text>\n";
  o += "</g>\n<g stroke=\"#333\">\n";
  o += line_el(left, top + h, left + w, top + h, "") + line_el(left, top, left, top + h, "");
  o += "</g>\n";

  for (const auto& l : p.hlines) {
    o += line_el(left, Y(l.y), left + w, Y(l.y),
                 " stroke=\"#777\" stroke-dasharray=\"6,4\" data-hline=\"" + xml_escape(l.label) + "\"");
    o += text_el(left + w - 4, Y(l.y) - 5, "end", xml_escape(l.label), " fill=\"#555\"");
  }

  // Point labels already placed: (x0, y0, x1, y1) boxes; a label that would overlap one moves
  // up a line at a time (policies with similar memory and success sit on top of each other).
  std::vector<std::array<double, 4>> placed;
  auto place_label = [&](double x, double y, const std::string& text) {
    const double wd = 7.0 * double(text.size()), ht = 13.0;
    for (int tries = 0; tries < 12; ++tries) {
      bool clash = false;
      for (const auto& b : placed) clash = clash || (x < b[2] && x + wd > b[0] && y - ht < b[3] && y > b[1]);
      if (!clash) break;
      y -= ht + 1;
    }
    placed.push_back({x, y - ht, x + wd, y});
    return y;
  };

  for (const auto& s : p.series) {
    const std::string label = xml_escape(s.label);
    const size_t n = std::min(s.x.size(), s.y.size());
    if (p.lines) {
      std::string pts;
      for (size_t i = 0; i < n; ++i) {
        if (i) pts += ' ';
        pts += px(X(s.x[i])) + "," + px(Y(s.y[i]));
      }
      o += "<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"1.6\" stroke-linejoin=\"round\" " +
           "data-series=\"" + label + "\" points=\"" + pts + "\"/>\n";
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      if (i < s.y_low.size() && i < s.y_high.size() && std::isfinite(s.y_low[i]) && std::isfinite(s.y_high[i])) {
        const double cx = X(s.x[i]), y0 = Y(s.y_low[i]), y1 = Y(s.y_high[i]);
        const std::string st = " stroke=\"" + s.color + "\" stroke-width=\"1.5\" data-interval=\"" + label + "\"";
        o += line_el(cx, y0, cx, y1, st) + line_el(cx - 5, y0, cx + 5, y0, st) + line_el(cx - 5, y1, cx + 5, y1, st);
      }
      const std::string tip = label + ": " + tick_label(s.x[i] * ax.factor, 0.01) + ", " +
                              tick_label(s.y[i] * ay.factor, 0.01);
      o += "<circle cx=\"" + px(X(s.x[i])) + "\" cy=\"" + px(Y(s.y[i])) + "\" r=\"5\" fill=\"" + s.color +
           "\" data-series=\"" + label + "\"><title>" + tip + "</title></circle>\n";
      if (p.label_points) {
        const double ly = place_label(X(s.x[i]) + 8, Y(s.y[i]) - 7, s.label);
        o += text_el(X(s.x[i]) + 8, ly, "start", label, " fill=\"" + s.color + "\"");
      }
    }
  }

  if (p.lines) {  // legend in the right margin
    double lx = left + w + 16, ly = top + 8;
    for (const auto& s : p.series) {
      o += line_el(lx, ly, lx + 22, ly, " stroke=\"" + s.color + "\" stroke-width=\"3\"");
      o += text_el(lx + 28, ly + 4, "start", xml_escape(s.label), "");
      ly += 18;
    }
  }
  o += "</svg>\n";
  return o;
}

}  // namespace kvarena::results
