// revalue-noted-numbers.cpp: see revalue-noted-numbers.h.
#include "revalue-noted-numbers.h"

#include <algorithm>
#include <cctype>

#include "page-element.h"
#include "sites/seed-data.h"
#include "rename-quoted-names.h"

namespace kvarena {
namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Whether `text` holds `number` not as part of a longer number or word.
bool holds_number(const std::string& text, const std::string& number) {
  return find_whole(text, number) != std::string::npos;
}

}  // namespace

std::string first_number(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!digit(text[i])) continue;
    size_t e = i;  // digits, and commas between digits ("12,800")
    while (e < text.size() && (digit(text[e]) || (text[e] == ',' && e + 1 < text.size() && digit(text[e + 1])))) ++e;
    if (e + 1 < text.size() && text[e] == '.' && digit(text[e + 1])) {  // the decimals
      ++e;
      while (e < text.size() && digit(text[e])) ++e;
    }
    return text.substr(i, e - i);
  }
  return "";
}

std::string random_number_like(const std::string& number, uint64_t seed) {
  if (std::none_of(number.begin(), number.end(), digit)) return number;
  for (uint64_t attempt = 0;; ++attempt) {
    sites::seed_rng rng(seed + attempt * 0x9E3779B97F4A7C15ull, 0x72657661ull);  // "reva"
    std::string out = number;
    bool first = true;
    for (char& c : out) {
      if (!digit(c)) continue;
      if (first) c = static_cast<char>('0' + rng.uniform(1, std::min<int64_t>(9, std::max<int64_t>(1, 2 * (c - '0')))));
      else c = static_cast<char>('0' + rng.uniform(0, 9));
      first = false;
    }
    if (out != number || attempt >= 8) return out;
  }
}

std::vector<train_sequence> render_revalued_steps(const trajectory& tr, int copies, uint64_t seed,
                                                  const tokenizer* tok, int64_t max_obs_tokens) {
  std::vector<train_sequence> out;
  const auto noted = std::find_if(tr.steps.begin(), tr.steps.end(), [](const seen_step& s) { return !s.note.empty(); });
  if (noted == tr.steps.end()) return out;
  const size_t note_at = static_cast<size_t>(noted - tr.steps.begin());
  const std::string number = first_number(noted->note);
  if (number.empty()) return out;
  bool typed = false;
  for (size_t i = note_at + 1; i < tr.steps.size(); ++i) typed = typed || holds_number(tr.steps[i].action, number);
  if (!typed) return out;  // the number is not copied later (a difference is asked): nothing to learn here
  for (int c = 0; c < copies; ++c) {
    const std::string to = random_number_like(number, seed * 1000003ull + static_cast<uint64_t>(c));
    if (to == number) continue;
    trajectory r;
    r.intent = replace_whole(tr.intent, number, to);
    std::vector<char> keep;
    for (size_t i = 0; i < tr.steps.size(); ++i) {
      const seen_step& s = tr.steps[i];
      r.steps.push_back({replace_whole(s.observation, number, to), s.url, replace_whole(s.action, number, to),
                         replace_whole(s.note, number, to), s.note_element});
      keep.push_back(i == note_at || (i > note_at && holds_number(r.steps.back().action, to)));
    }
    std::vector<train_sequence> all = render_trajectory(r, history_mode::last, tok, max_obs_tokens);
    for (size_t i = 0; i < all.size() && i < keep.size(); ++i)
      if (keep[i]) out.push_back(std::move(all[i]));
  }
  return out;
}

}  // namespace kvarena
