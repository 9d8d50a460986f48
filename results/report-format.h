// report-format.h: the pieces the report's text and HTML forms share (results-report,
// report-html, report-bench): a plain-text table, an HTML table, the page style, and the
// colour of the i-th plotted series.
// Not here: what goes into the tables and plots.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace kvarena::results {

// rows[0] is the header. Columns padded to their widest cell, the first left-aligned and the
// rest right-aligned (numbers), two spaces apart; each line starts with `indent` and ends
// without trailing spaces and with "\n".
std::string text_table(const std::vector<std::vector<std::string>>& rows, const std::string& indent = "");

// The same rows as <div class="wide"><table> with a <thead> and escaped cells.
std::string html_table(const std::vector<std::vector<std::string>>& rows);

// The CSS of every report page (inline, no fonts or network).
const char* report_page_css();

// One colour per series, by index (a 10-colour palette, repeating).
const char* series_color(size_t i);

}  // namespace kvarena::results
