// rename-quoted-names.h: the agent-renamed training set (train-data.h). An oracle trajectory whose
// objective quotes names ("Add "Dreamweave Microfiber Bed Sheet Set, Gray" to my cart.") is
// rewritten into a world where each quoted thing is called something new: the name's words
// are swapped for other words seen on the sites, in the objective, on every page, in the URLs
// (form-encoded and forum-slug spellings) and in the oracle's actions alike. The rewritten
// trajectory is as consistent as the original (the product now has that name everywhere),
// but its names occur in no other training sequence, so the step that types or finds a name
// can only be learnt by copying it from the objective, not by recalling a name seen in
// training. (Round 7 typed "Dreamweave Down Alternative Comforter, Black", a trained name,
// for the objective's "Dreamweave Microfiber Bed Sheet Set, Gray".)
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "train-data.h"

namespace kvarena {

// The strings between double quotes in an objective, in order, duplicates dropped:
// `Send "a b" the message: "c"` -> {"a b", "c"}. An unmatched quote ends the list.
std::vector<std::string> quoted_names(const std::string& intent);

// The distinct words (ASCII letters only, 3..14 long) of `texts`, sorted: the pool
// new names draw from.
std::vector<std::string> word_pool(const std::vector<std::string>& texts);

// `name` with each word of letters (3 letters or more) replaced, with probability
// `swap_share` and at least one replaced, by a different word of `pool` in the same case of
// its first letter; digits, short words, spaces and punctuation stay where they were
// ("Kids bike 20 inch" -> "Kids lantern 20 inch"). Deterministic for `seed`.
std::string novel_name(const std::string& name, const std::vector<std::string>& pool, uint64_t seed,
                       double swap_share = rename_options{}.swap_share);

// `text` with every whole occurrence of `from` (page-element.h find_whole: not part of a
// longer word or number) replaced by `to`.
std::string replace_whole(const std::string& text, const std::string& from, const std::string& to);

// The trajectory with each of its objective's quoted names (renames: name -> new name)
// replaced in the objective, observations, URLs and actions, as typed, form-encoded
// ("a+b%2C+c") and as a forum URL slug ("a-b-c"), longest names first.
trajectory renamed_trajectory(const trajectory& tr, const std::vector<std::pair<std::string, std::string>>& renames);

// Whether a step acts on one of `names`: its action types or answers one, or names an
// element whose line on the page holds one ("click [71]" on "[71] link 'Lantern Mug'").
bool acts_on_name(const seen_step& step, const std::vector<std::string>& names);

// agent-renamed's sequences of one trajectory (rename_options, train-data.h): `copies`
// renamings (each its own draw from `seed`, `swap_share` of each name's words new), rendered
// in history mode last, keeping the steps that act on a new name (the ones the renaming
// teaches: typing it, answering with it, picking its element); a share crop_share of them
// (drawn) with the observation cut around the acted-on element as agent-crop cuts it
// (min(2, crop_lines)..crop_lines lines each side, drawn), for more such steps per token.
// None when the objective quotes nothing.
std::vector<train_sequence> render_renamed_steps(const trajectory& tr, const std::vector<std::string>& pool,
                                                 uint64_t seed, const rename_options& opt, const tokenizer* tok,
                                                 int64_t max_obs_tokens);

}  // namespace kvarena
