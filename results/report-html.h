// report-html.h: the report as one self-contained HTML page (inline CSS, no JS, no network):
// the run, the per-policy table of report_table(), and two SVG plots drawn by svg-plot.h:
//   1. success rate vs median peak KV memory, one labelled point per policy (the oracle as
//      a dashed line: the upper bound);
//   2. KV bytes over the tokens of one item (report_options.trace_task or the longest
//      trace), one line per policy: CONF-KV's sawtooth;
// and, with an items folder, a table of every item linking to its steps (report-items.h).
// The page is well-formed XML (void elements self-closed), so XML tools can read it.
#pragma once
#include <string>

#include "results-report.h"

namespace kvarena::results {

// items_dir: where the item pages of report-items.h are, relative to the page; "" for none
// (then no items table).
// extra_html: a section placed after the plots (the benchmarks of report-bench.h).
std::string report_html(const run_report& r, const std::string& items_dir = "", const std::string& extra_html = "");

}  // namespace kvarena::results
