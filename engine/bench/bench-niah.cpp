// bench-niah.cpp: needle-in-a-haystack prompts and retrieval under a policy (bench-niah.h).
#include "bench-niah.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>

#include "engine-error.h"
#include "process-memory.h"
#include "sampler.h"
#include "splitmix64.h"
#include "tokenizer.h"

namespace kvarena {

namespace {

const char* const kSubjects[] = {"The old lighthouse", "A quiet river", "The village baker", "Every market stall",
                                 "The northern forest", "A small wooden boat", "The city library",
                                 "The mountain path", "An autumn garden", "The harbour crane",
                                 "A travelling musician", "The school bell", "The copper kettle",
                                 "A flock of geese", "The night train", "The morning fog"};
const char* const kVerbs[] = {"looks", "stands", "waits", "rests", "shines", "turns", "moves", "sleeps",
                              "grows", "drifts"};
const char* const kPlaces[] = {"near the bridge", "by the sea", "under a grey sky", "beside the road",
                               "in the valley", "behind the hills", "at the edge of town", "along the shore",
                               "in the warm light", "past the orchard"};
const char* const kTails[] = {"while the wind is calm", "as it did last year", "before the rain begins",
                              "and nobody seems to notice", "when the days are long", "for a little while",
                              "until the evening comes", "as the season changes"};
const char* const kColours[] = {"green", "blue", "yellow", "red", "silver", "brown", "white", "golden"};

template <size_t N>
const char* pick(const char* const (&a)[N], uint64_t& st) {
  st = splitmix64(st);
  return a[st % N];
}

std::string fmt_depth(double d) {
  char s[32];
  std::snprintf(s, sizeof s, "%g", d);
  return s;
}

}  // namespace

std::string niah_filler_text(int64_t n_words, uint64_t seed) {
  uint64_t st = splitmix64(seed ^ 0x6E696168ull);  // "niah"
  std::string out;
  int64_t words = 0;
  while (words < n_words) {
    std::string s = std::string(pick(kSubjects, st)) + " " + pick(kVerbs, st) + " " + pick(kPlaces, st);
    if (splitmix64(st) % 2) s += std::string(" ") + pick(kTails, st);
    s += std::string(", and the sky is ") + pick(kColours, st) + ". ";
    for (char c : s) words += c == ' ';
    out += s;
  }
  return out;
}

std::string niah_code(uint64_t seed, int64_t length, double depth, int64_t trial) {
  if (trial < 0) throw engine_error("bench niah: trial " + std::to_string(trial) + " < 0");
  const uint64_t cell = splitmix64(uint64_t(length) * 1000003ull + uint64_t(std::llround(depth * 1e6)));
  std::vector<unsigned> codes;  // trials 0 .. trial, distinct
  for (uint64_t draw = 0; int64_t(codes.size()) <= trial; ++draw) {
    // draw 0 is the single-needle bench's code (seed ^ cell); later draws mix the draw in.
    const uint64_t z = splitmix64(seed ^ (cell + draw * 0xA24BAED4963EE407ull));
    const unsigned code = unsigned(10000 + z % 90000);  // five digits, no leading zero
    if (std::find(codes.begin(), codes.end(), code) == codes.end()) codes.push_back(code);
  }
  char s[8];
  std::snprintf(s, sizeof s, "%05u", codes.back());
  return s;
}

std::vector<int32_t> niah_haystack(const tokenizer& tok, const bench_niah_config& cfg, uint64_t seed) {
  int64_t need = 0;
  for (int64_t l : cfg.lengths) need = std::max(need, l);
  std::vector<int32_t> hay;
  if (cfg.haystack_text.empty()) {
    // Filler words cost about 1.3 tokens each; grow until long enough.
    for (int64_t words = need + 64; int64_t(hay.size()) < need; words *= 2)
      hay = tok.encode(niah_filler_text(words, seed), false);
  } else {
    const std::vector<int32_t> t = tok.encode(cfg.haystack_text, false);
    if (t.empty()) throw engine_error("bench niah: --text encodes to no tokens");
    while (int64_t(hay.size()) < need) hay.insert(hay.end(), t.begin(), t.end());
  }
  return hay;
}

std::vector<int32_t> niah_prompt(const tokenizer& tok, const std::vector<int32_t>& haystack,
                                 const std::string& code, int64_t length, double depth) {
  if (!(depth >= 0 && depth <= 1)) throw engine_error("bench niah: depth " + fmt_depth(depth) + " is not in [0,1]");
  std::vector<int32_t> out;
  if (tok.adds_bos() && tok.bos_id() >= 0) out.push_back(tok.bos_id());
  const std::vector<int32_t> needle = tok.encode(" The secret code is " + code + ". ", false);
  const std::vector<int32_t> question = tok.encode("\n\nWhat is the secret code? The secret code is", false);
  const int64_t hay = length - int64_t(out.size() + needle.size() + question.size());
  if (hay < 0)
    throw engine_error("bench niah: length " + std::to_string(length) + " cannot hold the needle and the question (" +
                       std::to_string(needle.size() + question.size() + out.size()) + " tokens)");
  if (int64_t(haystack.size()) < hay) throw engine_error("bench niah: haystack shorter than the length");
  const int64_t before = std::llround(depth * double(hay));
  out.insert(out.end(), haystack.begin(), haystack.begin() + before);
  out.insert(out.end(), needle.begin(), needle.end());
  out.insert(out.end(), haystack.begin() + before, haystack.begin() + hay);
  out.insert(out.end(), question.begin(), question.end());
  return out;
}

bench_niah_result run_bench_niah(const model& m, const tokenizer& tok, const std::vector<int32_t>& haystack,
                                 const kv_policy_spec& policy, const bench_common& common,
                                 const bench_niah_config& cfg) {
  if (cfg.lengths.empty() || cfg.depths.empty()) throw engine_error("bench niah: give at least one length and depth");
  int64_t max_len = 0;
  for (int64_t l : cfg.lengths) max_len = std::max(max_len, l);
  if (cfg.decode_distractor < 0) throw engine_error("bench niah: --decode-distractor must be >= 0");
  if (cfg.needles < 1) throw engine_error("bench niah: --needles must be >= 1");
  const std::optional<float> threshold = policy_confidence_threshold(policy);
  reset_process_peak();
  const std::unique_ptr<sequence> sp =
      make_sequence(common.backend, m, bench_session_options(policy, common, max_len + cfg.max_answer_tokens + 1));
  sequence& s = *sp;
  bench_niah_result r;
  int64_t n_correct = 0;
  for (int64_t len : cfg.lengths) {
    for (double depth : cfg.depths) {
      for (int64_t trial = 0; trial < cfg.needles; ++trial) {
        bench_niah_cell c;
        c.length = len;
        c.depth = depth;
        c.trial = trial;
        c.code = niah_code(common.seed, len, depth, trial);
        const std::vector<int32_t> prompt = niah_prompt(tok, haystack, c.code, len, depth);
        s.reset();
        sampler greedy;
        generate_options g;
        g.max_tokens = cfg.max_answer_tokens;
        // --decode-distractor: the prompt's last N tokens one decode step each (teacher-forced).
        const size_t tail = size_t(std::clamp<int64_t>(cfg.decode_distractor, 0, int64_t(prompt.size()) - 1));
        const size_t head = prompt.size() - tail;
        s.append(std::span<const int32_t>(prompt.data(), head));
        for (size_t i = head; i < prompt.size(); ++i) {
          s.append_decode(prompt[i]);
          ++r.decode_steps;
          const float c = s.last_step().confidence;
          if (threshold && c >= *threshold) ++r.confident_steps;
        }
        const generate_result gr = generate(s, tok, std::span<const int32_t>(), g, greedy);
        c.answer = gr.text;
        c.correct = gr.text.find(c.code) != std::string::npos;
        n_correct += c.correct;
        const memory_stats mem = s.memory();
        r.peak_kv_bytes = std::max(r.peak_kv_bytes, mem.kv_peak_bytes);
        r.peak_kv_host_bytes = std::max(r.peak_kv_host_bytes, mem.kv_host_peak_bytes);
        r.peak_kv_logical_bytes = std::max(r.peak_kv_logical_bytes, mem.kv_logical_peak_bytes);
        std::fprintf(stderr, "bench niah: %s: length %lld depth %s needle %lld: %s\n", policy.text.c_str(),
                     (long long)len, fmt_depth(depth).c_str(), (long long)trial, c.correct ? "correct" : "wrong");
        r.grid.push_back(std::move(c));
      }
    }
  }
  r.accuracy = double(n_correct) / double(r.grid.size());
  r.peak_process_bytes = process_peak_bytes(s);
  return r;
}

}  // namespace kvarena
