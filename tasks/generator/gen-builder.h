// gen-builder.h: what every task template of the generator shares: read-only access to the
// seeded site data, a task draft with its oracle plan, and small constructors for the
// eval blocks (string_match, url_match, program_html) and for answers in the sites'
// formats. Templates (gen-<site>.cpp) only pick data and fill drafts.
//
// Determinism: templates draw nothing at random. They walk the data in SQL ORDER BY order
// and pick by fixed rules (the i-th of a list, the k-th where a condition holds), so one
// seed always gives byte-identical task files.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "task/task.h"
#include "oracle-plan.h"

namespace kvarena::sites {
class site_store;
}

namespace kvarena::tasks::gen {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// The seeded content of every built-in site (the "main" tenant of a site store).
class site_data {
 public:
  explicit site_data(uint64_t seed);
  ~site_data();
  bool has_site(const std::string& name) const;
  // Rows as {column: value} objects; throws std::runtime_error naming the SQL on error.
  json rows(const std::string& site, const std::string& sql) const;
  json row(const std::string& site, const std::string& sql) const;  // the first row; throws when none

 private:
  std::unique_ptr<sites::site_store> store_;
};

// Builds a plan step by step. Step indices are 0-based, in the order added.
class plan_builder {
 public:
  plan_builder& go(const std::string& url);
  plan_builder& click(const std::string& role, const std::string& name, int nth = 0);
  plan_builder& click_containing(const std::string& role, const std::string& name_part);
  plan_builder& type(const std::string& role, const std::string& name, const std::string& text, bool enter = false);
  plan_builder& clear(const std::string& role, const std::string& name);
  plan_builder& tab(int index);
  plan_builder& back();
  plan_builder& scroll(const std::string& direction);
  plan_builder& stop(const std::string& answer = "");
  // Texts the observation must hold after the last step added.
  plan_builder& expect(const std::string& text);
  int last() const { return static_cast<int>(steps_.size()) - 1; }  // index of the last step
  const std::vector<plan_step>& steps() const { return steps_; }

 private:
  std::vector<plan_step> steps_;
};

struct draft {
  std::vector<std::string> sites;
  std::string start_url;
  std::string intent_template;
  json instantiation = json::object();  // keys sorted, as the loader writes them back
  int template_id = 0;
  std::string template_name;  // "classifieds.cheapest_in_category"
  task_eval eval;
  std::string reasoning = "easy", visual = "easy", overall = "easy";
  plan_builder plan;
  std::vector<memory_fact> memory;
  std::vector<std::string> image;  // VWA's input images (URLs with the site placeholders)

  // The intent: intent_template with every {key} replaced from `instantiation`.
  std::string intent() const;
  task to_task(int64_t id) const;
};

// A draft on one site: sites {site}, start URL `home` ("__SHOPPING__"), template name
// "<site>.<name>".
draft site_draft(const std::string& site, const std::string& home, const std::string& name, int template_id,
                 const std::string& intent_template);

// ---- data pickers and plan snippets ----
// How many rows of `table` a site search for `q` finds: every space-separated word of q
// LIKE '%word%' in one of `columns` (the sites' search, for the texts the generator uses).
int64_t site_search_count(const site_data& data, const std::string& site, const std::string& table,
                          const std::vector<std::string>& columns, const std::string& q);
// Types `text` into the search box, submits, and opens the result link named `text`.
void search_and_open(plan_builder& p, const std::string& text);

// ---- eval blocks ----
void expect_must_include(draft& d, std::vector<std::string> items);
void expect_exact(draft& d, const std::string& answer);
void expect_fuzzy(draft& d, std::vector<std::string> references);
void expect_required_values(draft& d, std::vector<std::string> conditions);
void expect_na(draft& d, const std::string& why);  // infeasible: fuzzy_match "N/A" + string_note
void expect_url(draft& d, const std::string& url, bool gold_in_pred = false);
// A program_html target: url "last", "func:...", or a URL; one required_contents key.
program_html_target html_target(const std::string& url, const std::string& locator);
program_html_target& with_exact(program_html_target& t, const std::string& text);
program_html_target& with_must_include(program_html_target& t, std::vector<std::string> items);
program_html_target& with_must_exclude(program_html_target& t, std::vector<std::string> items);
void expect_html(draft& d, std::vector<program_html_target> targets);
// document.querySelector('S').outerText (or another property).
std::string qs(const std::string& selector, const std::string& property = "outerText");

// ---- values in the sites' formats ----
std::string money(int64_t cents);        // "$1,250.00" (the sites' format_money)
std::string price_input(int64_t cents);  // "1250", "19.99": what a price field takes
// must_include alternatives for a price: "$1,250.00 |OR| 1250".
std::string price_alternatives(int64_t cents);
std::string str(const json& row, const char* key);
int64_t num(const json& row, const char* key);
// The k-th of n picks spread evenly over `v` (v[k * size / n]): deterministic variety.
// Throws std::runtime_error naming `what` when v is empty.
const json& spread(const std::vector<json>& v, size_t k, size_t n, const char* what = "data");
// A SQL string literal: 'it''s'.
std::string sql_text(const std::string& s);

}  // namespace kvarena::tasks::gen
