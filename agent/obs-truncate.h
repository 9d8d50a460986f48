// obs-truncate.h: cuts an observation to a token budget of the model's own tokenizer, as
// VWA cuts its accessibility tree to max_obs_length tokens, but at a line boundary (a
// half node line would show an id without its name) and with a marker line saying so.
// The env server's own max_obs_tokens is a byte estimate; the agent does not use it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace kvarena {

class tokenizer;

struct truncated_observation {
  std::string text;        // whole lines of the input (+ the marker line when cut)
  int64_t n_tokens = 0;    // tokens of `text` without the marker line (<= max_tokens when cut)
  int64_t n_tokens_in = 0; // tokens of the whole input
  bool truncated = false;
};

// The marker line appended when the text was cut.
std::string truncation_marker(int64_t max_tokens);

// max_tokens <= 0: no limit. When the first line alone is over the budget, it is cut at a
// UTF-8 character boundary instead.
truncated_observation truncate_to_tokens(const tokenizer& tok, std::string_view text, int64_t max_tokens);

}  // namespace kvarena
