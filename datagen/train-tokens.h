// train-tokens.h: training sequences -> the token files scripts/train/ reads.
//
//   <dir>/tokens/<name>.tok   uint16 LE token ids, every sequence one after another
//   <dir>/tokens/<name>.mask  uint8 per token: 0 = context, 1 = loss target, 2 = loss target
//                             that is an action's free text (the text a `type` types, the
//                             answer a `stop` gives: where the agent copies from its
//                             objective; and a reply's note line, "NOTE: $23.99", where
//                             it copies from the page; the trainer may weight it apart)
//   <dir>/tokens/<name>.idx   uint64 LE start offset of each sequence, then the total
//
// Each segment is encoded on its own with parse_special (as the agent encodes a prompt and
// then generates its reply); the first segment of a sequence gets BOS where the
// vocabulary adds one.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "train-data.h"

namespace kvarena {

class tokenizer;

// Encodes (on `threads` threads) and writes the three files; returns the token count.
// std::runtime_error when the vocabulary does not fit uint16 or a file cannot be written.
int64_t write_token_files(const train_dataset& d, const tokenizer& tok, const std::string& dir, int threads);

// The sequence's tokens and mask, as written.
void encode_sequence(const train_sequence& q, const tokenizer& tok, std::vector<uint16_t>* ids,
                     std::vector<uint8_t>* mask);

// The byte range [first, second) of the free text of a reply's action: the text of
// `type [id] [text] [flag]` (the flag optional) or the answer of `stop [answer]`, as
// action-parse.h parses the reply (its first ```...``` block, or the whole reply when it
// has no fence), so the mask follows the grammar the agent is scored by. nullopt for other
// actions, empty text and replies that do not parse.
std::optional<std::pair<size_t, size_t>> action_free_text_span(std::string_view reply);
// The byte range of a reply's note line ("NOTE: ..." or "NOTE [84]" up to its newline, prompt.h), nullopt
// when the reply does not begin with one: marked as free text too, its "NOTE" the first token.
std::optional<std::pair<size_t, size_t>> note_line_span(std::string_view reply);

// The first sequences of each dataset as text, targets between ⟦ and ⟧, for a person.
void write_samples(const std::vector<const train_dataset*>& sets, const std::string& path);

}  // namespace kvarena
