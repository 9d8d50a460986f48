// browser-act.cpp: action_kind -> browser call.
#include "browser/common/browser-act.h"

namespace kvarena {

browser_result apply_action(browser& b, const action& a) {
  switch (a.kind) {
    case action_kind::click: return b.click(a.element_id);
    case action_kind::type: return b.type(a.element_id, a.text, a.press_enter);
    case action_kind::hover: return b.hover(a.element_id);
    case action_kind::press: return b.press(a.key);
    case action_kind::scroll: return b.scroll(a.direction == scroll_direction::up ? "up" : "down");
    case action_kind::clear: return b.clear(a.element_id);
    case action_kind::new_tab: return b.new_tab();
    case action_kind::tab_focus: return b.tab_focus(a.tab);
    case action_kind::close_tab: return b.close_tab();
    case action_kind::goto_url: return b.go_to(a.url);
    case action_kind::go_back: return b.go_back();
    case action_kind::go_forward: return b.go_forward();
    case action_kind::stop: return {};
    case action_kind::none: break;
  }
  return {"no action was run: the previous output was not a valid action (see the action list)", ""};
}

}  // namespace kvarena
