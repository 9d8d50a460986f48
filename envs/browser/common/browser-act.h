// browser-act.h: runs one parsed agent action (eval/action-parse.h) on any browser backend:
// the glue between the action grammar and the browser interface. `stop` does nothing here
// (the agent loop ends the episode); a parse failure (kind none) is reported, not run.
#pragma once
#include "browser/common/browser.h"
#include "eval/action-parse.h"

namespace kvarena {

browser_result apply_action(browser& b, const action& a);

}  // namespace kvarena
