// report-items.h: the trajectory viewer of `kvarena report --html FILE`: one page per item
// (task, policy, seed) in FILE's items folder, showing its every step: the observation the
// model was shown (and its Set-of-Marks screenshot when the run had them), the model's
// output, the parsed action and the env's complaint, the KV
// tokens and bytes (logical and allocated) and the confidence and budget at that step, the
// latency; and the item's evaluation: status, success, score, answer, final page, each
// evaluator's verdict with its reason. The main page (report-html.h) links to them from a
// table of items. Pages are self-contained (inline CSS, no JS) and well-formed XML.
#pragma once
#include <string>
#include <vector>

#include "results-db.h"
#include "results-report.h"

namespace kvarena::results {

// The page's file name inside the items folder: "<task>_<policy>_<seed>.html", characters
// other than letters, digits, '-' and '.' made '_'.
std::string item_page_name(const work_item& item);

struct item_page {
  std::string name;  // item_page_name
  std::string html;
};

// Every task row of the report's run with its steps, as pages. Reads r.file. A step's
// Set-of-Marks screenshot is shown from screenshots_base + its path (step-screenshots.h):
// screenshots_base is the results file's folder as seen from the pages' folder ("../" when
// the pages are in a folder beside the results file), ending in '/' unless empty.
std::vector<item_page> report_item_pages(const run_report& r, const std::string& screenshots_base = "");

// The main page's section listing every item (task, policy, seed, status, success, steps),
// each linking to items_dir/<item_page_name>.
std::string items_index_html(const run_report& r, const std::string& items_dir);

}  // namespace kvarena::results
