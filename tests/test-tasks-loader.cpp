// test-tasks-loader.cpp: the task model (envs/task/task.h): loading VWA-format task JSON
// from text, files, arrays and folders; round trips that keep unknown fields; placeholder
// substitution; and every validation message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "task/task.h"
#include "test-util.h"

using namespace kvarena;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Modelled on web-arena-x/visualwebarena config_files/vwa/test_reddit.raw.json.
const char* k_reddit_url_task = R"json({
  "sites": ["reddit"],
  "task_id": 0,
  "require_login": true,
  "storage_state": "./.auth/reddit_state.json",
  "start_url": "__REDDIT__/f/food",
  "geolocation": null,
  "intent_template": "I'm trying to find this post. Navigate to the comment section for it.",
  "intent": "I'm trying to find this post. Navigate to the comment section for it.",
  "image": "__HOMEPAGE__/static/input_images/reddit/task_0/input_0.png",
  "instantiation_dict": {},
  "require_reset": false,
  "eval": {
    "eval_types": ["url_match"],
    "reference_answers": null,
    "reference_url": "__REDDIT__/f/food/82896",
    "program_html": [],
    "url_note": "GOLD in PRED"
  },
  "reasoning_difficulty": "easy",
  "visual_difficulty": "medium",
  "overall_difficulty": "easy",
  "comments": "post is near the top, can be done without exact image understanding",
  "intent_template_id": 0
})json";

const char* k_reddit_suite = R"json([
  {
    "sites": ["reddit"], "task_id": 3, "require_login": true,
    "storage_state": "./.auth/reddit_state.json", "start_url": "__REDDIT__/f/food",
    "geolocation": null,
    "intent_template": "Tell me how many comments mention the word \"{{word}}\".",
    "intent": "Tell me how many comments mention the word \"spicy\".",
    "image": ["__HOMEPAGE__/static/input_images/reddit/task_3/input_0.png"],
    "instantiation_dict": {"word": "spicy"},
    "require_reset": false,
    "eval": {
      "eval_types": ["string_match"],
      "reference_answers": {"must_include": ["11"]},
      "reference_url": "",
      "program_html": [],
      "string_note": "",
      "reference_answer_raw_annotation": "11"
    },
    "reasoning_difficulty": "medium", "visual_difficulty": "easy", "overall_difficulty": "easy",
    "intent_template_id": 1
  },
  {
    "sites": ["reddit"], "task_id": 7, "require_login": true,
    "storage_state": "./.auth/reddit_state.json", "start_url": "__REDDIT__/forums/all",
    "intent": "Navigate to the comment url of the recipe posted by the OP in the comments.",
    "image": null,
    "instantiation_dict": {},
    "require_reset": false,
    "eval": {
      "eval_types": ["string_match"],
      "reference_answers": {"fuzzy_match": "N/A"},
      "reference_url": "",
      "program_html": [],
      "string_note": "The OP did not provide a recipe"
    },
    "intent_template_id": 3
  }
])json";

// A state-changing shopping task in WA/VWA style, with a kvarena extension object.
const char* k_shopping_html_task = R"json({
  "sites": ["shopping"],
  "task_id": 212,
  "require_login": true,
  "storage_state": "./.auth/shopping_state.json",
  "start_url": "__SHOPPING__ |AND| __SHOPPING__/checkout/cart",
  "intent": "Add the cheapest red bike to my wish list",
  "require_reset": true,
  "viewport_size": {"width": 1280, "height": 2048},
  "eval": {
    "eval_types": ["program_html", "url_match"],
    "reference_answers": null,
    "reference_url": "__SHOPPING__/wishlist/ |OR| __SHOPPING__/wishlist/index/index/",
    "url_note": "EXACT",
    "program_html": [
      {
        "url": "__SHOPPING__/wishlist/",
        "locator": "document.querySelector('.products-grid.wishlist').outerText",
        "required_contents": {"must_include": ["Red Bike |OR| Crimson Bike"]},
        "prep_actions": ["document.querySelector('#show-all').click()"],
        "note_for_annotators": {"checked_by": "jk"}
      },
      {
        "url": "func:shopping_get_latest_order_url()",
        "locator": "func:get_query_text(__page__, '.order-total')",
        "required_contents": {"required_values": ["< 200"], "hint": 1}
      }
    ]
  },
  "overall_difficulty": "medium",
  "kvarena": {"oracle": ["click [12]", "stop []"], "memory_distance": 14}
})json";

task load_one(const std::string& json, const std::string& origin = "t.json") {
  task_suite s = parse_tasks(json, origin);
  EXPECT_TRUE(s.ok()) << (s.errors.empty() ? "" : s.errors[0]);
  EXPECT_EQ(s.tasks.size(), 1u);
  return s.tasks.empty() ? task{} : s.tasks[0];
}

// The errors of loading `json` (which must fail).
std::vector<std::string> errors_of(const std::string& json, const std::string& origin = "tasks/x/12.json") {
  task_suite s = parse_tasks(json, origin);
  EXPECT_FALSE(s.ok()) << json;
  return s.errors;
}

bool has_error(const std::vector<std::string>& errors, const std::string& part) {
  for (const auto& e : errors)
    if (contains(e, part)) return true;
  return false;
}

std::string all(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += e + "\n";
  return out;
}

// A minimal valid task with one field replaced (a JSON fragment "key": value).
std::string minimal_with(const std::string& extra_fields, const std::string& eval = "") {
  return R"({"task_id": 12, "sites": ["shopping"], "start_url": "__SHOPPING__", "intent": "Find it",)" +
         extra_fields + R"( "eval": )" +
         (eval.empty() ? std::string(R"({"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}})") : eval) +
         "}";
}

}  // namespace

// ---- loading VWA-format tasks ----

TEST(TaskLoader, VwaUrlTaskFields) {
  task t = load_one(k_reddit_url_task);
  EXPECT_EQ(t.task_id, 0);
  EXPECT_EQ(t.sites, std::vector<std::string>{"reddit"});
  EXPECT_TRUE(t.require_login);
  EXPECT_EQ(t.storage_state.value(), "./.auth/reddit_state.json");
  EXPECT_EQ(t.start_url, "__REDDIT__/f/food");
  EXPECT_EQ(t.intent_template.value(), t.intent);
  EXPECT_EQ(t.image, std::vector<std::string>{"__HOMEPAGE__/static/input_images/reddit/task_0/input_0.png"});
  EXPECT_FALSE(t.image_is_list);
  EXPECT_EQ(t.instantiation_dict, "{}");
  EXPECT_EQ(t.intent_template_id.value(), 0);
  EXPECT_FALSE(t.require_reset);
  EXPECT_EQ(t.eval.eval_types, std::vector<std::string>{"url_match"});
  EXPECT_FALSE(t.eval.reference_answers.has_value());
  EXPECT_EQ(t.eval.reference_url.value(), "__REDDIT__/f/food/82896");
  EXPECT_EQ(t.eval.url_note.value(), "GOLD in PRED");
  EXPECT_TRUE(t.eval.program_html.has_value());
  EXPECT_TRUE(t.eval.program_html->empty());
  EXPECT_EQ(t.reasoning_difficulty.value(), "easy");
  EXPECT_EQ(t.visual_difficulty.value(), "medium");
  EXPECT_EQ(t.overall_difficulty.value(), "easy");
  // Unknown fields are kept.
  EXPECT_EQ(t.extra.at("geolocation"), "null");
  EXPECT_EQ(t.extra.at("comments"), "\"post is near the top, can be done without exact image understanding\"");
}

TEST(TaskLoader, RawJsonArray) {
  task_suite s = parse_tasks(k_reddit_suite, "test_reddit.raw.json");
  ASSERT_TRUE(s.ok()) << all(s.errors);
  ASSERT_EQ(s.tasks.size(), 2u);
  EXPECT_EQ(s.origins, (std::vector<std::string>{"test_reddit.raw.json[0]", "test_reddit.raw.json[1]"}));
  const task& a = s.tasks[0];
  EXPECT_EQ(a.instantiation_dict, R"({"word":"spicy"})");
  EXPECT_TRUE(a.image_is_list);
  EXPECT_EQ(a.eval.reference_answers->must_include.value(), std::vector<std::string>{"11"});
  EXPECT_EQ(a.eval.extra.at("reference_answer_raw_annotation"), "\"11\"");
  const task& b = s.tasks[1];
  EXPECT_TRUE(b.image.empty());
  ASSERT_TRUE(b.eval.reference_answers->fuzzy_match.has_value());
  EXPECT_TRUE(b.eval.reference_answers->fuzzy_match->is_na());
  EXPECT_EQ(b.eval.string_note.value(), "The OP did not provide a recipe");
}

TEST(TaskLoader, ProgramHtmlTaskWithExtensions) {
  task t = load_one(k_shopping_html_task);
  EXPECT_EQ(start_urls(t), (std::vector<std::string>{"__SHOPPING__", "__SHOPPING__/checkout/cart"}));
  ASSERT_TRUE(t.viewport_size.has_value());
  EXPECT_EQ(t.viewport_size->width, 1280);
  EXPECT_EQ(t.viewport_size->height, 2048);
  ASSERT_EQ(t.eval.program_html->size(), 2u);
  const program_html_target& p = (*t.eval.program_html)[0];
  EXPECT_EQ(p.url, "__SHOPPING__/wishlist/");
  EXPECT_EQ(p.locator, "document.querySelector('.products-grid.wishlist').outerText");
  EXPECT_EQ(p.required_contents.must_include.value(), std::vector<std::string>{"Red Bike |OR| Crimson Bike"});
  EXPECT_EQ(p.prep_actions.value(), std::vector<std::string>{"document.querySelector('#show-all').click()"});
  EXPECT_EQ(p.extra.at("note_for_annotators"), R"({"checked_by":"jk"})");
  const program_html_target& q = (*t.eval.program_html)[1];
  EXPECT_EQ(q.required_contents.required_values.value(), std::vector<std::string>{"< 200"});
  EXPECT_EQ(q.required_contents.extra.at("hint"), "1");
  EXPECT_FALSE(q.prep_actions.has_value());
  EXPECT_EQ(t.kvarena, R"({"memory_distance":14,"oracle":["click [12]","stop []"]})");
}

TEST(TaskLoader, NumbersAcceptedWhereVwaWritesThem) {
  task t = load_one(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"exact_match": 170, "must_include": [11, "x"]}})"));
  EXPECT_EQ(t.eval.reference_answers->exact_match.value(), "170");
  EXPECT_EQ(t.eval.reference_answers->must_include.value(), (std::vector<std::string>{"11", "x"}));
}

// ---- round trips ----

TEST(TaskLoader, RoundTripKeepsEveryField) {
  for (const char* json : {k_reddit_url_task, k_shopping_html_task}) {
    task t = load_one(json);
    std::string written = task_to_json(t);
    task back = load_one(written, "written.json");
    EXPECT_EQ(back, t) << written;
    EXPECT_EQ(task_to_json(back), written);  // stable
    EXPECT_EQ(task_to_json(load_one(task_to_json(t, -1))), written);  // one-line form too
  }
  task_suite s = parse_tasks(k_reddit_suite, "suite.raw.json");
  task_suite back = parse_tasks(tasks_to_json(s.tasks), "back.raw.json");
  ASSERT_TRUE(back.ok()) << all(back.errors);
  EXPECT_EQ(back.tasks, s.tasks);
}

TEST(TaskLoader, WrittenJsonKeepsVwaKeyOrderAndUnknownFields) {
  std::string written = task_to_json(load_one(k_reddit_url_task));
  EXPECT_LT(written.find("\"sites\""), written.find("\"task_id\""));
  EXPECT_LT(written.find("\"task_id\""), written.find("\"eval\""));
  EXPECT_TRUE(contains(written, "\"comments\": \"post is near the top")) << written;
  EXPECT_TRUE(contains(written, "\"geolocation\": null")) << written;
  EXPECT_TRUE(contains(written, "\"reference_answers\": null")) << written;
}

TEST(TaskLoader, WriteFileAndLoadItBack) {
  auto dir = kvarena::test::temp_dir("tasks-write");
  task t = load_one(k_shopping_html_task);
  std::string err;
  ASSERT_TRUE(write_task_file((dir / "212.json").string(), t, &err)) << err;
  task_suite s = load_tasks((dir / "212.json").string());
  ASSERT_TRUE(s.ok()) << all(s.errors);
  EXPECT_EQ(s.tasks.at(0), t);
  EXPECT_FALSE(write_task_file((dir / "no-such-dir" / "1.json").string(), t, &err));
  EXPECT_TRUE(contains(err, "cannot open for writing")) << err;
}

TEST(TaskLoader, HandBuiltTaskWithBrokenRawTextStillWrites) {
  task t = load_one(minimal_with(""));
  t.kvarena = "{not json";
  t.extra["weird"] = "";
  t.intent = "bad \xff utf8";
  std::string written = task_to_json(t);
  EXPECT_TRUE(contains(written, "\"kvarena\": \"{not json\"")) << written;
}

// ---- files and folders ----

TEST(TaskLoader, FolderOfIdFilesInNumericOrder) {
  auto dir = kvarena::test::temp_dir("tasks-folder");
  for (int id : {10, 2, 1}) {
    task t = load_one(minimal_with(""));
    t.task_id = id;
    std::string err;
    ASSERT_TRUE(write_task_file((dir / (std::to_string(id) + ".json")).string(), t, &err)) << err;
  }
  std::ofstream(dir / "notes.txt") << "not a task";
  std::ofstream(dir / ".hidden.json") << "garbage";
  task_suite s = load_tasks(dir.string());
  ASSERT_TRUE(s.ok()) << all(s.errors);
  ASSERT_EQ(s.tasks.size(), 3u);
  EXPECT_EQ(s.tasks[0].task_id, 1);
  EXPECT_EQ(s.tasks[1].task_id, 2);
  EXPECT_EQ(s.tasks[2].task_id, 10);
  EXPECT_EQ(s.origins[2], (dir / "10.json").string());
}

TEST(TaskLoader, RawArrayFile) {
  auto dir = kvarena::test::temp_dir("tasks-raw");
  std::ofstream(dir / "test_reddit.raw.json") << k_reddit_suite;
  task_suite s = load_tasks((dir / "test_reddit.raw.json").string());
  ASSERT_TRUE(s.ok()) << all(s.errors);
  EXPECT_EQ(s.tasks.size(), 2u);
}

TEST(TaskLoader, FileNameMustMatchTaskId) {
  auto dir = kvarena::test::temp_dir("tasks-mismatch");
  std::ofstream(dir / "13.json") << minimal_with("");
  task_suite s = load_tasks(dir.string());
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors[0], (dir / "13.json").string() +
                             ": task_id: is 12 but the file is named 13.json (rename the file or fix the id)");
  EXPECT_TRUE(s.tasks.empty());
}

TEST(TaskLoader, DuplicateTaskIdInASuite) {
  auto dir = kvarena::test::temp_dir("tasks-dup");
  std::ofstream(dir / "12.json") << minimal_with("");
  std::ofstream(dir / "copy.json") << minimal_with("");
  task_suite s = load_tasks(dir.string());
  ASSERT_EQ(s.errors.size(), 1u) << all(s.errors);
  EXPECT_EQ(s.errors[0], (dir / "copy.json").string() + ": task_id: 12 is already used by " +
                             (dir / "12.json").string() + " (task ids must be unique in a suite)");
  auto arr = errors_of("[" + minimal_with("") + "," + minimal_with("") + "]", "s.raw.json");
  EXPECT_EQ(arr.at(0), "s.raw.json[1]: task_id: 12 is already used by s.raw.json[0] (task ids must be unique in a suite)");
}

TEST(TaskLoader, MissingPathsAndEmptyFolders) {
  task_suite s = load_tasks("/nonexistent/kvarena/tasks");
  EXPECT_EQ(s.errors.at(0), "/nonexistent/kvarena/tasks: no such file or folder");
  auto dir = kvarena::test::temp_dir("tasks-empty");
  s = load_tasks(dir.string());
  EXPECT_EQ(s.errors.at(0), dir.string() + ": no *.json task files in the folder");
}

// ---- placeholders ----

TEST(TaskPlaceholders, SubstitutedAcrossTheWholeTask) {
  task t = load_one(k_shopping_html_task);
  t.intent = "Open __SHOPPING__ and compare with __REDDIT__";
  t.kvarena = R"({"oracle":["goto [__SHOPPING__/wishlist]"]})";
  t.extra["comments"] = "\"see __SHOPPING__\"";
  std::vector<std::string> left = substitute_placeholders(
      t, {{"shopping", "http://127.0.0.1:7770/"}, {"reddit", "http://127.0.0.1:9999"}});
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(t.start_url, "http://127.0.0.1:7770 |AND| http://127.0.0.1:7770/checkout/cart");
  EXPECT_EQ(t.intent, "Open http://127.0.0.1:7770 and compare with http://127.0.0.1:9999");
  EXPECT_EQ(t.eval.reference_url.value(),
            "http://127.0.0.1:7770/wishlist/ |OR| http://127.0.0.1:7770/wishlist/index/index/");
  EXPECT_EQ((*t.eval.program_html)[0].url, "http://127.0.0.1:7770/wishlist/");
  EXPECT_EQ(t.kvarena, R"({"oracle":["goto [http://127.0.0.1:7770/wishlist]"]})");
  EXPECT_EQ(t.extra.at("comments"), "\"see http://127.0.0.1:7770\"");
  // The result still loads (and validates) after a round trip.
  EXPECT_EQ(load_one(task_to_json(t)), t);
}

TEST(TaskPlaceholders, LocatorsAnswersAndImagesToo) {
  task t = load_one(minimal_with(R"("image": ["__HOMEPAGE__/a.png"],)",
                                 R"({"eval_types": ["program_html", "string_match"],
                                     "reference_answers": {"must_include": ["__CLASSIFIEDS__/item/3"]},
                                     "program_html": [{"url": "last",
                                       "locator": "document.querySelector('a[href=\"__CLASSIFIEDS__/x\"]').outerText",
                                       "required_contents": {"exact_match": "__CLASSIFIEDS__"}}]})"));
  auto left = substitute_placeholders(t, {{"classifieds", "http://127.0.0.1:9980"},
                                          {"homepage", "http://127.0.0.1:4399"},
                                          {"shopping", "http://127.0.0.1:7770"}});
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(t.image.at(0), "http://127.0.0.1:4399/a.png");
  EXPECT_EQ(t.eval.reference_answers->must_include->at(0), "http://127.0.0.1:9980/item/3");
  EXPECT_EQ((*t.eval.program_html)[0].locator,
            "document.querySelector('a[href=\"http://127.0.0.1:9980/x\"]').outerText");
  EXPECT_EQ((*t.eval.program_html)[0].required_contents.exact_match.value(), "http://127.0.0.1:9980");
}

TEST(TaskPlaceholders, UnresolvedAreReported) {
  task t = load_one(k_reddit_url_task);
  auto left = substitute_placeholders(t, {{"shopping", "http://127.0.0.1:7770"}});
  EXPECT_EQ(left, (std::vector<std::string>{"__REDDIT__", "__HOMEPAGE__"}));
  EXPECT_EQ(t.start_url, "__REDDIT__/f/food");
}

TEST(TaskPlaceholders, RawJsonFieldsAreEscaped) {
  task t = load_one(minimal_with(R"("kvarena": {"u": "__SHOPPING__"},)"));
  substitute_placeholders(t, {{"__SHOPPING__", "http://h/\"q\"\\"}});
  EXPECT_EQ(t.kvarena, R"({"u":"http://h/\"q\"\\"})");
  EXPECT_EQ(t.start_url, "http://h/\"q\"\\");
  EXPECT_TRUE(parse_tasks(task_to_json(t), "t").tasks.size() == 1);
}

TEST(TaskPlaceholders, FindPlaceholders) {
  EXPECT_EQ(find_placeholders("__SHOPPING_ADMIN__/x __SHOPPING__ __SHOPPING__"),
            (std::vector<std::string>{"__SHOPPING_ADMIN__", "__SHOPPING__"}));
  EXPECT_TRUE(find_placeholders("func:reddit_get_post_url('__last_url__') __page__ ____ __").empty());
  EXPECT_EQ(find_placeholders("___X__"), std::vector<std::string>{"__X__"});
  EXPECT_EQ(find_placeholders("__A1__B__"), std::vector<std::string>{"__A1__"});
}

// ---- validation messages ----

TEST(TaskValidation, UnknownEvalTypeNamesFileFieldAndValidTypes) {
  auto e = errors_of(minimal_with("", R"({"eval_types": ["string_match", "foo"], "reference_answers": {"exact_match": "x"}})"));
  ASSERT_EQ(e.size(), 1u) << all(e);
  EXPECT_EQ(e[0], "tasks/x/12.json: eval.eval_types[1]: unknown type 'foo' (valid: string_match, url_match, "
                  "program_html, page_image_query)");
}

TEST(TaskValidation, MissingRequiredFields) {
  auto e = errors_of(R"({"sites": ["shopping"]})");
  for (const char* f : {"task_id", "start_url", "intent", "eval"})
    EXPECT_TRUE(has_error(e, std::string("tasks/x/12.json: ") + f + ": missing required field")) << f << "\n" << all(e);
  e = errors_of(minimal_with("", R"({"reference_answers": {"exact_match": "x"}})"));
  EXPECT_TRUE(has_error(e, "tasks/x/12.json: eval.eval_types: missing required field")) << all(e);
  e = errors_of(R"({"task_id": null, "sites": ["shopping"], "start_url": "x", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})");
  EXPECT_TRUE(has_error(e, "task_id: required field is null")) << all(e);
}

TEST(TaskValidation, WrongTypes) {
  EXPECT_TRUE(has_error(errors_of(R"({"task_id": "12", "sites": ["shopping"], "start_url": "x", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})"),
                        "task_id: expected an integer, got string"));
  EXPECT_TRUE(has_error(errors_of(R"({"task_id": 1.5, "sites": ["shopping"], "start_url": "x", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})"),
                        "task_id: expected an integer, got 1.5"));
  EXPECT_TRUE(has_error(errors_of(minimal_with(R"("require_login": "yes",)")), "require_login: expected true or false, got string"));
  EXPECT_TRUE(has_error(errors_of(minimal_with(R"("image": 3,)")), "image: expected null, a path or a list of paths, got number"));
  EXPECT_TRUE(has_error(errors_of(minimal_with(R"("instantiation_dict": [],)")), "instantiation_dict: expected an object, got array"));
  EXPECT_TRUE(has_error(errors_of(minimal_with(R"("kvarena": "plan",)")), "kvarena: expected an object, got string"));
  EXPECT_TRUE(has_error(errors_of(minimal_with(R"("viewport_size": {"width": 1280, "depth": 3},)")),
                        "viewport_size: unknown key 'depth' (expected width, height)"));
  EXPECT_TRUE(has_error(errors_of(minimal_with("", R"({"eval_types": "string_match"})")),
                        "eval.eval_types: expected a list of strings, got string"));
  EXPECT_TRUE(has_error(errors_of(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"must_include": "11"}})")),
                        "eval.reference_answers.must_include: expected a list of strings, got string"));
  EXPECT_TRUE(has_error(errors_of(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"must_include": ["a", {}]}})")),
                        "eval.reference_answers.must_include[1]: expected a string, got object"));
  EXPECT_TRUE(has_error(errors_of(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": 3}})")),
                        "eval.reference_answers.fuzzy_match: expected a list of strings or \"N/A\", got number"));
  EXPECT_TRUE(has_error(errors_of(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": []})")),
                        "eval.reference_answers: expected an object or null, got array"));
  EXPECT_TRUE(has_error(errors_of(minimal_with("", R"({"eval_types": ["program_html"], "program_html": {}})")),
                        "eval.program_html: expected a list, got object"));
  EXPECT_TRUE(has_error(errors_of(minimal_with("", R"("string_match")")), "eval: expected an object, got string"));
}

TEST(TaskValidation, TopLevelAndJsonErrors) {
  auto e = errors_of("42");
  EXPECT_EQ(e.at(0), "tasks/x/12.json: expected a task object, got number");
  e = errors_of("{\n  \"task_id\": 1,\n  \"sites\": [\"shopping\"\n}");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_TRUE(contains(e[0], "tasks/x/12.json: invalid JSON (line 4, column 1)")) << e[0];
  e = errors_of("");
  EXPECT_TRUE(contains(e.at(0), "invalid JSON")) << e[0];
  e = errors_of(std::string(10000, '['));
  EXPECT_TRUE(contains(e.at(0), "nested deeper than 64 levels")) << e[0];
  e = errors_of("{\"task_id\": 220e0000000009951084}");  // found by fuzz-task-load
  EXPECT_TRUE(contains(e.at(0), "tasks/x/12.json: invalid JSON: number overflow")) << e[0];
  e = errors_of("{\"intent\": \"\xff\"}");
  EXPECT_TRUE(contains(e.at(0), "invalid JSON")) << e[0];
  e = errors_of("[1, " + minimal_with("") + "]", "a.raw.json");
  EXPECT_EQ(e.at(0), "a.raw.json[0]: expected a task object, got number");
}

TEST(TaskValidation, ValueChecks) {
  auto check = [](const std::string& json, const std::string& expected) {
    auto e = errors_of(json);
    EXPECT_TRUE(has_error(e, expected)) << "expected: " << expected << "\ngot:\n" << all(e);
  };
  check(R"({"task_id": -1, "sites": ["shopping"], "start_url": "x", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})",
        "task_id: must be >= 0, is -1");
  check(R"({"task_id": 12, "sites": [], "start_url": "x", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})",
        "sites: empty");
  check(R"({"task_id": 12, "sites": ["shopping", "amazon"], "start_url": "x", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})",
        "tasks/x/12.json: sites[1]: unknown site 'amazon' (valid: classifieds, shopping, reddit, wikipedia, gitlab, shopping_admin, map)");
  check(R"({"task_id": 12, "sites": ["shopping"], "start_url": " ", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})",
        "start_url: empty");
  check(R"({"task_id": 12, "sites": ["shopping"], "start_url": "__SHOPPING__ |AND| ", "intent": "y", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})",
        "start_url: an empty tab URL");
  check(R"({"task_id": 12, "sites": ["shopping"], "start_url": "x", "intent": "", "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "x"}}})",
        "intent: empty");
  check(minimal_with(R"("viewport_size": {"width": 0, "height": 10},)"), "viewport_size: width and height must be > 0");
  check(minimal_with("", R"({"eval_types": []})"), "eval.eval_types: empty");
  check(minimal_with("", R"({"eval_types": ["string_match", "string_match"], "reference_answers": {"exact_match": "x"}})"),
        "eval.eval_types[1]: 'string_match' is listed twice");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": null})"),
        "eval.reference_answers: string_match needs reference answers (it is null or missing)");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {}})"),
        "eval.reference_answers: no reference answer (give exact_match");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"must_include": ["a", ""]}})"),
        "eval.reference_answers.must_include[1]: empty reference (it would match any answer)");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"must_include": ["a |OR| "]}})"),
        "eval.reference_answers.must_include[0]: empty reference");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"one_of": []}})"),
        "eval.reference_answers.one_of: empty list");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"required_values": ["< 700", "about 3"]}})"),
        "eval.reference_answers.required_values[1]: 'about 3' is not a condition like '< 700', '>= 3' or '== 0'");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "blue"}})"),
        "eval.reference_answers.fuzzy_match: a string must be \"N/A\"");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": []}})"),
        "eval.reference_answers.fuzzy_match: empty list");
  check(minimal_with("", R"({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}})"),
        "eval.string_note: fuzzy_match \"N/A\" needs the reason the task is infeasible in string_note");
  check(minimal_with("", R"({"eval_types": ["url_match"], "reference_url": ""})"),
        "eval.reference_url: url_match needs a reference URL");
  check(minimal_with("", R"({"eval_types": ["url_match"], "reference_url": "__SHOPPING__ |OR| "})"),
        "eval.reference_url: an empty alternative");
  check(minimal_with("", R"({"eval_types": ["url_match"], "reference_url": "__SHOPPING__", "url_note": "FUZZY"})"),
        "eval.url_note: unknown rule 'FUZZY' (valid: EXACT, GOLD in PRED)");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": []})"),
        "eval.program_html: program_html needs at least one target {url, locator, required_contents}");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": [{"url": "last", "required_contents": {"exact_match": "x"}}]})"),
        "eval.program_html[0].locator: missing required field");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": [3]})"),
        "eval.program_html[0]: expected an object {url, locator, required_contents}, got number");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": [{"url": "", "locator": "", "required_contents": {"exact_match": "x"}}]})"),
        "eval.program_html[0].url: empty (use \"last\" for the page the episode ended on)");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": [{"url": "func:f(", "locator": "", "required_contents": {"exact_match": "x"}}]})"),
        "eval.program_html[0].url: func:f(: missing ')'");
  check(minimal_with("", R"j({"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "$('.x').text()", "required_contents": {"exact_match": "x"}}]})j"),
        "eval.program_html[0].locator: unknown locator '$('.x').text()'");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "", "required_contents": {"one_of": ["x"]}}]})"),
        "eval.program_html[0].required_contents: none of exact_match, must_include, must_exclude, required_values, fuzzy_match");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "", "required_contents": {"fuzzy_match": " "}}]})"),
        "eval.program_html[0].required_contents.fuzzy_match: empty reference");
  check(minimal_with(R"("storage_state": "__AUTH__/state.json",)"),
        "tasks/x/12.json: storage_state: unknown placeholder __AUTH__ (valid: __CLASSIFIEDS__, __SHOPPING__, __REDDIT__, "
        "__WIKIPEDIA__, __HOMEPAGE__, __GITLAB__, __SHOPPING_ADMIN__, __MAP__)");
  check(minimal_with("", R"({"eval_types": ["program_html"], "program_html": [{"url": "__SHOP__/x", "locator": "", "required_contents": {"exact_match": "x"}}]})"),
        "eval.program_html[0].url: unknown placeholder __SHOP__");
}

TEST(TaskValidation, EveryProblemIsReportedNotOnlyTheFirst) {
  auto e = errors_of(minimal_with(R"("intent": "", "sites": ["amazon"],)",
                                  R"({"eval_types": ["foo", "url_match"], "url_note": "X"})"));
  EXPECT_GE(e.size(), 4u) << all(e);
}

TEST(TaskValidation, ValidateTaskDirectly) {
  task t = load_one(k_reddit_url_task);
  EXPECT_TRUE(validate_task(t, "x").empty());
  t.eval.eval_types.push_back("page_image_query");
  EXPECT_TRUE(validate_task(t, "x").empty());  // loads; the evaluator reports it unsupported
  t.intent.clear();
  EXPECT_EQ(validate_task(t, "x"), std::vector<std::string>{"x: intent: empty"});
}

// What VisualWebArena tolerates loads, with a warning: a viewport without a side gets VWA's
// default (1280 x 720; VWA classifieds task 14 has {"width": 1280}), a difficulty no script
// reads ("mediun", VWA classifieds 161) is kept as given.
TEST(TaskValidation, VwaToleratedFieldsLoadWithWarnings) {
  task_suite s = parse_tasks(minimal_with(R"("viewport_size": {"width": 1280}, "visual_difficulty": "mediun",)"),
                             "v.raw.json[14]");
  ASSERT_TRUE(s.ok()) << all(s.errors);
  ASSERT_EQ(s.tasks.size(), 1u);
  EXPECT_EQ(s.tasks[0].viewport_size->width, 1280);
  EXPECT_EQ(s.tasks[0].viewport_size->height, 720);
  EXPECT_EQ(s.tasks[0].visual_difficulty.value(), "mediun");
  ASSERT_EQ(s.warnings.size(), 2u) << all(s.warnings);
  EXPECT_EQ(s.warnings[0], "v.raw.json[14]: viewport_size.height: missing: 720 (VisualWebArena's default)");
  EXPECT_TRUE(has_error(s.warnings, "v.raw.json[14]: visual_difficulty: unknown difficulty 'mediun'")) << all(s.warnings);
  // A viewport that is not an object, or a side <= 0, still refuses the task.
  EXPECT_TRUE(has_error(errors_of(minimal_with(R"("viewport_size": {"height": 0},)")),
                        "viewport_size: width and height must be > 0"));
}
