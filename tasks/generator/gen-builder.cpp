// gen-builder.cpp: see gen-builder.h.
#include "generator/gen-builder.h"

#include <stdexcept>

#include "sites/html.h"
#include "sites/site-store.h"

namespace kvarena::tasks::gen {

site_data::site_data(uint64_t seed)
    : store_(std::make_unique<sites::site_store>(sites::builtin_sites(), seed)) {}

site_data::~site_data() = default;

bool site_data::has_site(const std::string& name) const { return store_->find_site(name) != nullptr; }

json site_data::rows(const std::string& site, const std::string& sql) const {
  try {
    return store_->query(sites::kDefaultTenant, site, sql);
  } catch (const std::exception& e) {
    throw std::runtime_error("generator: query on " + site + " failed: " + e.what() + "\nSQL: " + sql);
  }
}

json site_data::row(const std::string& site, const std::string& sql) const {
  json r = rows(site, sql);
  if (r.empty()) throw std::runtime_error("generator: no row on " + site + " for: " + sql);
  return r[0];
}

// ---- plan ----

namespace {
plan_step element_step(const std::string& action, const std::string& role, const std::string& name) {
  plan_step s;
  s.action = action;
  s.target.role = role;
  s.target.name = name;
  return s;
}
}  // namespace

plan_builder& plan_builder::go(const std::string& url) {
  plan_step s;
  s.action = "goto";
  s.url = url;
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::click(const std::string& role, const std::string& name, int nth) {
  plan_step s = element_step("click", role, name);
  s.target.nth = nth;
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::click_containing(const std::string& role, const std::string& name_part) {
  plan_step s = element_step("click", role, name_part);
  s.target.contains = true;
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::type(const std::string& role, const std::string& name, const std::string& text, bool enter) {
  plan_step s = element_step("type", role, name);
  s.text = text;
  s.enter = enter;
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::clear(const std::string& role, const std::string& name) {
  steps_.push_back(element_step("clear", role, name));
  return *this;
}

plan_builder& plan_builder::tab(int index) {
  plan_step s;
  s.action = "tab_focus";
  s.tab = index;
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::back() {
  plan_step s;
  s.action = "go_back";
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::scroll(const std::string& direction) {
  plan_step s;
  s.action = "scroll";
  s.direction = direction;
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::stop(const std::string& answer) {
  plan_step s;
  s.action = "stop";
  s.answer = answer;
  steps_.push_back(s);
  return *this;
}

plan_builder& plan_builder::expect(const std::string& text) {
  if (steps_.empty()) throw std::logic_error("plan_builder::expect before any step");
  steps_.back().expect.push_back(text);
  return *this;
}

// ---- draft ----

std::string draft::intent() const {
  std::string out;
  for (size_t i = 0; i < intent_template.size(); ++i) {
    if (intent_template[i] == '{') {
      size_t close = intent_template.find('}', i);
      if (close != std::string::npos) {
        std::string key = intent_template.substr(i + 1, close - i - 1);
        if (instantiation.contains(key)) {
          const json& v = instantiation[key];
          out += v.is_string() ? v.get<std::string>() : v.dump();
          i = close;
          continue;
        }
      }
    }
    out += intent_template[i];
  }
  return out;
}

task draft::to_task(int64_t id) const {
  task t;
  t.task_id = id;
  t.sites = sites;
  t.require_login = true;
  t.storage_state = std::nullopt;
  t.start_url = start_url;
  t.intent = intent();
  t.intent_template = intent_template;
  t.instantiation_dict = instantiation.dump();
  t.intent_template_id = template_id;
  t.require_reset = false;
  t.eval = eval;
  t.image = image;  // one input image is written as a string, as VWA's files do
  t.reasoning_difficulty = reasoning;
  t.visual_difficulty = visual;
  t.overall_difficulty = overall;
  task_extension ext;
  ext.template_name = template_name;
  ext.plan = plan.steps();
  ext.memory = memory;
  t.kvarena = extension_to_json(ext);
  return t;
}

// ---- eval blocks ----

namespace {
reference_answer_set& answers(draft& d) {
  if (!d.eval.reference_answers) d.eval.reference_answers = reference_answer_set{};
  return *d.eval.reference_answers;
}
void add_type(draft& d, const char* type) {
  for (const auto& t : d.eval.eval_types)
    if (t == type) return;
  d.eval.eval_types.push_back(type);
}
}  // namespace

void expect_must_include(draft& d, std::vector<std::string> items) {
  add_type(d, "string_match");
  answers(d).must_include = std::move(items);
}

void expect_exact(draft& d, const std::string& answer) {
  add_type(d, "string_match");
  answers(d).exact_match = answer;
}

void expect_fuzzy(draft& d, std::vector<std::string> references) {
  add_type(d, "string_match");
  fuzzy_reference f;
  f.is_list = true;
  f.items = std::move(references);
  answers(d).fuzzy_match = f;
}

void expect_required_values(draft& d, std::vector<std::string> conditions) {
  add_type(d, "string_match");
  answers(d).required_values = std::move(conditions);
}

void expect_na(draft& d, const std::string& why) {
  add_type(d, "string_match");
  fuzzy_reference f;
  f.is_list = false;
  f.text = "N/A";
  answers(d).fuzzy_match = f;
  d.eval.string_note = why;
}

void expect_url(draft& d, const std::string& url, bool gold_in_pred) {
  add_type(d, "url_match");
  d.eval.reference_url = url;
  d.eval.url_note = gold_in_pred ? "GOLD in PRED" : "EXACT";
}

program_html_target html_target(const std::string& url, const std::string& locator) {
  program_html_target t;
  t.url = url;
  t.locator = locator;
  return t;
}

program_html_target& with_exact(program_html_target& t, const std::string& text) {
  t.required_contents.exact_match = text;
  return t;
}

program_html_target& with_must_include(program_html_target& t, std::vector<std::string> items) {
  t.required_contents.must_include = std::move(items);
  return t;
}

program_html_target& with_must_exclude(program_html_target& t, std::vector<std::string> items) {
  t.required_contents.must_exclude = std::move(items);
  return t;
}

void expect_html(draft& d, std::vector<program_html_target> targets) {
  add_type(d, "program_html");
  d.eval.program_html = std::move(targets);
}

std::string qs(const std::string& selector, const std::string& property) {
  return "document.querySelector('" + selector + "')." + property;
}

// ---- values ----

std::string money(int64_t cents) { return sites::format_money(cents); }

std::string price_input(int64_t cents) {
  std::string d = std::to_string(cents / 100);
  if (cents % 100) d.append(1, '.').append(std::to_string(100 + cents % 100).substr(1));
  return d;
}

std::string price_alternatives(int64_t cents) { return money(cents) + " |OR| " + price_input(cents); }

std::string str(const json& row, const char* key) {
  const json& v = row.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

int64_t num(const json& row, const char* key) { return row.at(key).get<int64_t>(); }

const json& spread(const std::vector<json>& v, size_t k, size_t n, const char* what) {
  if (v.empty()) throw std::runtime_error(std::string("generator: nothing fits a template: ") + what);
  return v[(k * v.size()) / n % v.size()];
}

std::string sql_text(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

draft site_draft(const std::string& site, const std::string& home, const std::string& name, int template_id,
                 const std::string& intent_template) {
  draft d;
  d.sites = {site};
  d.start_url = home;
  d.template_name = site + "." + name;
  d.template_id = template_id;
  d.intent_template = intent_template;
  return d;
}

int64_t site_search_count(const site_data& data, const std::string& site, const std::string& table,
                          const std::vector<std::string>& columns, const std::string& q) {
  std::string where = "1";
  size_t i = 0;
  while (i < q.size()) {
    size_t j = q.find(' ', i);
    if (j == std::string::npos) j = q.size();
    std::string w = q.substr(i, j - i);
    if (!w.empty()) {
      std::string pat = sql_text("%" + w + "%");
      std::string any;
      for (const auto& c : columns) any += (any.empty() ? "" : " OR ") + c + " LIKE " + pat;
      where += " AND (" + any + ")";
    }
    i = j + 1;
  }
  return num(data.row(site, "SELECT COUNT(*) AS n FROM " + table + " WHERE " + where), "n");
}

void search_and_open(plan_builder& p, const std::string& text) {
  p.type("searchbox", "Search", text, true).click("link", text);
}

}  // namespace kvarena::tasks::gen
