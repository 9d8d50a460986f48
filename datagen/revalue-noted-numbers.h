// revalue-noted-numbers.h: the agent-revalued training set (train-data.h). A long-horizon
// trajectory notes a fact (a price, a rating) and later types it ("NOTE [84]" on the
// product page, then `type [59] [23.99]` into a listing's price field). The site content
// draws such values from small sets, so a model can type a typical price and be right
// often without reading its note. Here the noted number is replaced by a random one of the
// same shape everywhere in the trajectory (pages, the note, the actions), so the step that
// types it can only be learnt by copying it from the note in the action list, and the note
// step by picking the element that shows it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "train-data.h"

namespace kvarena {

class tokenizer;

// The first number of `text` ("Rating: 2.4 out of 5" -> "2.4", "$12,800.00" ->
// "12,800.00"), "" when it has none.
std::string first_number(const std::string& text);

// `number` with each digit drawn anew (deterministic for `seed`): the first in
// 1..min(9, 2 x its old value), the others 0..9; separators stay ("23.99" -> "41.07").
// Never `number` itself, unless it has no digit.
std::string random_number_like(const std::string& number, uint64_t seed);

// For a trajectory whose first note's first number is typed by a later action (a copy, not
// a difference), `copies` variants with that number replaced (whole, not inside a longer
// number) by random_number_like in every page, note, action and the objective, rendered in
// history mode last: of each, the note step and the steps that type the number. Empty for
// any other trajectory.
std::vector<train_sequence> render_revalued_steps(const trajectory& tr, int copies, uint64_t seed,
                                                  const tokenizer* tok, int64_t max_obs_tokens);

}  // namespace kvarena
