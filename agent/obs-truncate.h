// obs-truncate.h: cuts an observation to a token budget of the model's own tokenizer, as
// VWA cuts its accessibility tree to max_obs_length tokens, but at a line boundary (a
// half node line would show an id without its name) and with a marker line saying so.
// The env server's own max_obs_tokens is a byte estimate; the agent does not use it.
// The budget itself: a trained model names the one its pages were cut to in its GGUF
// (`kvarena.max_obs_tokens`); `kvarena run --max-obs-tokens N` overrides it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvarena {

class tokenizer;
struct model;

// The GGUF key a trained model names its observation budget (tokens) in.
inline constexpr const char* k_max_obs_tokens_key = "kvarena.max_obs_tokens";
// The budget of a model that names none (VWA's prompt, a 4K-context model's share).
inline constexpr int64_t k_default_max_obs_tokens = 1024;
// requested when given (0: no limit); else the model's kvarena.max_obs_tokens; else
// k_default_max_obs_tokens. std::invalid_argument when requested is negative or the
// model's value is not a positive integer.
int64_t max_obs_tokens_for_model(const model& m, std::optional<int64_t> requested);

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

// Without the model's tokenizer (an endpoint's agent, run --agent-url without --model):
// the same cut at k_bytes_per_token_estimate bytes per token; n_tokens are estimates.
inline constexpr int64_t k_bytes_per_token_estimate = 4;
truncated_observation truncate_by_estimate(std::string_view text, int64_t max_tokens);

}  // namespace kvarena
