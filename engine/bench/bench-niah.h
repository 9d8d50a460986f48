// bench-niah.h: `kvarena bench niah`: needle in a haystack, as the CONF-KV paper runs it.
// For each context length and depth, a haystack of filler text (a seeded generator, or a
// user's text repeated) holds the needle "The secret code is NNNNN." at that depth
// fraction; the prompt ends with the question "What is the secret code?" and the answer is
// decoded token by token (greedy, at most 12 tokens). Each (length, depth) cell runs
// `needles` independent trials, each with its own code (niah_code of the trial index) in
// the same haystack; a trial is correct when the answer contains its five digits (exact
// retrieval), and accuracy counts cells x needles. Lengths are not capped (8192 runs when
// asked; the model's RoPE decides whether it holds that context, a GPT-2 position table
// refuses it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bench-common.h"

namespace kvarena {

class tokenizer;

struct bench_niah_config {
  std::vector<int64_t> lengths = {1024, 2048, 4096};  // prompt tokens per cell (needle and question included)
  std::vector<double> depths = {0, 0.25, 0.5, 0.75, 1};  // needle position as a fraction of the haystack
  std::string haystack_text;  // "": the built-in filler generator (seeded)
  int64_t max_answer_tokens = 12;
  // The last N prompt tokens (the haystack's tail and the question) are run as decode steps,
  // one token at a time, teacher-forced, instead of prefill: each yields logits, so a policy
  // gated on confidence (confkv) runs its gate over them; 0: the whole prompt is prefill.
  int64_t decode_distractor = 0;
  int64_t needles = 3;  // trials (codes) per (length, depth) cell, >= 1
};

struct bench_niah_cell {
  int64_t length = 0;
  double depth = 0;
  int64_t trial = 0;   // 0 .. needles - 1 within the (length, depth) cell
  bool correct = false;
  std::string code;    // the five digits hidden (niah_code(seed, length, depth, trial))
  std::string answer;  // what greedy generation produced
};

struct bench_niah_result {
  double accuracy = 0;  // correct trials / (cells x needles)
  std::vector<bench_niah_cell> grid;
  size_t peak_kv_bytes = 0;       // the most over all cells
  size_t peak_kv_host_bytes = 0;
  size_t peak_kv_logical_bytes = 0;  // kv-logical-bytes.h, the most over all cells
  size_t peak_process_bytes = 0;     // process_peak_bytes over this policy's run
  int64_t decode_steps = 0;          // teacher-forced prompt decode steps over all trials
  int64_t confident_steps = 0;       // of which the gate called confident (c >= tau; gated policies)
};

// Deterministic English-like filler of about n_words words (sentences about objects,
// places and colours), the same for the same seed on every machine.
std::string niah_filler_text(int64_t n_words, uint64_t seed);

// One prompt: haystack tokens with the needle at `depth`, then the question; exactly
// `length` tokens (throws engine_error when length cannot hold the needle and question).
std::vector<int32_t> niah_prompt(const tokenizer& tok, const std::vector<int32_t>& haystack,
                                 const std::string& code, int64_t length, double depth);

// The five-digit code of trial `trial` in cell (length, depth) for a seed; trial 0 is the
// code the bench hid before it ran several needles. The trials of one cell never repeat a
// code (a draw equal to an earlier trial's is drawn again).
std::string niah_code(uint64_t seed, int64_t length, double depth, int64_t trial = 0);

// The haystack tokens every policy shares: enough filler (generated or the text repeated)
// for the longest length, without BOS.
std::vector<int32_t> niah_haystack(const tokenizer& tok, const bench_niah_config& cfg, uint64_t seed);

// All cells and trials for one policy, in the order length, depth, trial; one session
// (reset between trials), n_ctx = the longest length plus the answer.
bench_niah_result run_bench_niah(const model& m, const tokenizer& tok, const std::vector<int32_t>& haystack,
                                 const kv_policy_spec& policy, const bench_common& common,
                                 const bench_niah_config& cfg);

}  // namespace kvarena
