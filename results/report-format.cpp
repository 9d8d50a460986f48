// report-format.cpp: the shared tables, style and colours of report-format.h.
#include "report-format.h"

#include <algorithm>
#include <iterator>

#include "svg-plot.h"

namespace kvarena::results {

std::string text_table(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  if (rows.empty()) return "";
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string o;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += c == 0 ? row[c] + pad : "  " + pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    o += line + "\n";
  }
  return o;
}

std::string html_table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return "";
  std::string o = "<div class=\"wide\">\n<table>\n<thead><tr>";
  for (const auto& h : rows[0]) o += "<th>" + xml_escape(h) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  for (size_t k = 1; k < rows.size(); ++k) {
    o += "<tr>";
    for (const auto& c : rows[k]) o += "<td>" + xml_escape(c) + "</td>";
    o += "</tr>\n";
  }
  return o + "</tbody>\n</table>\n</div>\n";
}

const char* report_page_css() {
  return R"css(
body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1500px; }
.wide { overflow-x: auto; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.92em; }
th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f4f4f4; }
.meta { color: #555; } .note { color: #555; font-size: 0.88em; }
.complete { color: #1a7f37; } .incomplete { color: #b42318; font-weight: bold; }
code { background: #f4f4f4; padding: 0 3px; }
)css";
}

const char* series_color(size_t i) {
  static const char* const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                        "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
  return palette[i % std::size(palette)];
}

}  // namespace kvarena::results
