// obs-truncate.cpp: see obs-truncate.h.
#include "obs-truncate.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "gguf-reader.h"
#include "model.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

int64_t count_tokens(const tokenizer& tok, std::string_view s) {
  return static_cast<int64_t>(tok.encode(s, /*add_bos=*/false).size());
}

// Back to the start of a UTF-8 character.
size_t char_boundary(std::string_view s, size_t cut) {
  while (cut > 0 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

}  // namespace

int64_t max_obs_tokens_for_model(const model& m, std::optional<int64_t> requested) {
  if (requested) {
    if (*requested < 0)
      throw std::invalid_argument("--max-obs-tokens " + std::to_string(*requested) + ": give 0 (no limit) or more");
    return *requested;
  }
  const std::optional<int64_t> named = m.gguf ? m.gguf->get_int(k_max_obs_tokens_key) : std::nullopt;
  if (!named) return k_default_max_obs_tokens;
  if (*named <= 0)
    throw std::invalid_argument(std::string("the model's ") + k_max_obs_tokens_key + " is " + std::to_string(*named) +
                                ": expected a positive token count (give --max-obs-tokens to override it)");
  return *named;
}

std::string truncation_marker(int64_t max_tokens) {
  return "[... observation truncated to " + std::to_string(max_tokens) + " tokens ...]";
}

truncated_observation truncate_to_tokens(const tokenizer& tok, std::string_view text, int64_t max_tokens) {
  truncated_observation out;
  std::vector<int32_t> ids = tok.encode(text, /*add_bos=*/false);
  out.n_tokens_in = static_cast<int64_t>(ids.size());
  if (max_tokens <= 0 || out.n_tokens_in <= max_tokens) {
    out.text = std::string(text);
    out.n_tokens = out.n_tokens_in;
    return out;
  }
  // The first max_tokens tokens decode to a prefix of the text (decode(encode(s)) == s and
  // pieces concatenate); keep the whole lines inside it.
  ids.resize(static_cast<size_t>(max_tokens));
  size_t len = std::min(tok.decode(ids).size(), text.size());
  size_t cut = text.rfind('\n', len == 0 ? 0 : len - 1);
  cut = cut == std::string_view::npos || cut == 0 ? char_boundary(text, len) : cut;
  // A prefix can tokenise a little differently from a prefix of the tokens: drop lines
  // (or bytes) until it fits.
  int64_t n = count_tokens(tok, text.substr(0, cut));
  while (n > max_tokens && cut > 0) {
    size_t nl = text.rfind('\n', cut - 1);
    cut = nl == std::string_view::npos || nl == 0 ? char_boundary(text, cut * 9 / 10) : nl;
    n = count_tokens(tok, text.substr(0, cut));
  }
  out.text = std::string(text.substr(0, cut));
  out.n_tokens = n;
  out.truncated = true;
  out.text += '\n';
  out.text += truncation_marker(max_tokens);
  return out;
}

truncated_observation truncate_by_estimate(std::string_view text, int64_t max_tokens) {
  truncated_observation out;
  const auto estimate = [](size_t bytes) {
    return static_cast<int64_t>((bytes + k_bytes_per_token_estimate - 1) / k_bytes_per_token_estimate);
  };
  out.n_tokens_in = estimate(text.size());
  if (max_tokens <= 0 || out.n_tokens_in <= max_tokens) {
    out.text = std::string(text);
    out.n_tokens = out.n_tokens_in;
    return out;
  }
  const size_t len = static_cast<size_t>(max_tokens * k_bytes_per_token_estimate);
  size_t cut = text.rfind('\n', len - 1);
  if (cut == std::string_view::npos || cut == 0) cut = char_boundary(text, len);
  out.text = std::string(text.substr(0, cut));
  out.n_tokens = estimate(cut);
  out.truncated = true;
  out.text += '\n';
  out.text += truncation_marker(max_tokens);
  return out;
}

}  // namespace kvarena
