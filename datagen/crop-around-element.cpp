// crop-around-element.cpp: agent-crop's steps (train-data.h crop_observation, render_cropped_steps):
// a step whose action names an element on its page, with the observation cut to its header
// and a few lines either side of that element's line (k_crop_lines_least..k_crop_lines_most,
// drawn per step from the seed), rendered as history mode last with the same reply: more
// practice per token at reading an element's id and copying names from the objective.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent-action.h"
#include "prompt.h"
#include "splitmix64.h"
#include "train-data.h"

namespace kvarena {

std::optional<std::string> crop_observation(const std::string& obs, int64_t element_id, int64_t before,
                                            int64_t after) {
  std::vector<std::string_view> lines;
  for (size_t a = 0; a <= obs.size();) {
    size_t e = obs.find('\n', a);
    if (e == std::string::npos) e = obs.size();
    lines.emplace_back(obs.data() + a, e - a);
    a = e + 1;
  }
  size_t body = 0;  // first line after the header's blank line
  while (body < lines.size() && !lines[body].empty()) ++body;
  body = std::min(body + 1, lines.size());
  std::string mark = "[";  // built by appends: GCC 12 warns falsely on "[" + std::string
  mark += std::to_string(element_id);
  mark += "] ";
  for (size_t i = body; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    l.remove_prefix(std::min(l.find_first_not_of('\t'), l.size()));
    if (l.substr(0, mark.size()) != mark) continue;
    const size_t from = std::max<size_t>(body, i - std::min<size_t>(i, static_cast<size_t>(std::max<int64_t>(0, before))));
    const size_t to = std::min(lines.size(), i + 1 + static_cast<size_t>(std::max<int64_t>(0, after)));
    std::string out;
    for (size_t j = 0; j < body; ++j) out.append(lines[j]).push_back('\n');
    for (size_t j = from; j < to; ++j) out.append(lines[j]).push_back('\n');
    if (!out.empty() && to == lines.size()) out.pop_back();  // the observation's own end
    return out;
  }
  return std::nullopt;
}

std::vector<train_sequence> render_cropped_steps(const trajectory& tr, uint64_t seed, const tokenizer* tok,
                                                 int64_t max_obs_tokens) {
  trajectory cropped = tr;
  std::vector<char> keep(tr.steps.size(), 0);
  uint64_t st = splitmix64(seed ^ 0x63726F70ull);
  for (size_t i = 0; i < tr.steps.size(); ++i) {
    if (!tr.steps[i].note.empty()) continue;  // its fact may be off the cut: not a crop step
    const agent_action a = extract_agent_action(compact_reply(tr.steps[i].action));
    if (!a.ok() || a.parsed.act.element_id < 0) continue;
    st = splitmix64(st + i);
    const uint64_t span = static_cast<uint64_t>(k_crop_lines_most - k_crop_lines_least + 1);
    const int64_t before = k_crop_lines_least + static_cast<int64_t>(st % span),
                  after = k_crop_lines_least + static_cast<int64_t>((st >> 20) % span);
    std::optional<std::string> c = crop_observation(tr.steps[i].observation, a.parsed.act.element_id, before, after);
    if (!c) continue;
    cropped.steps[i].observation = std::move(*c);
    keep[i] = 1;
  }
  std::vector<train_sequence> all = render_trajectory(cropped, history_mode::last, tok, max_obs_tokens);
  std::vector<train_sequence> out;
  for (size_t i = 0; i < all.size() && i < keep.size(); ++i)
    if (keep[i]) out.push_back(std::move(all[i]));
  return out;
}

}  // namespace kvarena
