// test-cli-bench.cpp: the KV-policy command line end to end, through the built kvarena
// binary (KVARENA_BIN): bad policy input fails fast with a message naming the valid choices
// or range (exit 2 for an option the policy does not take); `generate --policy` reports its "kv" object; each policy bench (ppl, niah,
// memory, latency, confidence-kl) runs on a tiny random model and prints the contract's
// JSON shape with sane values; --db rows are readable with the SQLite C API.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench-common.h"
#include "test-util.h"

namespace {

using json = nlohmann::json;

struct run_result {
  int rc = -1;
  std::string out, err;
};

class CliBench : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(kvarena::test::temp_dir("cli-bench").string());
    model_ = new std::string(*dir_ + "/tiny.gguf");
    // dim 64 / 4 heads: head_dim 16, too small for --kv-int8 (blocks of 32).
    const run_result r = run("model random --arch llama --dim 64 --layers 2 --heads 4 --kv-heads 4 --ffn 128 "
                             "--vocab 512 --ctx 1024 --type f32 --seed 3 --output-scale 3 --out " + *model_);
    ASSERT_EQ(r.rc, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete model_;
  }

  // Runs `kvarena ARGS`, stdout and stderr captured apart.
  static run_result run(const std::string& args) {
    static int n = 0;
    const std::string base = *dir_ + "/run" + std::to_string(n++);
    const std::string cmd = std::string(KVARENA_BIN) + " " + args + " >" + base + ".out 2>" + base + ".err";
    run_result r;
    const int st = std::system(cmd.c_str());
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = kvarena::test::read_file(base + ".out");
    r.err = kvarena::test::read_file(base + ".err");
    return r;
  }
  // A bench that must succeed; its stdout parsed, with the contract's top-level shape checked.
  static json bench(const std::string& name, const std::string& args) {
    const run_result r = run("bench " + name + " --model " + *model_ + " -t 1 " + args);
    EXPECT_EQ(r.rc, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "stdout is not one JSON object: " << r.out;
    if (j.is_discarded()) return json::object();
    EXPECT_EQ(j["bench"], name);
    EXPECT_EQ(j["model"], *model_);
    EXPECT_TRUE(j["config"].is_object());
    EXPECT_TRUE(j["results"].is_array());
    for (const auto& res : j["results"]) {
      EXPECT_TRUE(res["policy"].is_string());
      EXPECT_TRUE(res["options"].is_object());
    }
    return j;
  }
  static const json* find(const json& results, const std::string& policy) {
    for (const auto& r : results)
      if (r["policy"] == policy) return &r;
    ADD_FAILURE() << "no result for " << policy;
    return nullptr;
  }

  static const char* policies() {
    return "--policies full,window:window=32,confkv:n-high=16:n-low=48:protect=8,"
           "freekv:budget=96:sinks=32:window=32:page=32";
  }

  static std::string* dir_;
  static std::string* model_;
};
std::string* CliBench::dir_ = nullptr;
std::string* CliBench::model_ = nullptr;

TEST_F(CliBench, UnknownPolicyListsTheValidOnesBeforeLoading) {
  // The model does not exist: the policy error must come first (validated before loading).
  const run_result r = run("bench memory --model /nonexistent.gguf --policies full,wndow");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("unknown policy 'wndow'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("full, window, h2o, confkv, confkv-l, freekv"), std::string::npos) << r.err;
  const run_result g = run("generate --model /nonexistent.gguf --prompt hi --policy h20");
  EXPECT_EQ(g.rc, 1);
  EXPECT_NE(g.err.find("unknown policy 'h20'"), std::string::npos) << g.err;
}

TEST_F(CliBench, UnknownKeyListsThePolicysKeys) {
  const run_result r = run("bench memory --model /nonexistent.gguf --policies window:budget=64");
  EXPECT_EQ(r.rc, 2);  // an option the policy does not take: a bad combination
  EXPECT_NE(r.err.find("unknown option 'budget' for window (valid: window, sinks)"), std::string::npos) << r.err;
  const run_result v = run("bench memory --model /nonexistent.gguf --policies confkv:kv-int8=yes");
  EXPECT_EQ(v.rc, 1);
  EXPECT_NE(v.err.find("kv-int8=yes must be 0 or 1"), std::string::npos) << v.err;
}

// An option no listed policy takes is refused (exit 2, one line naming the option and the
// policy) by every policy bench and generate, before the model loads; an option some
// listed policies take applies to those only.
TEST_F(CliBench, OptionNoListedPolicyTakesIsExit2) {
  struct bad_case {
    std::string args, message;
  };
  const std::string m = " --model /nonexistent.gguf ";
  const std::vector<bad_case> cases = {
      {"bench ppl --text /nonexistent.txt" + m + "--policies window --kv-int8",
       "kvarena: error: --kv-int8: policy 'window' has no such option (its options: window, sinks)\n"},
      {"bench niah" + m + "--policies full,h2o,freekv --kv-int8",
       "kvarena: error: --kv-int8: none of the policies 'full', 'h2o', 'freekv' has such an option "
       "(it is an option of confkv, confkv-l)\n"},
      {"bench memory" + m + "--policies h2o --page 64",
       "--page: policy 'h2o' has no such option (its options: heavy, recent)"},
      {"bench latency" + m + "--policies confkv --window 64",
       "--window: policy 'confkv' has no such option (its options: tau, n-high, n-low, protect, ema-decay, beta, "
       "kv-int8, int8-window, random-rank, rank-seed)"},
      {"bench confidence-kl" + m + "--policies freekv,window --n-high 8",
       "--n-high: none of the policies 'freekv', 'window' has such an option (it is an option of confkv, confkv-l)"},
      {"bench memory" + m + "--policies window:kv-int8=1",
       "policy 'window:kv-int8=1': unknown option 'kv-int8' for window (valid: window, sinks)"},
      {"generate --prompt hi" + m + "--policy window --kv-int8",
       "--kv-int8: policy 'window' has no such option (its options: window, sinks)"},
      {"generate --prompt hi" + m + "--policy full --no-overlap", "--no-overlap: policy 'full' has no such option"},
      {"generate --prompt hi" + m + "--budget 64",
       "--budget: no --policy given, and the plain cache has no such option (it is an option of freekv)"},
  };
  for (const bad_case& c : cases) {
    SCOPED_TRACE(c.args);
    const run_result r = run(c.args);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  // Taken by one of the listed policies: applied to it, the others run with their own.
  const json j = bench("memory", "--policies full,window --window 16 --n-prompt 8 --n-gen 4");
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["options"], json::object());
  EXPECT_EQ(j["results"][1]["options"], json({{"window", 16}, {"sinks", 0}}));
}

TEST_F(CliBench, FreekvTauOutOfRangeNamesTheRange) {
  const run_result r = run("bench memory --model /nonexistent.gguf --policies freekv --tau 2");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("tau must be in [-1,1] (got 2)"), std::string::npos) << r.err;
}

TEST_F(CliBench, Int8NeedsHeadDimMultipleOf32) {
  const run_result r = run("bench memory --model " + *model_ + " --policies confkv:kv-int8=1 --n-gen 4");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("multiple of 32"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("head_dim=16"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CliBench, BudgetBelowProtectIsRefused) {
  const run_result r = run("bench memory --model /nonexistent.gguf --policies confkv:n-high=16 --protect 64");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("smaller than the protected window"), std::string::npos) << r.err;
}

TEST_F(CliBench, GenerateReportsTheKvObject) {
  const run_result r = run("generate --model " + *model_ + " --prompt 'the old boat' -n 24 --json " +
                           "--policy window:window=8:sinks=2");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  const json& kv = j["kv"];
  EXPECT_EQ(kv["policy"], "window");
  EXPECT_EQ(kv["options"], json({{"window", 8}, {"sinks", 2}}));
  EXPECT_GT(kv["peak_kv_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(kv["peak_kv_host_bytes"], 0);
  EXPECT_EQ(kv["kept_tokens_final"].size(), 2u);
  for (const auto& k : kv["kept_tokens_final"]) EXPECT_LE(k.get<int64_t>(), 10);
  if (j["n_gen"].get<int64_t>() > 1) {
    EXPECT_GE(kv["steps"].get<int64_t>(), 1);
  }
}

TEST_F(CliBench, EffectiveOptionsResolveDefaults) {
  const json j = bench("memory", "--policies window,confkv,freekv:budget=96:sinks=32:window=32:page=32 "
                                 "--n-prompt 8 --n-gen 8 --trace-every 4");
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][0]["options"], json({{"window", 512}, {"sinks", 0}}));
  EXPECT_DOUBLE_EQ(j["results"][1]["options"]["tau"].get<double>(), 0.6);
  EXPECT_EQ(j["results"][1]["options"]["kv-int8"], 0);
  EXPECT_DOUBLE_EQ(j["results"][2]["options"]["tau"].get<double>(), 0.9);
  EXPECT_EQ(j["results"][2]["options"]["sinks"], 32);
}

TEST_F(CliBench, Ppl) {
  const std::string text = *dir_ + "/text.txt";
  std::ofstream(text) << "The old lighthouse stands near the bridge, and the sky is blue. A quiet river drifts "
                         "along the shore while the wind is calm, and the sky is golden. The village baker "
                         "waits at the edge of town before the rain begins, and the sky is grey.";
  const json j = bench("ppl", std::string(policies()) + " --text " + text);
  ASSERT_EQ(j["results"].size(), 4u);
  for (const auto& r : j["results"]) {
    const double ppl = r["ppl"].get<double>();
    EXPECT_TRUE(std::isfinite(ppl) && ppl > 1) << r.dump();
    EXPECT_GT(r["n_tokens"].get<int64_t>(), 10);
    EXPECT_NEAR(std::log(ppl), r["nll_mean"].get<double>(), 1e-6);
    EXPECT_GT(r["peak_kv_bytes"].get<int64_t>(), 0);
    EXPECT_GT(r["tok_s"].get<double>(), 0);
  }
  EXPECT_GT((*find(j["results"], "freekv"))["peak_kv_host_bytes"].get<int64_t>(), 0);
}

// --kv-budget in bytes: the tiny model's FP16 token is 512 bytes (see below), so 16KiB is a
// 32-token window, 16t a 16-token one; each result names the tokens it kept, full keeps all
// it saw (the scored tokens: the first is appended, the last is only predicted).
TEST_F(CliBench, PplByteBudgetStatesKeptTokens) {
  const std::string text = *dir_ + "/ppl-budget.txt";
  std::ofstream(text) << "The old lighthouse stands near the bridge, and the sky is blue. A quiet river drifts "
                         "along the shore while the wind is calm, and the sky is golden. The village baker "
                         "waits at the edge of town before the rain begins, and the sky is grey. A flock of "
                         "geese moves past the orchard as the season changes, and the sky is white.";
  const json j = bench("ppl", "--policies window,full --kv-budget 16KiB,16t --text " + text);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["config"]["kv_budget"], "16KiB,16t");
  const json &w_bytes = j["results"][0], &w_tok = j["results"][1], &full = j["results"][2];
  EXPECT_EQ(w_bytes["spec"], "window@16KiB");
  EXPECT_EQ(w_bytes["options"]["window"], 32);
  EXPECT_EQ(w_bytes["kept_tokens_max"], 32);
  EXPECT_EQ(w_bytes["kept_tokens_final"], 32);
  EXPECT_EQ(w_bytes["peak_kv_logical_bytes"], 16384);
  EXPECT_EQ(w_tok["spec"], "window@16t");
  EXPECT_EQ(w_tok["kept_tokens_max"], 16);
  EXPECT_EQ(w_tok["peak_kv_logical_bytes"], 8192);
  const int64_t n = full["n_tokens"].get<int64_t>();
  ASSERT_GT(n, 40);
  EXPECT_EQ(full["kept_tokens_max"], n);
  EXPECT_EQ(full["kept_tokens_final"], n);
  EXPECT_EQ(full["peak_kv_logical_bytes"], n * 512);
}

// 2 lengths x 3 depths = 6 cells, 3 needles each by default: 18 trials in the order
// length, depth, trial; the trials of a cell hide distinct codes, and accuracy counts all 18.
TEST_F(CliBench, Niah) {
  const json j = bench("niah", std::string(policies()) + " --lengths 96,160 --depths 0,0.5,1");
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["config"]["needles"], 3);
  for (const auto& r : j["results"]) {
    const double acc = r["accuracy"].get<double>();
    EXPECT_GE(acc, 0.0);
    EXPECT_LE(acc, 1.0);
    ASSERT_EQ(r["grid"].size(), 18u);
    EXPECT_EQ(r["n_trials"], 18);
    int correct = 0;
    for (size_t i = 0; i < 18; ++i) {
      const json& c = r["grid"][i];
      EXPECT_EQ(c["length"], i < 9 ? 96 : 160);
      const double depths[] = {0, 0.5, 1};
      EXPECT_DOUBLE_EQ(c["depth"].get<double>(), depths[(i / 3) % 3]);
      EXPECT_EQ(c["trial"], int64_t(i % 3));
      if (i % 3) {
        EXPECT_NE(c["code"], r["grid"][i - 1]["code"]) << "cell " << i / 3;
      }
      correct += c["correct"].get<bool>();
    }
    EXPECT_EQ(r["n_correct"], correct);
    EXPECT_DOUBLE_EQ(acc, correct / 18.0);
    EXPECT_GT(r["peak_kv_bytes"].get<int64_t>(), 0);
  }
  // The same trials every run and for every policy (codes depend on seed, length, depth, trial).
  EXPECT_EQ(j["results"][0]["grid"][5]["code"], j["results"][3]["grid"][5]["code"]);
  const run_result bad = run("bench niah --model " + *model_ + " --policies full --needles 0");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("--needles"), std::string::npos) << bad.err;
}

TEST_F(CliBench, MemoryWindowBelowFullAndDbRows) {
  const std::string db = *dir_ + "/bench.sqlite";
  const json j = bench("memory", std::string(policies()) + " --n-prompt 16 --n-gen 160 --trace-every 16 --db " + db);
  ASSERT_EQ(j["results"].size(), 4u);
  const json& full = *find(j["results"], "full");
  const json& window = *find(j["results"], "window");
  const json& confkv = *find(j["results"], "confkv");
  EXPECT_LT(window["peak_kv_bytes"].get<int64_t>(), full["peak_kv_bytes"].get<int64_t>());
  EXPECT_LE(window["kept_tokens_max"].get<int64_t>(), 32);
  EXPECT_EQ(full["kept_tokens_max"].get<int64_t>(), 176);
  EXPECT_LE(confkv["kept_tokens_max"].get<int64_t>(), 48 + 1);
  EXPECT_EQ(full["trace"].size(), 10u);
  EXPECT_TRUE(full["confident_fraction"].is_null());
  EXPECT_TRUE(confkv["confident_fraction"].is_number());
  const double cm = confkv["confidence_mean"].get<double>();
  EXPECT_GT(cm, 0.0);
  EXPECT_LT(cm, 1.0);
  EXPECT_GT((*find(j["results"], "freekv"))["peak_kv_host_bytes"].get<int64_t>(), 0);

  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT bench, model, policy, options_json, config_json, metrics_json, created_at "
                                  "FROM bench_results ORDER BY id", -1, &st, nullptr), SQLITE_OK);
  std::vector<std::string> pols;
  while (sqlite3_step(st) == SQLITE_ROW) {
    auto col = [&](int i) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i))); };
    EXPECT_EQ(col(0), "memory");
    EXPECT_EQ(col(1), *model_);
    pols.push_back(col(2));
    EXPECT_TRUE(json::parse(col(3)).is_object());
    EXPECT_EQ(json::parse(col(4))["n_gen"], 160);
    const json m = json::parse(col(5));
    EXPECT_TRUE(m.contains("peak_kv_bytes"));
    EXPECT_FALSE(m.contains("policy"));
    EXPECT_FALSE(col(6).empty());
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  EXPECT_EQ(pols, (std::vector<std::string>{"full", "window", "confkv", "freekv"}));
}

TEST_F(CliBench, LatencyOneEntryPerPolicyAndContext) {
  const json j = bench("latency", std::string(policies()) + " --contexts 64,128 --steps 4");
  ASSERT_EQ(j["results"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const json& r = j["results"][i];
    EXPECT_EQ(r["context"], i < 4 ? 64 : 128);
    EXPECT_GT(r["step_ms_median"].get<double>(), 0);
    EXPECT_LE(r["step_ms_p10"].get<double>(), r["step_ms_median"].get<double>());
    EXPECT_LE(r["step_ms_median"].get<double>(), r["step_ms_p90"].get<double>());
    EXPECT_GT(r["kv_device_bytes"].get<int64_t>(), 0);
    const double cr = r["correction_rate"].get<double>();
    EXPECT_TRUE(cr >= 0 && cr <= 1);
  }
  EXPECT_EQ(j["results"][3]["policy"], "freekv");
  EXPECT_GT(j["results"][7]["kv_host_bytes"].get<int64_t>(), 0);
}

// Pearson r and Spearman rho side by side, in stdout's JSON and in the --db rows; the
// defaults (span recent, KL full-ablated) named in the config.
TEST_F(CliBench, ConfidenceKl) {
  const std::string db = *dir_ + "/ckl.sqlite";
  const json j = bench("confidence-kl", "--policies full,window:window=16 --n-gen 48 --every 8 --ablate 16 --db " + db);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["config"]["ablate_span"], "recent");
  EXPECT_EQ(j["config"]["kl_direction"], "full-ablated");
  for (const auto& r : j["results"]) {
    EXPECT_GT(r["n_samples"].get<int64_t>(), 2);
    const double pr = r["pearson_r"].get<double>(), sr = r["spearman_r"].get<double>();
    EXPECT_TRUE(pr >= -1 && pr <= 1);
    EXPECT_TRUE(sr >= -1 && sr <= 1);
    EXPECT_NE(sr, 0.0) << "samples with distinct confidences and KLs: rho is not the degenerate 0";
    EXPECT_GE(r["kl_mean"].get<double>(), 0);
    EXPECT_EQ(r["samples"].size(), r["n_samples"].get<size_t>());
    std::vector<double> cs, kls;
    for (const auto& s : r["samples"]) {  // recent: [t - 16, t)
      EXPECT_EQ(s["ablated_to"], s["pos"]);
      EXPECT_EQ(s["ablated_from"].get<int64_t>(), s["pos"].get<int64_t>() - 16);
      cs.push_back(s["confidence"].get<double>());
      kls.push_back(s["kl"].get<double>());
    }
    // The reported coefficients are those of the listed pairs (the statistics themselves are
    // checked by hand in test-bench-stats).
    EXPECT_NEAR(pr, kvarena::stat_pearson(cs, kls), 1e-12);
    EXPECT_NEAR(sr, kvarena::stat_spearman(cs, kls), 1e-12);
  }
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT metrics_json FROM bench_results ORDER BY id", -1, &st, nullptr), SQLITE_OK);
  size_t i = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const json m = json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    ASSERT_LT(i, 2u);
    EXPECT_EQ(m["pearson_r"], j["results"][i]["pearson_r"]);
    EXPECT_EQ(m["spearman_r"], j["results"][i]["spearman_r"]);
    ++i;
  }
  EXPECT_EQ(i, 2u);
  sqlite3_finalize(st);
  sqlite3_close(h);
}

// --ablate-span distant and --kl-direction ablated-full on a teacher-forced text. Positions
// by hand (n_prompt 8, every 4, ablate 6): samples at t = 7 + s, s = 4, 8, ...; recent
// removes [t - 6, t) from t = 11 on; distant removes [2, 8) (2 = 8 / 4) once 8 <= t - 6,
// i.e. t >= 14: from t = 15 on. The reverse direction scores the same steps (same
// confidences) with other KLs.
TEST_F(CliBench, ConfidenceKlSpanAndDirection) {
  const std::string a = *dir_ + "/ckl-span.txt";
  std::ofstream(a) << "The old lighthouse stands near the bridge, and the sky is blue. A quiet river drifts "
                      "along the shore while the wind is calm, and the sky is golden.";
  const std::string flags = " --policies full --n-prompt 8 --n-gen 200 --every 4 --ablate 6 --text " + a;
  const json rec = bench("confidence-kl", flags);
  const json dist = bench("confidence-kl", flags + " --ablate-span distant");
  const json rev = bench("confidence-kl", flags + " --kl-direction ablated-full");
  EXPECT_EQ(dist["config"]["ablate_span"], "distant");
  EXPECT_EQ(dist["config"]["ablate_span_start"], 2);
  EXPECT_EQ(rev["config"]["kl_direction"], "ablated-full");
  const json &rs = rec["results"][0]["samples"], &ds = dist["results"][0]["samples"], &vs = rev["results"][0]["samples"];
  ASSERT_GE(rs.size(), 4u);
  EXPECT_EQ(rs[0]["pos"], 11);
  EXPECT_EQ(rs[0]["ablated_from"], 5);
  ASSERT_EQ(ds.size(), rs.size() - 1);  // t = 11 is too close for the distant span
  bool kl_differs = false;
  for (size_t i = 0; i < ds.size(); ++i) {
    EXPECT_EQ(ds[i]["pos"], rs[i + 1]["pos"]);
    EXPECT_EQ(ds[i]["ablated_from"], 2);
    EXPECT_EQ(ds[i]["ablated_to"], 8);
    EXPECT_EQ(ds[i]["confidence"], rs[i + 1]["confidence"]);  // the policy's session is the same
    kl_differs |= ds[i]["kl"] != rs[i + 1]["kl"];
  }
  EXPECT_TRUE(kl_differs) << "the distant span removed other tokens than the recent one";
  EXPECT_GT(dist["results"][0]["kl_mean"].get<double>(), 1e-6) << "removing the distant span changes P";
  ASSERT_EQ(vs.size(), rs.size());
  bool dir_differs = false;
  for (size_t i = 0; i < vs.size(); ++i) {
    EXPECT_EQ(vs[i]["pos"], rs[i]["pos"]);
    EXPECT_EQ(vs[i]["confidence"], rs[i]["confidence"]);
    EXPECT_GE(vs[i]["kl"].get<double>(), 0.0);
    dir_differs |= std::fabs(vs[i]["kl"].get<double>() - rs[i]["kl"].get<double>()) > 1e-9;
  }
  EXPECT_TRUE(dir_differs) << "KL is not symmetric: the reverse direction gives other values";
  const run_result bad = run("bench confidence-kl --model " + *model_ + " --policies full --ablate-span far");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("--ablate-span"), std::string::npos) << bad.err;
  const run_result bad_dir = run("bench confidence-kl --model " + *model_ + " --policies full --kl-direction up");
  EXPECT_NE(bad_dir.rc, 0);
  EXPECT_NE(bad_dir.err.find("--kl-direction"), std::string::npos) << bad_dir.err;
}

// --text: the text's tokens are teacher-forced. Steps by hand (n_prompt 8, every 4, ablate 4):
// step s appends token 8 + s - 1 at position t = 7 + s, sampled when s % 4 == 0; the text's
// N tokens end the run once all are in, so the samples sit at 11, 15, ... up to N - 1.
TEST_F(CliBench, ConfidenceKlTeacherForcesAText) {
  const std::string a = *dir_ + "/ckl-a.txt", b = *dir_ + "/ckl-b.txt", tiny = *dir_ + "/ckl-tiny.txt";
  std::ofstream(a) << "The old lighthouse stands near the bridge, and the sky is blue. A quiet river drifts.";
  std::ofstream(b) << "Seven green bottles hang on the wall of the station; nobody counts them any more.";
  std::ofstream(tiny) << "Hi.";
  const run_result tk = run("tokenize --model " + *model_ + " -f " + a);
  ASSERT_EQ(tk.rc, 0) << tk.err;
  const int64_t n = int64_t(json::parse(tk.out)["tokens"].size());
  ASSERT_GT(n, 20);
  const std::string flags = " --policies full --n-prompt 8 --n-gen 200 --every 4 --ablate 4 --text ";
  const json ja = bench("confidence-kl", flags + a), jb = bench("confidence-kl", flags + b);
  EXPECT_EQ(ja["config"]["text"], a);
  std::vector<int64_t> want, got;
  for (int64_t s = 4; 7 + s <= n - 1; s += 4) want.push_back(7 + s);
  for (const auto& smp : ja["results"][0]["samples"]) got.push_back(smp["pos"].get<int64_t>());
  EXPECT_EQ(got, want) << "text of " << n << " tokens";
  EXPECT_NE(ja["results"][0]["kl_mean"], jb["results"][0]["kl_mean"]);  // the text is what is scored
  const run_result short_text = run("bench confidence-kl --model " + *model_ + flags + tiny);
  EXPECT_EQ(short_text.rc, 1);
  EXPECT_NE(short_text.err.find("not more than --n-prompt 8"), std::string::npos) << short_text.err;
}

// The tiny model: 2 layers x 4 KV heads of 16, so an FP16 token is 2 * 16 * 2 = 64 bytes a
// head, 512 bytes over the 8 heads. Logical peaks by hand: window 64 = 32768 bytes whatever
// the prefill chunk; full after 300 + 8 tokens = 308 * 512 = 157696.
TEST_F(CliBench, MemoryLogicalPeakIsTheSameForEveryChunk) {
  for (const char* chunk : {"16", "64", "256"}) {
    const json j = bench("memory", std::string("--policies window:window=64,full --n-prompt 300 --n-gen 8 --chunk ") +
                                       chunk);
    EXPECT_EQ((*find(j["results"], "window"))["peak_kv_logical_bytes"], 32768) << "chunk " << chunk;
    EXPECT_EQ((*find(j["results"], "full"))["peak_kv_logical_bytes"], 157696) << "chunk " << chunk;
    EXPECT_GT((*find(j["results"], "full"))["peak_process_bytes"].get<int64_t>(), 157696);
    EXPECT_EQ(j["config"]["prefill_chunk"], std::stoi(chunk));
  }
}

// --kv-budget 64t,128t: one row per policy and budget, full once. window@64t = 32768 (as
// above); h2o@64t adds its 4-byte score per token: 64 * (64 + 4) * 8 = 34816.
// `kvarena report` on a file that holds only bench rows: the sweep's rows labelled by spec,
// ratios to full, in text, JSON and HTML; the ppl figures are the bench's own output.
TEST_F(CliBench, ReportShowsTheBenchRowsOfADbFile) {
  const std::string text = *dir_ + "/report-text.txt", db = *dir_ + "/report-bench.sqlite";
  std::ofstream(text) << "The old lighthouse stands near the bridge, and the sky is blue. A quiet river drifts "
                         "along the shore while the wind is calm, and the sky is golden.";
  const json j = bench("ppl", "--policies window,full --kv-budget 8t,16t --text " + text + " --db " + db);
  ASSERT_EQ(j["results"].size(), 3u);  // window@8t, window@16t, full
  const run_result r = run("report " + db);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("benchmarks only (no runs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("window@8t"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("window@16t"), std::string::npos) << r.out;
  const run_result js = run("report --json " + db);
  ASSERT_EQ(js.rc, 0) << js.err;
  const json rep = json::parse(js.out);
  ASSERT_EQ(rep["benchmarks"].size(), 1u);  // one invocation, one group
  const json& rows = rep["benchmarks"][0]["rows"];
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[i]["spec"], j["results"][i]["spec"]);
    EXPECT_EQ(rows[i]["metrics"]["ppl"], j["results"][i]["ppl"]);
  }
  const double full_kv = j["results"][2]["peak_kv_logical_bytes"].get<double>();
  EXPECT_DOUBLE_EQ(rows[0]["peak_kv_logical_vs_full"].get<double>(),
                   j["results"][0]["peak_kv_logical_bytes"].get<double>() / full_kv);
  const run_result h = run("report --html " + *dir_ + "/bench.html " + db);
  ASSERT_EQ(h.rc, 0) << h.err;
  const std::string page = kvarena::test::read_file(*dir_ + "/bench.html");
  EXPECT_NE(page.find("data-series=\"window\""), std::string::npos);
  EXPECT_NE(page.find("<td>window@16t</td>"), std::string::npos);
}

// A --db file that is not SQLite: the error comes before the model runs (no result lost).
TEST_F(CliBench, UnusableDbFailsBeforeTheRuns) {
  const std::string bad = *dir_ + "/not-a-db.sqlite";
  std::ofstream(bad) << "plain text, not an SQLite database\n";
  const run_result r = run("bench memory --model " + *model_ + " --policies full --n-prompt 16 --n-gen 8 --db " + bad);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("not-a-db.sqlite"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bench memory: full"), std::string::npos) << "ran before failing: " << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CliBench, KvBudgetSweepGivesOneRowPerBudgetAtEqualMemory) {
  const json j =
      bench("memory", "--policies window,h2o,full --kv-budget 64t,128t --n-prompt 300 --n-gen 8 --chunk 64");
  std::vector<std::string> specs;
  for (const auto& r : j["results"]) specs.push_back(r["spec"]);
  EXPECT_EQ(specs, (std::vector<std::string>{"window@64t", "window@128t", "h2o@64t", "h2o@128t", "full"}));
  EXPECT_EQ(j["results"][0]["peak_kv_logical_bytes"], 32768);
  EXPECT_EQ(j["results"][1]["peak_kv_logical_bytes"], 65536);
  EXPECT_EQ(j["results"][2]["peak_kv_logical_bytes"], 34816);
  EXPECT_EQ(j["results"][2]["options"]["heavy"], 32);
  EXPECT_EQ(j["config"]["kv_budget"], "64t,128t");
  // A size flag the budget would overwrite: exit 2, naming both.
  const run_result r = run("bench memory --model " + *model_ + " --policies window --window 100 --kv-budget 64t");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--window: --kv-budget sets window's window"), std::string::npos) << r.err;
  const run_result bad = run("bench memory --model " + *model_ + " --policies window --kv-budget 64q");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("unknown unit 'q'"), std::string::npos) << bad.err;
}

// --decode-distractor N: the prompt's last N tokens are decode steps, N per trial:
// 40 x 2 depths x 2 needles = 160.
TEST_F(CliBench, NiahDecodeDistractorRunsTheGate) {
  const json j = bench("niah", "--policies confkv:n-high=16:n-low=48:protect=8,window:window=32 --lengths 96 "
                               "--depths 0,1 --needles 2 --decode-distractor 40");
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["decode_steps"], 160) << r["spec"];
    EXPECT_EQ(r["grid"].size(), 4u);
  }
  const json& ck = *find(j["results"], "confkv");
  EXPECT_GT(ck["confident_steps"].get<int64_t>(), 0) << "output scale 3: some steps are confident";
  EXPECT_EQ((*find(j["results"], "window"))["confident_steps"], 0);
  EXPECT_EQ(j["config"]["decode_distractor"], 40);
}

}  // namespace
