// rename-quoted-names.cpp: see rename-quoted-names.h.
#include "rename-quoted-names.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "agent-action.h"
#include "page-element.h"
#include "prompt.h"
#include "sites/http-message.h"
#include "sites/seed-data.h"
#include "sites/site-forum.h"

namespace kvarena {
namespace {

bool ascii_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 128; }
bool ascii_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) && static_cast<unsigned char>(c) < 128; }

constexpr size_t k_min_word = 3, k_max_word = 14;

struct span {
  size_t at, len;
};

// The runs of ASCII letters in `text` that are whole words (no letter or digit either side),
// min_len..max_len long: "x2y long-lasting" -> "long", "lasting".
std::vector<span> whole_words(const std::string& text, size_t min_len, size_t max_len) {
  std::vector<span> out;
  for (size_t i = 0; i < text.size();) {
    if (!ascii_alpha(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && ascii_alpha(text[j])) ++j;
    const bool whole = (i == 0 || !ascii_alnum(text[i - 1])) && (j == text.size() || !ascii_alnum(text[j]));
    if (whole && j - i >= min_len && j - i <= max_len) out.push_back({i, j - i});
    i = j;
  }
  return out;
}

}  // namespace

std::vector<std::string> quoted_names(const std::string& intent) {
  std::vector<std::string> out;
  for (size_t a = intent.find('"'); a != std::string::npos;) {
    const size_t b = intent.find('"', a + 1);
    if (b == std::string::npos) break;
    std::string name = intent.substr(a + 1, b - a - 1);
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    a = intent.find('"', b + 1);
  }
  return out;
}

std::vector<std::string> word_pool(const std::vector<std::string>& texts) {
  std::set<std::string> words;
  for (const std::string& t : texts)
    for (const span& w : whole_words(t, k_min_word, k_max_word)) words.insert(t.substr(w.at, w.len));
  return {words.begin(), words.end()};
}

std::string novel_name(const std::string& name, const std::vector<std::string>& pool, uint64_t seed,
                       double swap_share) {
  const std::vector<span> words = whole_words(name, k_min_word, std::string::npos);  // the replaceable ones
  if (words.empty() || pool.size() < 2) return name;
  sites::seed_rng rng(seed, 0x72656E616D65ull);  // "rename"
  std::vector<char> swap(words.size(), 0);
  for (char& s : swap) s = rng.chance(swap_share);
  if (std::none_of(swap.begin(), swap.end(), [](char s) { return s; })) swap[rng.index(words.size())] = 1;
  std::string out;
  size_t from = 0;
  for (size_t k = 0; k < words.size(); ++k) {
    out += name.substr(from, words[k].at - from);
    const std::string old = name.substr(words[k].at, words[k].len);
    std::string w = old;
    if (swap[k])  // a different word, not the same one in another case (a few tries)
      for (int tries = 0; tries < 16 && sites::lower_ascii(w) == sites::lower_ascii(old); ++tries) w = rng.pick(pool);
    if (sites::lower_ascii(w) == sites::lower_ascii(old)) w = old;
    if (w != old) {
      const bool upper = std::isupper(static_cast<unsigned char>(old[0]));
      w[0] = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(w[0]))
                                     : std::tolower(static_cast<unsigned char>(w[0])));
    }
    out += w;
    from = words[k].at + words[k].len;
  }
  return out + name.substr(from);
}

std::string replace_whole(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t done = 0;
  for (size_t at = find_whole(text, from); at != std::string::npos; at = find_whole(text, from, done)) {
    out.append(text, done, at - done).append(to);
    done = at + from.size();
  }
  return out.append(text, done, std::string::npos);
}

trajectory renamed_trajectory(const trajectory& tr, const std::vector<std::pair<std::string, std::string>>& renames) {
  std::vector<std::pair<std::string, std::string>> spellings;  // every spelling of every rename
  for (const auto& [from, to] : renames) {
    spellings.push_back({from, to});
    const std::string enc_from = sites::url_encode(from, true), enc_to = sites::url_encode(to, true);
    if (enc_from != from) spellings.push_back({enc_from, enc_to});
    const std::string slug_from = sites::forum::slugify(from), slug_to = sites::forum::slugify(to);
    if (slug_from != from && slug_from.find('-') != std::string::npos) spellings.push_back({slug_from, slug_to});
  }
  std::stable_sort(spellings.begin(), spellings.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  auto placeholder = [](size_t k) {  // built by appends: GCC 12 warns falsely on "\x01" + std::string
    std::string p = "\x01";
    p += std::to_string(k);
    p += '\x02';
    return p;
  };
  auto apply = [&](std::string s) {
    // Placeholders first, so that a new name containing an older one's spelling is left alone.
    for (size_t k = 0; k < spellings.size(); ++k) s = replace_whole(s, spellings[k].first, placeholder(k));
    for (size_t k = 0; k < spellings.size(); ++k) s = replace_whole(s, placeholder(k), spellings[k].second);
    return s;
  };
  trajectory out;
  out.intent = apply(tr.intent);
  for (const seen_step& s : tr.steps) out.steps.push_back({apply(s.observation), apply(s.url), apply(s.action), apply(s.note), s.note_element});
  return out;
}

bool acts_on_name(const seen_step& step, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (step.action.find(n) != std::string::npos) return true;
  const agent_action a = extract_agent_action(compact_reply(step.action));
  if (!a.ok() || a.parsed.act.element_id < 0) return false;
  const std::string line = element_line(step.observation, a.parsed.act.element_id);
  return !line.empty() &&
         std::any_of(names.begin(), names.end(), [&](const std::string& n) { return line.find(n) != std::string::npos; });
}

std::vector<train_sequence> render_renamed_steps(const trajectory& tr, const std::vector<std::string>& pool,
                                                 uint64_t seed, const rename_options& opt, const tokenizer* tok,
                                                 int64_t max_obs_tokens) {
  const std::vector<std::string> names = quoted_names(tr.intent);
  std::vector<train_sequence> out;
  if (names.empty()) return out;
  sites::seed_rng rng(seed, 0x63726F70ull);  // "crop"
  const int64_t most_lines = opt.crop_lines, least_lines = std::min(k_crop_lines_least, opt.crop_lines);
  for (int c = 0; c < opt.copies; ++c) {
    std::vector<std::pair<std::string, std::string>> renames;
    std::vector<std::string> new_names;
    for (size_t k = 0; k < names.size(); ++k) {
      renames.push_back({names[k], novel_name(names[k], pool, seed * 1000003ull + static_cast<uint64_t>(c) * 131ull + k,
                                                opt.swap_share)});
      new_names.push_back(renames.back().second);
    }
    trajectory r = renamed_trajectory(tr, renames);
    std::vector<char> keep(r.steps.size(), 0);
    for (size_t i = 0; i < r.steps.size(); ++i) {
      if (!acts_on_name(r.steps[i], new_names)) continue;
      keep[i] = 1;
      const agent_action a = extract_agent_action(compact_reply(r.steps[i].action));
      // cut as agent-crop's; a step with a note keeps its page (the fact may be off the cut)
      if (!rng.chance(opt.crop_share) || !r.steps[i].note.empty() || !a.ok() || a.parsed.act.element_id < 0) continue;
      const int64_t before = rng.uniform(least_lines, most_lines), after = rng.uniform(least_lines, most_lines);
      if (std::optional<std::string> cut = crop_observation(r.steps[i].observation, a.parsed.act.element_id, before, after))
        r.steps[i].observation = std::move(*cut);
    }
    std::vector<train_sequence> all = render_trajectory(r, history_mode::last, tok, max_obs_tokens);
    for (size_t i = 0; i < all.size() && i < keep.size(); ++i)
      if (keep[i]) out.push_back(std::move(all[i]));
  }
  return out;
}

}  // namespace kvarena
