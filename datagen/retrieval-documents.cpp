// retrieval-documents.cpp: the retrieval documents of the training data (train-data.h,
// train-data-stages.h), deterministic for a seed; each a context, then questions each
// followed by its answer (a loss target):
//   niah    needle-in-a-haystack: a haystack of the bench's filler sentences (other seeds
//           than the bench's) or of site pages the oracle saw, with one to three needles
//           ("The pass key is 12345."), each asked for
//   kv      key-value retrieval: "key K: value V" records, then one or more keys asked for
//   lookup  a page the agent saw, then elements named by role and name, answered by id
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench-niah.h"
#include "obs-truncate.h"
#include "splitmix64.h"
#include "tokenizer.h"
#include "train-data-stages.h"

namespace kvarena {
namespace {

std::string five_digits(uint64_t& st) {
  st = splitmix64(st);
  return std::to_string(10000 + st % 90000);
}

// Filler of about `words` words: the bench's sentence generator or a site page's text.
std::string filler(uint64_t& st, int64_t words, const std::vector<std::string>& pages) {
  st = splitmix64(st);
  if (pages.empty() || st % 2 == 0) return niah_filler_text(words, 1000000 + st % 1000000000);
  std::string out;
  while (true) {
    st = splitmix64(st);
    const std::string& p = pages[st % pages.size()];
    out += p + "\n";
    if (static_cast<int64_t>(std::count(out.begin(), out.end(), ' ')) >= words) break;
  }
  size_t cut = 0;  // trim to about `words` words
  for (int64_t w = 0; cut < out.size() && w < words; ++cut) w += out[cut] == ' ';
  return out.substr(0, cut);
}

// The first n_tokens tokens of `text` (whole text when shorter or without a tokenizer).
std::string cut_to_tokens(const std::string& text, const tokenizer* tok, int64_t n_tokens) {
  if (!tok) return text;
  std::vector<int32_t> ids = tok->encode(text, false);
  if (static_cast<int64_t>(ids.size()) <= n_tokens) return text;
  ids.resize(static_cast<size_t>(n_tokens));
  return tok->decode(ids);
}

// A retrieval document: `context`, then each question followed by its answer (a target).
train_sequence asked_in_turn(std::string context, const std::vector<std::pair<std::string, std::string>>& qa) {
  train_sequence q;
  for (const auto& [question, answer] : qa) {
    q.segments.push_back({context + question, false});
    q.segments.push_back({answer, true});
    context.clear();
  }
  return q;
}

// NIAH needles: each a phrasing (the sentence before its code, and the question asking for it).
struct needle_phrasing {
  const char* needle;    // before the value
  const char* question;  // ends where the answer starts
};
constexpr needle_phrasing k_phrasings[] = {
    {"The secret code is ", "\n\nWhat is the secret code? The secret code is"},
    {"The pass key is ", "\n\nWhat is the pass key? The pass key is"},
    {"Remember this number: ", "\n\nWhich number was to be remembered? The number is"},
};
constexpr int64_t k_n_phrasings = 3;

struct needle {
  size_t at;        // byte offset in the haystack, between words
  size_t phrasing;  // index into k_phrasings
  std::string code;
};

// The offset r % 1001 thousandths into the haystack, moved on to the next space or newline.
size_t between_words(const std::string& hay, uint64_t r) {
  size_t at = static_cast<size_t>(static_cast<double>(r % 1001) / 1000.0 * static_cast<double>(hay.size()));
  while (at < hay.size() && hay[at] != ' ' && hay[at] != '\n') ++at;
  return at;
}

// A document's needles, in the order they are asked for. The first is drawn from `st` as with
// max_needles 1; with max_needles > 1 up to max_needles - 1 more from a stream of their own
// (distinct codes, the phrasings after the first's in turn), so max_needles 1 gives the same
// documents as before it existed.
std::vector<needle> draw_needles(uint64_t& st, const std::string& hay, size_t first_phrasing, int64_t max_needles) {
  std::vector<needle> needles;
  needles.push_back({0, first_phrasing, five_digits(st)});
  st = splitmix64(st);
  needles[0].at = between_words(hay, st);
  if (max_needles <= 1) return needles;
  uint64_t more = splitmix64(st ^ 0x6D6F7265ull);
  const int64_t k = 1 + static_cast<int64_t>(more % static_cast<uint64_t>(max_needles));
  for (int64_t j = 1; j < k; ++j) {
    std::string code;
    do code = five_digits(more);
    while (std::any_of(needles.begin(), needles.end(), [&](const needle& x) { return x.code == code; }));
    more = splitmix64(more);
    needles.push_back({between_words(hay, more), (first_phrasing + static_cast<size_t>(j)) % k_n_phrasings, code});
  }
  return needles;
}

// The haystack with each needle's sentence at its offset (" The pass key is 12345. ").
std::string with_needles(const std::string& hay, const std::vector<needle>& needles) {
  std::vector<size_t> by_place(needles.size());  // needles in haystack order
  for (size_t j = 0; j < by_place.size(); ++j) by_place[j] = j;
  std::stable_sort(by_place.begin(), by_place.end(), [&](size_t a, size_t b) { return needles[a].at < needles[b].at; });
  std::string text;
  size_t from = 0;
  for (size_t j : by_place) {
    const needle& x = needles[j];
    text += hay.substr(from, x.at - from) + " " + k_phrasings[x.phrasing].needle + x.code + ". ";
    from = x.at;
  }
  text += hay.substr(from);
  return text;
}

// max_words sizes the filler; with a tokenizer the haystack is then cut to at most
// max_tokens tokens (page text has more tokens per word than the sentence filler).
// max_needles > 1: a document holds 1..max_needles needles, each of its own phrasing and
// code at its own depth, and asks for every one in turn (a target after each question).
train_dataset niah_documents_from(uint64_t seed, int64_t n, int64_t max_words, const std::vector<std::string>& pages,
                                  const tokenizer* tok = nullptr, int64_t max_tokens = 0, int64_t max_needles = 1) {
  if (max_needles < 1 || max_needles > k_n_phrasings)
    throw std::invalid_argument("train-data: needles per NIAH document must be in [1, 3]");
  train_dataset d{"niah", {}};
  uint64_t st = splitmix64(seed ^ 0x6E696168ull);
  for (int64_t i = 0; i < n; ++i) {
    st = splitmix64(st + static_cast<uint64_t>(i));
    const size_t first_phrasing = st % k_n_phrasings;
    const int64_t words =
        64 + static_cast<int64_t>(splitmix64(st) % static_cast<uint64_t>(std::max<int64_t>(1, max_words - 64)));
    const int64_t hay_tokens = max_tokens * words / std::max<int64_t>(1, max_words);
    const std::string hay = cut_to_tokens(filler(st, words, pages), tok, std::max<int64_t>(32, hay_tokens));
    const std::vector<needle> needles = draw_needles(st, hay, first_phrasing, max_needles);
    // Asked in the order drawn: the first needle first (as with one needle), then the rest.
    std::vector<std::pair<std::string, std::string>> qa;
    for (const needle& x : needles) qa.push_back({k_phrasings[x.phrasing].question, " " + x.code + "."});
    d.sequences.push_back(asked_in_turn(with_needles(hay, needles), qa));
  }
  return d;
}

// NIAH documents' longest length in words: 90% of max_doc_tokens at the tokenizer's tokens per
// word on filler text (1.3 without a tokenizer).
int64_t niah_max_words(const train_data_options& opt) {
  double tokens_per_word = 1.3;
  if (opt.tok) {
    const std::string sample = niah_filler_text(2000, 7);
    tokens_per_word = static_cast<double>(opt.tok->encode(sample, false).size()) /
                      static_cast<double>(std::count(sample.begin(), sample.end(), ' '));
  }
  return static_cast<int64_t>(0.9 * static_cast<double>(opt.max_doc_tokens) / tokens_per_word);
}

}  // namespace

train_dataset niah_documents(uint64_t seed, int64_t n, int64_t max_words, int64_t max_needles) {
  return niah_documents_from(seed, n, max_words, {}, nullptr, 0, max_needles);
}

train_dataset kv_documents(uint64_t seed, int64_t n, int64_t max_pairs, int64_t max_queries) {
  if (max_queries < 1) throw std::invalid_argument("train-data: queries per kv document must be >= 1");
  train_dataset d{"kv", {}};
  uint64_t st = splitmix64(seed ^ 0x6B76ull);
  for (int64_t i = 0; i < n; ++i) {
    st = splitmix64(st + static_cast<uint64_t>(i));
    const int64_t pairs = 4 + static_cast<int64_t>(st % static_cast<uint64_t>(std::max<int64_t>(1, max_pairs - 4)));
    std::vector<std::pair<std::string, std::string>> kv;
    std::set<std::string> keys;
    while (static_cast<int64_t>(kv.size()) < pairs) {
      std::string k = five_digits(st);
      if (keys.insert(k).second) kv.push_back({k, five_digits(st)});
    }
    std::string text = "Records:\n";
    for (const auto& [k, v] : kv) text += "key " + k + ": value " + v + "\n";
    st = splitmix64(st);
    // The first query as with one query; more (max_queries > 1) from a stream of their own,
    // distinct keys, so max_queries 1 gives the same documents as before it existed.
    std::vector<size_t> asked = {static_cast<size_t>(st % kv.size())};
    if (max_queries > 1) {
      uint64_t more = splitmix64(st ^ 0x6D6F7265ull);
      const size_t k = std::min(kv.size(), static_cast<size_t>(1 + more % static_cast<uint64_t>(max_queries)));
      while (asked.size() < k) {
        more = splitmix64(more);
        const size_t j = static_cast<size_t>(more % kv.size());
        if (std::find(asked.begin(), asked.end(), j) == asked.end()) asked.push_back(j);
      }
    }
    std::vector<std::pair<std::string, std::string>> qa;
    for (size_t j : asked)
      qa.push_back({"\nWhat is the value of key " + kv[j].first + "? The value is", " " + kv[j].second + "."});
    d.sequences.push_back(asked_in_turn(std::move(text), qa));
  }
  return d;
}

train_dataset lookup_documents(const std::vector<std::string>& pages, uint64_t seed, int64_t max_queries) {
  if (max_queries < 1) throw std::invalid_argument("train-data: queries per lookup document must be >= 1");
  static const std::regex k_element(R"(^\t*\[(\d+)\] ([A-Za-z]+) '(.+)'.*$)");
  train_dataset d{"lookup", {}};
  uint64_t st = splitmix64(seed ^ 0x6C6F6F6Bull);
  for (const std::string& page : pages) {
    struct element {
      std::string id, role, name;
    };
    std::vector<element> els;
    std::map<std::pair<std::string, std::string>, int> seen;  // (role, name) -> lines
    for (size_t a = 0; a < page.size();) {
      size_t e = page.find('\n', a);
      if (e == std::string::npos) e = page.size();
      std::smatch m;
      const std::string line = page.substr(a, e - a);
      if (std::regex_match(line, m, k_element)) {
        els.push_back({m[1].str(), m[2].str(), m[3].str()});
        ++seen[{m[2].str(), m[3].str()}];
      }
      a = e + 1;
    }
    std::vector<size_t> unique;  // elements no other line shares role and name with
    for (size_t j = 0; j < els.size(); ++j)
      if (seen[{els[j].role, els[j].name}] == 1) unique.push_back(j);
    if (unique.empty()) continue;
    st = splitmix64(st);
    const size_t k = std::min(unique.size(), static_cast<size_t>(1 + st % static_cast<uint64_t>(max_queries)));
    for (size_t j = 0; j < k; ++j) {  // a partial Fisher-Yates shuffle: k distinct elements
      st = splitmix64(st);
      std::swap(unique[j], unique[j + static_cast<size_t>(st % (unique.size() - j))]);
    }
    std::vector<std::pair<std::string, std::string>> qa;
    for (size_t j = 0; j < k; ++j) {
      const element& x = els[unique[j]];
      qa.push_back({"\nWhich element is the " + x.role + " '" + x.name + "'? It is", " [" + x.id + "]."});
    }
    d.sequences.push_back(asked_in_turn(page + "\n", qa));
  }
  return d;
}

document_datasets retrieval_documents(const train_data_options& opt, const std::vector<std::string>& pages,
                                      const train_log& log) {
  document_datasets d;
  d.niah = niah_documents_from(opt.seed, opt.n_niah, niah_max_words(opt), pages, opt.tok,
                               opt.max_doc_tokens - 40 * opt.niah_needles, opt.niah_needles);
  // A record line is about 14 tokens; each query beyond the first about 20 more.
  const int64_t kv_room = opt.max_doc_tokens - 20 * (opt.kv_queries - 1);
  d.kv = kv_documents(opt.seed, opt.n_kv, std::max<int64_t>(8, kv_room / 14), opt.kv_queries);
  log("documents: " + std::to_string(d.niah.sequences.size()) + " niah, " + std::to_string(d.kv.sequences.size()) +
      " kv");
  if (opt.lookup_queries > 0) {
    std::vector<std::string> cut;  // the pages as the agent sees them
    for (const std::string& p : pages)
      cut.push_back(opt.tok ? truncate_to_tokens(*opt.tok, p, opt.max_obs_tokens).text : p);
    d.lookup = lookup_documents(cut, opt.seed, opt.lookup_queries);
    log("documents: " + std::to_string(d.lookup.sequences.size()) + " lookup");
  }
  return d;
}

}  // namespace kvarena
