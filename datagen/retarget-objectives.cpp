// retarget-objectives.cpp: see retarget-objectives.h.
#include "retarget-objectives.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "eval/action-parse.h"
#include "agent-action.h"
#include "conversation.h"
#include "sites/seed-data.h"
#include "rename-quoted-names.h"

namespace kvarena {

std::vector<page_line> page_lines(const std::string& observation) {
  std::vector<page_line> out;
  for (size_t a = 0; a <= observation.size();) {
    size_t e = observation.find('\n', a);
    if (e == std::string::npos) e = observation.size();
    const std::string_view line(observation.data() + a, e - a);
    a = e + 1;
    page_line l;
    size_t p = 0;
    while (p < line.size() && line[p] == '\t') ++p;
    l.depth = static_cast<int>(p);
    out.push_back(l);
    // "[id] role 'name'..." or "[id] role \"name\"..."
    if (p >= line.size() || line[p] != '[') continue;
    const size_t close = line.find(']', p);
    if (close == std::string_view::npos || close == p + 1) continue;
    const std::string_view digits = line.substr(p + 1, close - p - 1);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) || digits.size() > 12)
      continue;
    const size_t role_at = close + 2;
    if (close + 1 >= line.size() || line[close + 1] != ' ' || role_at >= line.size()) continue;
    size_t role_end = role_at;
    while (role_end < line.size() && line[role_end] != ' ') ++role_end;
    page_line& x = out.back();
    x.id = std::stoll(std::string(digits));
    x.role = std::string(line.substr(role_at, role_end - role_at));
    if (role_end + 1 < line.size() && (line[role_end + 1] == '\'' || line[role_end + 1] == '"')) {
      const char q = line[role_end + 1];
      // The name ends at the last quote of its kind that is followed by the end or a space
      // (names hold apostrophes: "Men's Clothing" is written in double quotes).
      size_t end = std::string_view::npos;
      for (size_t j = role_end + 2; j < line.size(); ++j)
        if (line[j] == q && (j + 1 == line.size() || line[j + 1] == ' ')) {
          end = j;
          break;
        }
      if (end != std::string_view::npos) x.name = std::string(line.substr(role_end + 2, end - role_end - 2));
    }
    x.selected = line.find(" selected: True", role_end) != std::string_view::npos;
  }
  return out;
}

size_t parent_line(const std::vector<page_line>& lines, size_t k) {
  for (size_t j = k; j-- > 0;)
    if ((lines[j].id >= 0 || lines[j].depth > 0) && lines[j].depth < lines[k].depth) return j;
  return k;
}

std::vector<size_t> sibling_lines(const std::vector<page_line>& lines, size_t k, size_t container) {
  std::vector<size_t> out;
  const page_line& me = lines[k];
  for (size_t j = container + 1; j < lines.size() && lines[j].depth > lines[container].depth; ++j)
    if (j != k && lines[j].id >= 0 && lines[j].depth == me.depth && lines[j].role == me.role && !lines[j].name.empty())
      out.push_back(j);
  return out;
}

size_t sibling_container(const std::vector<page_line>& lines, size_t k) {
  const size_t parent = parent_line(lines, k);
  size_t c = parent;
  for (int level = 0; c != k && sibling_lines(lines, k, c).empty(); ++level) {
    const size_t up = parent_line(lines, c);
    if (level == k_sibling_levels || up == c) return parent;
    c = up;
  }
  return c;
}

namespace {

size_t line_of(const std::vector<page_line>& lines, int64_t id) {
  for (size_t j = 0; j < lines.size(); ++j)
    if (lines[j].id == id) return j;
  return lines.size();
}

// Whether `name` stands in `text` as a whole (not inside a longer word).
bool contains_whole(const std::string& text, const std::string& name) {
  return replace_whole(text, name, std::string(1, '\x01')) != text;
}

// Moves n distinct elements of v, drawn from rng, to its front (a partial Fisher-Yates
// shuffle); n <= v.size().
template <class T>
void draw_to_front(std::vector<T>& v, size_t n, sites::seed_rng& rng) {
  for (size_t j = 0; j < n; ++j) std::swap(v[j], v[j + rng.index(v.size() - j)]);
}

// A retargeting with the sibling's name (retarget_step's work; the scroll variants filter by it).
struct named_variant {
  retargeted_step step;
  std::string name;
};

// Step i's variants (`act`: its action, parsed) when it picks an element the objective names.
std::vector<named_variant> retarget_pick(const trajectory& tr, size_t i, const action& act, size_t variants,
                                         uint64_t seed) {
  std::vector<named_variant> out;
  const seen_step& s = tr.steps[i];
  const bool pick = act.kind == action_kind::click || act.kind == action_kind::hover;
  const bool choose = act.kind == action_kind::type;
  if ((!pick && !choose) || act.element_id < 0) return out;
  const std::vector<page_line> lines = page_lines(s.observation);
  size_t k = line_of(lines, act.element_id);
  if (k == lines.size()) return out;
  size_t container = sibling_container(lines, k);
  if (choose) {  // the option of that text below the combobox typed into
    if (lines[k].role != "combobox") return out;
    const int depth = lines[k].depth;
    size_t opt = lines.size();
    for (size_t j = k + 1; j < lines.size() && lines[j].depth > depth; ++j)
      if (lines[j].role == "option" && lines[j].name == act.text) {
        opt = j;
        break;
      }
    if (opt == lines.size()) return out;
    container = k;
    k = opt;
  }
  const std::string& name = lines[k].name;
  if (name.size() < 2 || !contains_whole(tr.intent, name)) return out;
  std::map<std::string, int> same_role;  // name -> elements of this role that have it
  for (const page_line& l : lines)
    if (l.id >= 0 && l.role == lines[k].role) ++same_role[l.name];
  std::vector<size_t> eligible;
  if (container == k) return out;
  for (size_t j : sibling_lines(lines, k, container)) {
    const std::string& n = lines[j].name;
    if (lines[j].selected || n == name || same_role[n] != 1 || contains_whole(tr.intent, n)) continue;
    if (n.find_first_of("[]\n") != std::string::npos) continue;  // would not survive the action's brackets
    eligible.push_back(j);
  }
  sites::seed_rng rng(seed, 0x72657461ull);  // "reta"
  const size_t n = std::min(eligible.size(), variants);
  draw_to_front(eligible, n, rng);  // n distinct siblings
  for (size_t j = 0; j < n; ++j) {
    const page_line& to = lines[eligible[j]];
    action a = act;
    if (pick) a.element_id = to.id;
    else a.text = to.name;
    out.push_back({{replace_whole(tr.intent, name, to.name), to_string(a)}, to.name});
  }
  return out;
}

}  // namespace

std::vector<retargeted_step> retarget_step(const trajectory& tr, size_t i, int variants, uint64_t seed) {
  std::vector<retargeted_step> out;
  if (variants <= 0 || i >= tr.steps.size()) return out;
  const action_parse_result parsed = parse_action(tr.steps[i].action);
  if (!parsed.ok()) return out;
  if (parsed.act.kind != action_kind::scroll) {
    for (named_variant& v : retarget_pick(tr, i, parsed.act, size_t(variants), seed)) out.push_back(std::move(v.step));
    return out;
  }
  // A scroll toward the named element: the step after the scrolls picks it. Its variants that
  // name an element this page does not show either are this step's: scroll on.
  action_parse_result next;
  size_t j = i + 1;
  for (; j < tr.steps.size(); ++j)
    if (next = parse_action(tr.steps[j].action); !next.ok() || next.act.kind != action_kind::scroll) break;
  if (j == tr.steps.size() || !next.ok()) return out;
  std::set<std::string> shown;
  for (const page_line& l : page_lines(tr.steps[i].observation))
    if (!l.name.empty()) shown.insert(l.name);
  std::vector<named_variant> later = retarget_pick(tr, j, next.act, SIZE_MAX, seed);  // every one, in a drawn order
  std::vector<named_variant> eligible;
  for (named_variant& v : later)
    if (!shown.count(v.name)) eligible.push_back(std::move(v));
  sites::seed_rng rng(seed, 0x7363726Full);  // "scro"
  const size_t n = std::min(eligible.size(), size_t(variants));
  draw_to_front(eligible, n, rng);
  for (size_t k = 0; k < n; ++k) out.push_back({eligible[k].step.intent, tr.steps[i].action});
  return out;
}

std::vector<train_sequence> render_retargeted_steps(const trajectory& tr, int variants, double crop_share,
                                                    uint64_t seed, const tokenizer* tok, int64_t max_obs_tokens,
                                                    std::set<std::string>* intents) {
  std::vector<train_sequence> out;
  sites::seed_rng rng(seed, 0x63726F70ull);  // "crop"
  for (size_t i = 0; i < tr.steps.size(); ++i) {
    if (!tr.steps[i].note.empty()) continue;  // its note is a fact of the original objective
    const std::vector<retargeted_step> vs = retarget_step(tr, i, variants, seed * 1000003ull + i);
    for (const retargeted_step& v : vs) {
      if (intents) intents->insert(v.intent);
      // Steps 0..i, the earlier ones' pages left out (but a note step's, which its note by
      // element is read from): in history mode last only their actions reach step i's prompt.
      trajectory t;
      t.intent = v.intent;
      for (size_t j = 0; j < i; ++j) {
        const seen_step& e = tr.steps[j];
        t.steps.push_back({e.note.empty() ? "" : e.observation, e.url, e.action, e.note, e.note_element});
      }
      t.steps.push_back({tr.steps[i].observation, tr.steps[i].url, v.action, ""});
      const action_parse_result a = parse_action(v.action);
      if (rng.chance(crop_share) && a.ok() && a.act.element_id >= 0) {
        const int64_t before = rng.uniform(k_crop_lines_least, k_crop_lines_most),
                      after = rng.uniform(k_crop_lines_least, k_crop_lines_most);
        if (std::optional<std::string> cut = crop_observation(t.steps.back().observation, a.act.element_id, before, after))
          t.steps.back().observation = std::move(*cut);
      }
      std::vector<train_sequence> all = render_trajectory(t, history_mode::last, tok, max_obs_tokens);
      out.push_back(std::move(all.back()));
    }
  }
  return out;
}

}  // namespace kvarena
