// oracle-visibility.h: how much of a suite an agent can see at an observation budget. For
// each step of the scripted oracle that acts on an element (click, type, hover, clear
// [id]), is that element's line inside the page it was chosen on once the page is cut to
// N tokens of the model's tokenizer, as the agent cuts it (obs-truncate.h)? A task whose
// every such step passes is one an agent following the oracle's path sees enough of; the
// others need an element the agent was never shown (or another path, e.g. scrolling).
// `kvarena tasks oracle --visible-at 1024,2048` prints it per budget.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvarena {

class tokenizer;

struct oracle_step_record {
  size_t task = 0;          // which task (an index)
  std::string observation;  // the page text the oracle chose the action on
  std::string action;       // the action it sent, e.g. "click [12]"
};

struct visibility_at_budget {
  int64_t budget = 0;            // tokens; 0: no limit
  int64_t steps = 0;             // steps acting on an element
  int64_t steps_visible = 0;     // ... whose element is inside the cut page
  int64_t tasks = 0;             // tasks with at least one step
  int64_t tasks_all_visible = 0; // ... whose every such step is visible (none: visible)
};

// True when a line of `page` starts, after its indentation, with "[id]".
bool page_shows_element(const std::string& page, int64_t id);

// One entry per budget, in the order given. Steps whose action names no element (scroll,
// goto, stop, ...) are not counted, and they do not make a task invisible.
std::vector<visibility_at_budget> oracle_visibility(const std::vector<oracle_step_record>& steps,
                                                    const tokenizer& tok, const std::vector<int64_t>& budgets);

}  // namespace kvarena
