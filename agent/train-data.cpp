// train-data.cpp: see train-data.h.
#include "train-data.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>
#include <thread>

#include "agent-action.h"
#include "bench/bench-niah.h"
#include "client/env-client.h"
#include "conversation.h"
#include "generator/generate.h"
#include "obs-truncate.h"
#include "oracle-agent.h"
#include "page-element.h"
#include "server/env-server.h"
#include "splitmix64.h"
#include "tokenizer.h"
#include "train-rename.h"
#include "train-retarget.h"
#include "train-revalue.h"
#include "train-tokens.h"
#include "url-view.h"

namespace kvarena {
namespace {

namespace fs = std::filesystem;

// Long-horizon tasks name facts to carry (kvarena.memory): each becomes the note of the
// reply to the first action of the plan step after the one that brought it on screen (a
// fact seen after the last step has no such reply and is left out). The note names the
// element showing the fact ("NOTE [84]", the note then that element's whole name, e.g.
// "Rating: 2.4 out of 5 (7 reviews)" for "2.4"); a fact no element shows, or a second fact
// of the same step, is noted as text.
void attach_notes(const tasks::oracle_task_result& r, trajectory* tr) {
  for (const tasks::memory_fact& f : r.memory) {
    for (size_t j = 0; j < r.action_plan_steps.size() && j < tr->steps.size(); ++j) {
      if (r.action_plan_steps[j] != f.seen_step + 1) continue;
      seen_step& s = tr->steps[j];
      const int64_t id = s.note.empty() ? element_showing(s.observation, f.fact) : -1;
      if (id >= 0) {
        s.note = element_text(s.observation, id).value_or(f.fact);
        s.note_element = id;
      } else {
        s.note += (s.note.empty() ? "" : "; ") + f.fact;
        s.note_element = -1;
      }
      break;
    }
  }
}

// The oracle's trajectories on every task generated for `site_seed` (solved ones only;
// the oracle solves all, and a failure is reported).
std::vector<trajectory> oracle_trajectories(uint64_t site_seed, int jobs, int64_t* n_tasks, int64_t* n_solved,
                                            const std::function<void(const std::string&)>& log) {
  const tasks::generated_suites g = tasks::generate_suites(site_seed);
  std::vector<const task*> all;
  for (const auto& [name, ts] : g.suites)
    for (const task& t : ts) all.push_back(&t);
  std::unique_ptr<env_server> server = tasks::start_local_env_server(jobs, site_seed);
  env_client client(server->base_url());
  std::vector<trajectory> out(all.size());
  std::vector<char> solved(all.size(), 0);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t i = next++; i < all.size(); i = next++) {
      trajectory tr;
      tr.intent = all[i]->intent;
      std::unique_ptr<url_view> urls;
      auto observe = [&](const env_observation& seen, const std::string& action) {
        if (!urls) urls = std::make_unique<url_view>(seen.url);
        tr.steps.push_back({urls->show(seen.text), urls->show(seen.url), urls->show(action), ""});
      };
      const tasks::oracle_task_result r = tasks::run_oracle_task(client, *all[i], "", observe);
      attach_notes(r, &tr);
      std::lock_guard<std::mutex> lock(mu);
      if (r.solved) {
        solved[i] = 1;
        out[i] = std::move(tr);
      } else {
        failures.push_back("task " + std::to_string(r.task_id) + ": " + r.reason);
      }
    }
  };
  std::vector<std::thread> th;
  for (int k = 0; k < std::max(1, jobs); ++k) th.emplace_back(worker);
  for (auto& t : th) t.join();
  for (const std::string& f : failures) log("site seed " + std::to_string(site_seed) + ": oracle failed " + f);
  std::vector<trajectory> kept;
  for (size_t i = 0; i < all.size(); ++i)
    if (solved[i]) kept.push_back(std::move(out[i]));
  *n_tasks += static_cast<int64_t>(all.size());
  *n_solved += static_cast<int64_t>(kept.size());
  return kept;
}

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

// max_words sizes the filler; with a tokenizer the haystack is then cut to at most
// max_tokens tokens (page text has more tokens per word than the sentence filler).
// max_needles > 1: a document holds 1..max_needles needles, each of its own phrasing and
// code at its own depth, and asks for every one in turn (a target after each question).
// The first needle and question are drawn as with max_needles 1, and the others from a
// stream of their own, so max_needles 1 gives the same documents as before it existed.
train_dataset niah_documents_from(uint64_t seed, int64_t n, int64_t max_words, const std::vector<std::string>& pages,
                                  const tokenizer* tok = nullptr, int64_t max_tokens = 0, int64_t max_needles = 1) {
  struct phrasing {
    const char* needle;    // before the value
    const char* question;  // ends where the answer starts
  };
  static const phrasing k_phrasings[] = {
      {"The secret code is ", "\n\nWhat is the secret code? The secret code is"},
      {"The pass key is ", "\n\nWhat is the pass key? The pass key is"},
      {"Remember this number: ", "\n\nWhich number was to be remembered? The number is"},
  };
  constexpr int64_t k_n_phrasings = 3;
  if (max_needles < 1 || max_needles > k_n_phrasings)
    throw std::invalid_argument("train-data: needles per NIAH document must be in [1, 3]");
  struct needle {
    size_t at;          // byte offset in the haystack, between words
    size_t phrasing;    // index into k_phrasings
    std::string code;
  };
  train_dataset d{"niah", {}};
  uint64_t st = splitmix64(seed ^ 0x6E696168ull);
  for (int64_t i = 0; i < n; ++i) {
    st = splitmix64(st + static_cast<uint64_t>(i));
    const size_t first_phrasing = st % k_n_phrasings;
    const int64_t words =
        64 + static_cast<int64_t>(splitmix64(st) % static_cast<uint64_t>(std::max<int64_t>(1, max_words - 64)));
    const int64_t hay_tokens = max_tokens * words / std::max<int64_t>(1, max_words);
    const std::string hay = cut_to_tokens(filler(st, words, pages), tok, std::max<int64_t>(32, hay_tokens));
    auto between_words = [&](uint64_t r) {
      size_t at = static_cast<size_t>(static_cast<double>(r % 1001) / 1000.0 * static_cast<double>(hay.size()));
      while (at < hay.size() && hay[at] != ' ' && hay[at] != '\n') ++at;
      return at;
    };
    std::vector<needle> needles;
    needles.push_back({0, first_phrasing, five_digits(st)});
    st = splitmix64(st);
    needles[0].at = between_words(st);
    if (max_needles > 1) {
      uint64_t more = splitmix64(st ^ 0x6D6F7265ull);
      const int64_t k = 1 + static_cast<int64_t>(more % static_cast<uint64_t>(max_needles));
      for (int64_t j = 1; j < k; ++j) {
        std::string code;
        do code = five_digits(more);
        while (std::any_of(needles.begin(), needles.end(), [&](const needle& x) { return x.code == code; }));
        more = splitmix64(more);
        needles.push_back({between_words(more), (first_phrasing + static_cast<size_t>(j)) % k_n_phrasings, code});
      }
    }
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
    // Asked in the order drawn: the first needle first (as with one needle), then the rest.
    std::vector<std::pair<std::string, std::string>> qa;
    for (const needle& x : needles) qa.push_back({k_phrasings[x.phrasing].question, " " + x.code + "."});
    d.sequences.push_back(asked_in_turn(std::move(text), qa));
  }
  return d;
}

}  // namespace

std::vector<train_sequence> render_trajectory(const trajectory& tr, history_mode mode, const tokenizer* tok,
                                              int64_t max_obs_tokens) {
  const chat_template chat(chat_format::chatml);
  const std::string end_marker = chat.stop_strings().front();  // "<|im_end|>"
  agent_conversation conv(chat, mode, prompt_style::compact, 0);
  std::vector<train_sequence> out;
  train_sequence cur;
  std::optional<agent_action> prev;
  for (const seen_step& s : tr.steps) {
    const std::string obs = tok ? truncate_to_tokens(*tok, s.observation, max_obs_tokens).text : s.observation;
    const std::string prev_text = previous_action_text(prev ? &*prev : nullptr, std::nullopt);
    prompt_text p = conv.next_prompt(obs, s.url, tr.intent, prev_text);
    if (p.first && !cur.segments.empty()) out.push_back(std::move(cur)), cur = {};
    if (!p.first && p.text.rfind(end_marker, 0) == 0) {  // the previous reply's end
      cur.segments.push_back({end_marker, true});
      p.text.erase(0, end_marker.size());
    }
    cur.segments.push_back({p.text, false});
    const std::string action = action_by_element(s.action, obs);  // "stop [[84]]" where the page shows the answer
    std::string reply = compact_reply(action, s.note, s.note_element);
    prev = extract_agent_action(reply, obs);
    if (s.note_element >= 0 && prev->note != s.note) {  // the element is off the cut page: note the text
      reply = compact_reply(action, s.note);
      prev = extract_agent_action(reply, obs);
    }
    cur.segments.push_back({reply, true});
    conv.add_reply(reply);
    if (mode == history_mode::last) cur.segments.push_back({end_marker, true});
  }
  if (mode == history_mode::full && !cur.segments.empty()) cur.segments.push_back({end_marker, true});
  if (!cur.segments.empty()) out.push_back(std::move(cur));
  return out;
}

std::optional<std::string> crop_observation(const std::string& obs, int64_t element_id, int64_t before,
                                            int64_t after) {
  std::vector<std::string_view> lines;
  for (size_t a = 0; a <= obs.size();) {
    size_t e = obs.find('\n', a);
    if (e == std::string::npos) e = obs.size();
    lines.emplace_back(obs.data() + a, e - a);
    a = e + 1;
  }
  size_t body = 0;  // first line after the header's blank line
  while (body < lines.size() && !lines[body].empty()) ++body;
  body = std::min(body + 1, lines.size());
  std::string mark = "[";  // built by appends: GCC 12 warns falsely on "[" + std::string
  mark += std::to_string(element_id);
  mark += "] ";
  for (size_t i = body; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    l.remove_prefix(std::min(l.find_first_not_of('\t'), l.size()));
    if (l.substr(0, mark.size()) != mark) continue;
    const size_t from = std::max<size_t>(body, i - std::min<size_t>(i, static_cast<size_t>(std::max<int64_t>(0, before))));
    const size_t to = std::min(lines.size(), i + 1 + static_cast<size_t>(std::max<int64_t>(0, after)));
    std::string out;
    for (size_t j = 0; j < body; ++j) out.append(lines[j]).push_back('\n');
    for (size_t j = from; j < to; ++j) out.append(lines[j]).push_back('\n');
    if (!out.empty() && to == lines.size()) out.pop_back();  // the observation's own end
    return out;
  }
  return std::nullopt;
}

std::vector<train_sequence> render_cropped_steps(const trajectory& tr, uint64_t seed, const tokenizer* tok,
                                                 int64_t max_obs_tokens) {
  trajectory cropped = tr;
  std::vector<char> keep(tr.steps.size(), 0);
  uint64_t st = splitmix64(seed ^ 0x63726F70ull);
  for (size_t i = 0; i < tr.steps.size(); ++i) {
    if (!tr.steps[i].note.empty()) continue;  // its fact may be off the cut: not a crop step
    const agent_action a = extract_agent_action(compact_reply(tr.steps[i].action));
    if (!a.ok() || a.parsed.act.element_id < 0) continue;
    st = splitmix64(st + i);
    const uint64_t span = static_cast<uint64_t>(k_crop_lines_most - k_crop_lines_least + 1);
    const int64_t before = k_crop_lines_least + static_cast<int64_t>(st % span),
                  after = k_crop_lines_least + static_cast<int64_t>((st >> 20) % span);
    std::optional<std::string> c = crop_observation(tr.steps[i].observation, a.parsed.act.element_id, before, after);
    if (!c) continue;
    cropped.steps[i].observation = std::move(*c);
    keep[i] = 1;
  }
  std::vector<train_sequence> all = render_trajectory(cropped, history_mode::last, tok, max_obs_tokens);
  std::vector<train_sequence> out;
  for (size_t i = 0; i < all.size() && i < keep.size(); ++i)
    if (keep[i]) out.push_back(std::move(all[i]));
  return out;
}

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

train_data_summary write_train_data(const train_data_options& opt) {
  if (opt.site_seeds.empty()) throw std::invalid_argument("train-data: no site seeds");
  for (uint64_t s : opt.site_seeds)
    if (s == tasks::k_default_task_seed)
      throw std::invalid_argument("train-data: site seed 1 is the committed suites' content (evaluation); train on others");
  if (opt.renamed.copies < 0) throw std::invalid_argument("train-data: renamed copies must be >= 0");
  if (!(opt.renamed.crop_share >= 0 && opt.renamed.crop_share <= 1))
    throw std::invalid_argument("train-data: the renamed steps' crop share must be in [0, 1]");
  if (!(opt.renamed.swap_share >= 0 && opt.renamed.swap_share <= 1))
    throw std::invalid_argument("train-data: the renamed names' swap share must be in [0, 1]");
  if (opt.retarget < 0) throw std::invalid_argument("train-data: retarget variants must be >= 0");
  if (opt.revalued < 0) throw std::invalid_argument("train-data: revalued copies must be >= 0");
  if (!(opt.retarget_crop >= 0 && opt.retarget_crop <= 1))
    throw std::invalid_argument("train-data: the retargeted steps' crop share must be in [0, 1]");
  if (opt.renamed.crop_lines < 1) throw std::invalid_argument("train-data: the renamed steps' crop lines must be >= 1");
  auto log = [&](const std::string& m) {
    if (opt.log) opt.log(m);
  };
  fs::create_directories(opt.out_dir);
  train_data_summary sum;

  train_dataset last{"agent-last", {}}, full{"agent-full", {}}, crop{"agent-crop", {}}, corpus{"corpus", {}};
  train_dataset renamed{"agent-renamed", {}}, retarget{"agent-retarget", {}}, revalued{"agent-revalued", {}};
  std::set<std::string> retarget_intents;  // the objectives agent-retarget made up
  std::set<std::string> pages_seen;
  std::vector<std::string> pages;
  for (size_t k = 0; k < opt.site_seeds.size(); ++k) {
    const uint64_t s = opt.site_seeds[k];
    std::vector<trajectory> trs;
    try {
      trs = oracle_trajectories(s, opt.jobs, &sum.tasks, &sum.solved, log);
    } catch (const std::runtime_error& e) {  // the generator cannot instantiate every template on this content
      log("site seed " + std::to_string(s) + ": skipped (" + e.what() + ")");
      sum.skipped_seeds.push_back(s);
      continue;
    }
    int64_t steps = 0;
    std::vector<std::string> words;  // this seed's page words: the new names' vocabulary
    if (opt.renamed.copies > 0) {
      std::vector<std::string> texts;
      for (const trajectory& tr : trs)
        for (const seen_step& st : tr.steps) texts.push_back(st.observation);
      words = word_pool(texts);
    }
    for (const trajectory& tr : trs) {
      for (train_sequence& q : render_trajectory(tr, history_mode::last, opt.tok, opt.max_obs_tokens))
        last.sequences.push_back(std::move(q));
      for (train_sequence& q : render_trajectory(tr, history_mode::full, opt.tok, opt.max_obs_tokens))
        full.sequences.push_back(std::move(q));
      for (train_sequence& q : render_cropped_steps(tr, opt.seed ^ splitmix64(s * 1000003 + crop.sequences.size()),
                                                    opt.tok, opt.max_obs_tokens))
        crop.sequences.push_back(std::move(q));
      if (opt.renamed.copies > 0)
        for (train_sequence& q :
             render_renamed_steps(tr, words, opt.seed ^ splitmix64(s * 7919 + renamed.sequences.size()), opt.renamed,
                                  opt.tok, opt.max_obs_tokens))
          renamed.sequences.push_back(std::move(q));
      if (opt.retarget > 0)
        for (train_sequence& q : render_retargeted_steps(tr, opt.retarget, opt.retarget_crop,
                                                         opt.seed ^ splitmix64(s * 4099 + retarget.sequences.size()),
                                                         opt.tok, opt.max_obs_tokens, &retarget_intents))
          retarget.sequences.push_back(std::move(q));
      if (opt.revalued > 0)
        for (train_sequence& q :
             render_revalued_steps(tr, opt.revalued, opt.seed ^ splitmix64(s * 6151 + revalued.sequences.size()),
                                   opt.tok, opt.max_obs_tokens))
          revalued.sequences.push_back(std::move(q));
      for (const seen_step& st : tr.steps)
        if (pages_seen.insert(st.observation).second) pages.push_back(st.observation);
      steps += static_cast<int64_t>(tr.steps.size());
    }
    log("site seed " + std::to_string(s) + " (" + std::to_string(k + 1) + "/" + std::to_string(opt.site_seeds.size()) +
        "): " + std::to_string(trs.size()) + " trajectories, " + std::to_string(steps) + " steps");
  }
  for (const std::string& p : pages) corpus.sequences.push_back({{{p, true}}});

  // Document lengths in words from the tokenizer's words-per-token on filler text.
  double tokens_per_word = 1.3;
  if (opt.tok) {
    const std::string sample = niah_filler_text(2000, 7);
    tokens_per_word = static_cast<double>(opt.tok->encode(sample, false).size()) /
                      static_cast<double>(std::count(sample.begin(), sample.end(), ' '));
  }
  const int64_t max_words = static_cast<int64_t>(0.9 * static_cast<double>(opt.max_doc_tokens) / tokens_per_word);
  train_dataset niah =
      niah_documents_from(opt.seed, opt.n_niah, max_words, pages, opt.tok,
                          opt.max_doc_tokens - 40 * opt.niah_needles, opt.niah_needles);
  // A record line is about 14 tokens; each query beyond the first about 20 more.
  const int64_t kv_room = opt.max_doc_tokens - 20 * (opt.kv_queries - 1);
  train_dataset kv = kv_documents(opt.seed, opt.n_kv, std::max<int64_t>(8, kv_room / 14), opt.kv_queries);
  log("documents: " + std::to_string(niah.sequences.size()) + " niah, " + std::to_string(kv.sequences.size()) + " kv");

  std::vector<const train_dataset*> sets = {&last, &full, &crop, &niah, &kv, &corpus};
  if (opt.renamed.copies > 0) sets.insert(sets.begin() + 3, &renamed);
  if (opt.retarget > 0) sets.insert(sets.begin() + 3 + (opt.renamed.copies > 0), &retarget);
  if (opt.revalued > 0) sets.insert(sets.begin() + 3 + (opt.renamed.copies > 0) + (opt.retarget > 0), &revalued);
  train_dataset lookup{"lookup", {}};
  if (opt.lookup_queries > 0) {
    std::vector<std::string> cut;  // the pages as the agent sees them
    for (const std::string& p : pages) cut.push_back(opt.tok ? truncate_to_tokens(*opt.tok, p, opt.max_obs_tokens).text : p);
    lookup = lookup_documents(cut, opt.seed, opt.lookup_queries);
    sets.push_back(&lookup);
    log("documents: " + std::to_string(lookup.sequences.size()) + " lookup");
  }
  if (opt.retarget > 0) {  // evaluation splits success by whether a task's objective was trained on
    const fs::path f = fs::path(opt.out_dir) / "retarget-objectives.txt";
    std::ofstream out(f, std::ios::binary);
    for (const std::string& i : retarget_intents) out << i << "\n";
    if (!out) throw std::runtime_error("cannot write " + f.string());
  }
  for (const train_dataset* d : sets) sum.sequences.push_back({d->name, static_cast<int64_t>(d->sequences.size())});
  if (!opt.tok) {
    const fs::path f = fs::path(opt.out_dir) / "corpus.txt";
    std::ofstream out(f, std::ios::binary);
    for (const train_dataset* d : sets)
      for (const train_sequence& q : d->sequences) {
        for (const train_segment& s : q.segments) out << s.text;
        out << "\n";
      }
    if (!out) throw std::runtime_error("cannot write " + f.string());
    log("wrote " + f.string());
    return sum;
  }
  for (const train_dataset* d : sets) {
    const int64_t n = write_token_files(*d, *opt.tok, opt.out_dir, opt.jobs);
    sum.tokens.push_back({d->name, n});
    log(d->name + ": " + std::to_string(d->sequences.size()) + " sequences, " + std::to_string(n) + " tokens");
  }
  write_samples(sets, (fs::path(opt.out_dir) / "samples.txt").string());
  return sum;
}

}  // namespace kvarena
