// test-kv-registry.cpp: the KV-policy registry (engine/kv/kv-policy-registry.h): the
// built-in table (names, options, defaults, ranges, INT8, confidence option), the one
// placeholder resolution, values from text, the effective options, refused registrations;
// and a test-only policy added with ONE call (register_kv_policy below), nothing else
// changed for it: "every-other" keeps the tokens at even positions (every stride-th), the
// newest `budget` of them. It runs through a session's generate and, in this process,
// through `kvarena bench memory`: the subcommand's code (cli/cmd-bench*.cpp,
// policy-flags.cpp) is compiled into this test, because the kvarena binary is another
// process and cannot see a policy registered here (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli-commands.h"
#include "engine-error.h"
#include "kv/kv-policy-registry.h"
#include "model-random.h"
#include "model.h"
#include "sampler.h"
#include "session.h"
#include "test-util.h"
#include "tokenizer.h"

namespace kvarena {
namespace {

// --- the test-only policy: one class and its describe function, as a policy file has ---

class kv_policy_every_other final : public kv_policy {
 public:
  explicit kv_policy_every_other(const kv_policy_options& o)
      : budget_(o.budget), stride_(int64_t(o.extra.at("stride"))) {}  // resolved: the extra is there
  const char* name() const override { return "every-other"; }
  kv_policy_needs needs() const override { return {}; }
  int64_t budget(int64_t, int64_t) const override { return budget_; }
  keep_decision select(int64_t, const kv_layer_meta& meta) override {
    keep_decision d;
    d.keep_all = false;
    d.keep.resize(meta.heads.size());
    for (size_t g = 0; g < meta.heads.size(); ++g) {
      const kv_head_meta& h = meta.heads[g];
      std::vector<int32_t>& keep = d.keep[g];
      for (int64_t i = 0; i < h.n; ++i)
        if (h.pos[i] % stride_ == 0) keep.push_back(int32_t(i));
      if (int64_t(keep.size()) > budget_) keep.erase(keep.begin(), keep.end() - budget_);  // the newest
    }
    return d;
  }

 private:
  int64_t budget_, stride_;
};

kv_policy_desc describe_every_other() {
  kv_policy_desc d;
  d.summary = "the tokens at positions that are multiples of stride, the newest budget of them";
  d.options = {
      int_option("budget", &kv_policy_options::budget, "tokens kept per layer and KV head").at_least(1, "tokens"),
      extra_option("stride", kv_option_type::integer, 2, "keep the positions that are multiples of it").at_least(1),
  };
  d.make = [](const kv_policy_options& o) { return std::make_unique<kv_policy_every_other>(o); };
  return d;
}

// The one call that adds it (before main: every test, and the CLI built in a test, sees it).
const bool every_other_registered = (register_kv_policy("every-other", &describe_every_other), true);

// --- helpers ---

kv_policy_options shape(int64_t layers = 2, int64_t heads = 4, int64_t kv = 2, int64_t d = 32) {
  kv_policy_options o;
  o.n_layers = layers, o.n_heads = heads, o.n_kv_heads = kv, o.head_dim = d;
  return o;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> options_of(const std::string& policy) {
  std::vector<std::string> out;
  for (const kv_option& o : kv_policy_described(policy).options) out.push_back(o.name);
  return out;
}

double default_of(const std::string& policy, const std::string& option) {
  const kv_option* o = kv_policy_described(policy).option(option);
  EXPECT_NE(o, nullptr) << policy << " " << option;
  return o ? o->default_value() : NAN;
}

// --- the built-in table ---

TEST(KvRegistry, BuiltinsInOrderWithTheirOptions) {
  ASSERT_TRUE(every_other_registered);
  const std::vector<std::string> names = kv_policy_names();
  ASSERT_GE(names.size(), 7u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 6),
            (std::vector<std::string>{"full", "window", "h2o", "confkv", "confkv-l", "freekv"}));
  EXPECT_EQ(names.back(), "every-other");  // registered after the built-ins
  using v = std::vector<std::string>;
  EXPECT_EQ(options_of("full"), v{});
  EXPECT_EQ(options_of("window"), (v{"window", "sinks"}));
  EXPECT_EQ(options_of("h2o"), (v{"heavy", "recent"}));
  const v confkv = {"tau",     "n-high",      "n-low",       "protect",  "ema-decay",
                    "beta",    "kv-int8",     "int8-window", "random-rank", "rank-seed"};
  EXPECT_EQ(options_of("confkv"), confkv);
  EXPECT_EQ(options_of("confkv-l"), confkv);
  EXPECT_EQ(options_of("freekv"), (v{"budget", "sinks", "window", "page", "tau", "dense-layer0", "no-overlap"}));
  for (const std::string& n : names) {
    SCOPED_TRACE(n);
    EXPECT_EQ(kv_policy_supports_int8(n), n == "confkv" || n == "confkv-l");
    EXPECT_EQ(kv_policy_described(n).confidence_option, n == "confkv" || n == "confkv-l" ? "tau" : "");
    EXPECT_STREQ(make_kv_policy(n, shape())->name(), n.c_str());  // the factory builds what the line names
  }
  EXPECT_FALSE(kv_policy_supports_int8(""));
  EXPECT_EQ(find_kv_policy("nope"), nullptr);
}

TEST(KvRegistry, EachPolicyOptionHasItsFixedDefault) {
  EXPECT_EQ(default_of("window", "window"), 512);
  EXPECT_EQ(default_of("window", "sinks"), 0);
  EXPECT_EQ(default_of("freekv", "sinks"), 512);
  EXPECT_EQ(default_of("freekv", "window"), 512);
  EXPECT_EQ(default_of("h2o", "heavy"), 0);
  EXPECT_EQ(default_of("h2o", "recent"), 0);
  EXPECT_EQ(float(default_of("confkv", "tau")), 0.6f);
  EXPECT_EQ(float(default_of("confkv-l", "tau")), 0.6f);
  EXPECT_EQ(float(default_of("freekv", "tau")), 0.9f);
  EXPECT_EQ(default_of("confkv", "n-high"), 256);
  EXPECT_EQ(default_of("confkv", "n-low"), 1024);
  EXPECT_EQ(default_of("confkv", "protect"), 64);
  EXPECT_EQ(float(default_of("confkv", "ema-decay")), 0.9f);
  EXPECT_EQ(float(default_of("confkv", "beta")), 0.1f);
  EXPECT_EQ(default_of("confkv", "kv-int8"), 0);
  EXPECT_EQ(default_of("confkv", "int8-window"), 128);
  EXPECT_EQ(default_of("freekv", "budget"), 2048);
  EXPECT_EQ(default_of("freekv", "page"), 32);
  EXPECT_EQ(default_of("freekv", "dense-layer0"), 0);
  EXPECT_EQ(default_of("freekv", "no-overlap"), 0);
  EXPECT_EQ(default_of("every-other", "stride"), 2);
}

TEST(KvRegistry, OnePlaceResolvesThePlaceholders) {
  EXPECT_EQ(resolve_kv_options("confkv", {}).tau, 0.6f);
  EXPECT_EQ(resolve_kv_options("confkv-l", {}).tau, 0.6f);
  EXPECT_EQ(resolve_kv_options("freekv", {}).tau, 0.9f);
  EXPECT_EQ(resolve_kv_options("freekv", {}).sinks, 512);
  EXPECT_EQ(resolve_kv_options("window", {}).sinks, 0);
  kv_policy_options o;
  o.tau = 0.25f, o.sinks = 0;  // given: kept (0 is not the placeholder)
  EXPECT_EQ(resolve_kv_options("confkv", o).tau, 0.25f);
  EXPECT_EQ(resolve_kv_options("freekv", o).sinks, 0);
  EXPECT_EQ(resolve_kv_options("every-other", {}).extra.at("stride"), 2);  // extras written out
  EXPECT_NE(error_of([] { resolve_kv_options("wndow", {}); }).find("unknown policy 'wndow'"), std::string::npos);
}

TEST(KvRegistry, RangesNameTheOptionAndTheRange) {
  auto make = [](const std::string& name, kv_policy_options o) { return error_of([&] { make_kv_policy(name, o); }); };
  kv_policy_options o = shape();
  o.page = 0;
  EXPECT_EQ(make("freekv", o), "kv policy 'freekv': page must be >= 1 token (got 0)");
  o = shape();
  o.ema_decay = 1.f;
  EXPECT_EQ(make("confkv", o), "kv policy 'confkv': ema_decay must be in [0,1) (got 1)");
  o = shape();
  o.beta = -1.f;
  EXPECT_EQ(make("confkv-l", o), "kv policy 'confkv-l': beta must be >= 0 (got -1)");
  o = shape();
  o.sinks = -2;
  EXPECT_EQ(make("window", o), "kv policy 'window': sinks must be >= 0 tokens (got -2)");
  o = shape();
  o.int8_window = -1;  // means nothing without kv-int8: not checked
  EXPECT_EQ(make("confkv", o), "");
  o.int8 = true;
  EXPECT_EQ(make("confkv", o), "kv policy 'confkv': int8_window must be >= 0 tokens (got -1)");
  EXPECT_EQ(kv_policy_described("confkv").option("tau")->range_text(), "in [0,1]");
  EXPECT_EQ(kv_policy_described("confkv").option("ema-decay")->range_text(), "in [0,1)");
  EXPECT_EQ(kv_policy_described("window").option("window")->range_text(), ">= 1");
  EXPECT_EQ(kv_policy_described("confkv").option("n-high")->range_text(), "");
}

TEST(KvRegistry, EffectiveOptionsAndText) {
  kv_policy_spec p;
  p.name = "confkv";
  auto keys = [](const kv_policy_spec& s) {
    std::vector<std::string> out;
    for (const kv_option_value& v : kv_effective_options(s)) out.push_back(v.key);
    return out;
  };
  EXPECT_EQ(keys(p), (std::vector<std::string>{"tau", "n-high", "n-low", "protect", "ema-decay", "beta", "kv-int8"}));
  const kv_policy_desc& d = kv_policy_described("confkv");
  set_kv_option_text(p, *d.option("kv-int8"), "here", "1");
  EXPECT_EQ(keys(p).back(), "int8-window");  // reported once kv-int8 is on
  kv_policy_spec r = p;
  set_kv_option_text(r, *d.option("random-rank"), "here", "1");  // the ablation: reported with its seed
  const std::vector<std::string> with_ablation = keys(r);
  EXPECT_EQ(std::vector<std::string>(with_ablation.end() - 2, with_ablation.end()),
            (std::vector<std::string>{"random-rank", "rank-seed"}));
  EXPECT_EQ(kv_effective_options(p)[0].value, double(0.6f));
  EXPECT_EQ(error_of([&] { set_kv_option_text(p, *d.option("n-high"), "here", "1.5"); }),
            "here: n-high=1.5 is not an integer");
  EXPECT_EQ(error_of([&] { set_kv_option_text(p, *d.option("tau"), "here", "x"); }), "here: tau=x is not a number");
  EXPECT_EQ(error_of([&] { set_kv_option_text(p, *d.option("kv-int8"), "here", "yes"); }),
            "here: kv-int8=yes must be 0 or 1");
  kv_policy_spec h;
  h.name = "h2o";
  const std::vector<kv_option_value> hv = kv_effective_options(h);
  ASSERT_EQ(hv.size(), 3u);
  EXPECT_EQ(hv[2].key, "heavy_recent_fraction");
  EXPECT_EQ(hv[2].value, 0.1);
  kv_policy_spec f;
  f.name = "freekv";
  set_kv_option_text(f, *kv_policy_described("freekv").option("no-overlap"), "here", "1");
  EXPECT_FALSE(f.overlap);  // an option kept outside kv_policy_options
  EXPECT_TRUE(kv_effective_options({}).empty());  // the plain cache: no options
}

kv_policy_desc describe_real_budget() {
  kv_policy_desc d = describe_every_other();
  d.options[0] = real_option("budget", &kv_policy_options::tau, "a real budget");
  return d;
}
kv_policy_desc describe_no_factory() { return kv_policy_desc{}; }

TEST(KvRegistry, RegistrationRefusesConflicts) {
  const size_t n = kv_policies().size();
  EXPECT_NE(error_of([] { register_kv_policy("window", &describe_every_other); }).find("the name is taken"),
            std::string::npos);
  EXPECT_NE(error_of([] { register_kv_policy("x:y", &describe_every_other); }).find("policy name"), std::string::npos);
  EXPECT_NE(error_of([] { register_kv_policy("real-budget", &describe_real_budget); }).find("another type"),
            std::string::npos);
  EXPECT_NE(error_of([] { register_kv_policy("no-factory", &describe_no_factory); }).find("no factory"),
            std::string::npos);
  EXPECT_EQ(kv_policies().size(), n);  // nothing half-added
}

// --- the test-only policy ---

TEST(EveryOther, BuiltAndCheckedFromItsDescription) {
  kv_policy_options o = shape();
  o.budget = 8;
  EXPECT_STREQ(make_kv_policy("every-other", o)->name(), "every-other");
  o.extra["stride"] = 0;
  EXPECT_EQ(error_of([&] { make_kv_policy("every-other", o); }),
            "kv policy 'every-other': stride must be >= 1 (got 0)");
  o = shape();
  o.budget = 0;
  EXPECT_EQ(error_of([&] { make_kv_policy("every-other", o); }),
            "kv policy 'every-other': budget must be >= 1 token (got 0)");
  EXPECT_NE(error_of([] { make_kv_policy("wndow", shape()); })
                .find("unknown policy 'wndow' (valid: full, window, h2o, confkv, confkv-l, freekv, every-other)"),
            std::string::npos);
}

class EveryOtherModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    random_model_spec s;
    s.arch = model_arch::llama;
    s.dim = 64, s.n_layers = 2, s.n_heads = 4, s.n_kv_heads = 2, s.ffn_dim = 128;
    s.n_vocab = 512, s.n_ctx = 512, s.type = ggml_type::f32, s.seed = 5, s.output_scale = 3;
    path_ = new std::string((test::temp_dir("kv-registry") / "tiny.gguf").string());
    write_random_model(s, *path_);
    model_ = load_model(*path_).release();
    tok_ = tokenizer::from_gguf(*model_->gguf).release();
  }
  static void TearDownTestSuite() {
    delete tok_;
    delete model_;
    delete path_;
  }
  static std::string* path_;
  static model* model_;
  static tokenizer* tok_;
};
std::string* EveryOtherModel::path_ = nullptr;
model* EveryOtherModel::model_ = nullptr;
tokenizer* EveryOtherModel::tok_ = nullptr;

struct generated {
  std::vector<int64_t> kept;       // per forward call: most tokens a layer kept (max over heads)
  std::vector<int32_t> positions;  // layer 1, KV head 1: kept positions at the end
  int64_t n_past = 0;
  size_t peak_kv_bytes = 0;
};

TEST_F(EveryOtherModel, SessionGenerateKeepsEvenPositionsWithinTheBudget) {
  auto run = [&](const std::string& policy) {
    session_options so;
    so.kv_policy = policy;
    so.kv.budget = 8;
    session s(*model_, so);
    EXPECT_STREQ(s.policy()->name(), policy.c_str());
    generated g;
    s.on_step([&](const kv_step_stats& st) { g.kept.push_back(*std::max_element(st.kept.begin(), st.kept.end())); });
    sampler greedy;
    generate_options go;
    go.max_tokens = 40;
    go.stop_at_eos = false;
    const std::vector<int32_t> prompt = tok_->encode("the old boat", true);
    const generate_result r = s.generate(*tok_, prompt, go, greedy);
    EXPECT_EQ(int64_t(r.tokens.size()), 40);
    g.n_past = s.n_past();
    EXPECT_EQ(g.n_past, int64_t(prompt.size()) + 40);
    g.positions = s.kv()->store().kept_positions(1, 1);
    g.peak_kv_bytes = s.memory().kv_peak_bytes;
    return g;
  };
  const generated eo = run("every-other");
  ASSERT_FALSE(eo.kept.empty());
  for (int64_t k : eo.kept) EXPECT_LE(k, 8);
  EXPECT_EQ(eo.kept.back(), 8);
  ASSERT_EQ(eo.positions.size(), 8u);
  for (size_t i = 0; i < eo.positions.size(); ++i) {
    EXPECT_EQ(eo.positions[i] % 2, 0) << eo.positions[i];
    if (i > 0) {
      EXPECT_EQ(eo.positions[i], eo.positions[i - 1] + 2);  // the newest 8 even positions
    }
  }
  EXPECT_GE(eo.positions.back(), eo.n_past - 2);
  const generated full = run("full");
  EXPECT_EQ(int64_t(full.positions.size()), full.n_past);
  EXPECT_LT(eo.peak_kv_bytes, full.peak_kv_bytes);
}

// `kvarena bench memory` in this process: the same subcommand code as the binary, and the
// policy flags built from the registry after every-other was registered.
struct cli_run {
  int rc = -1;
  std::string out, error;
};

cli_run kvarena_cli(const std::string& args) {
  CLI::App app{"kvarena"};
  cli::command_fn run;
  cli::add_bench_command(app, run);
  cli::add_bench_policy_command(app, run);
  cli_run r;
  try {
    app.parse(args, false);
    ::testing::internal::CaptureStdout();
    try {
      r.rc = run();
    } catch (const cli::usage_error& e) {
      r.rc = cli::k_exit_usage, r.error = e.what();
    } catch (const std::exception& e) {
      r.rc = 1, r.error = e.what();
    }
    r.out = ::testing::internal::GetCapturedStdout();
  } catch (const CLI::ParseError& e) {
    r.rc = app.exit(e), r.error = e.what();
  }
  return r;
}

TEST_F(EveryOtherModel, BenchMemoryInProcess) {
  const cli_run r = kvarena_cli("bench memory --model " + *path_ + " -t 1 --n-prompt 8 --n-gen 24 "
                                "--policies full,every-other:budget=16 --stride 2");
  ASSERT_EQ(r.rc, 0) << r.error;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 2u);
  const nlohmann::json& full = j["results"][0];
  const nlohmann::json& eo = j["results"][1];
  EXPECT_EQ(eo["policy"], "every-other");
  EXPECT_EQ(eo["spec"], "every-other:budget=16");
  EXPECT_EQ(eo["options"], nlohmann::json({{"budget", 16}, {"stride", 2}}));
  EXPECT_EQ(full["options"], nlohmann::json::object());
  EXPECT_LE(eo["kept_tokens_max"].get<int64_t>(), 16);
  EXPECT_LT(eo["peak_kv_bytes"].get<int64_t>(), full["peak_kv_bytes"].get<int64_t>());

  // Its options are flags and keys like any other policy's, refused where they mean nothing.
  const cli_run bad = kvarena_cli("bench memory --model /nonexistent.gguf --policies every-other --page 64");
  EXPECT_EQ(bad.rc, cli::k_exit_usage);
  EXPECT_EQ(bad.error, "--page: policy 'every-other' has no such option (its options: budget, stride)");
  const cli_run key = kvarena_cli("bench memory --model /nonexistent.gguf --policies window:stride=3");
  EXPECT_EQ(key.rc, cli::k_exit_usage);
  EXPECT_EQ(key.error, "policy 'window:stride=3': unknown option 'stride' for window (valid: window, sinks)");
  const cli_run range = kvarena_cli("bench memory --model /nonexistent.gguf --policies every-other:stride=0");
  EXPECT_EQ(range.rc, 1);
  EXPECT_EQ(range.error, "kv policy 'every-other': stride must be >= 1 (got 0)");
}

TEST(EveryOtherCli, HelpListsItsOptionsFromTheRegistry) {
  CLI::App app{"kvarena"};
  cli::command_fn run;
  cli::add_bench_command(app, run);
  cli::add_bench_policy_command(app, run);
  const std::string help = app.get_subcommand("bench")->get_subcommand("memory")->help();
  for (const char* part : {"--policies TEXT=full,window,h2o,confkv,confkv-l,freekv,every-other",
                           "--stride INT=2", "every-other: keep the positions that are multiples of it (>= 1)",
                           "freekv: device tokens per layer; every-other: tokens kept per layer and KV head (>= 1)",
                           "--n-high INT=256", "confkv, confkv-l: budget when confident (tokens per layer)",
                           "confkv, confkv-l: confidence threshold (in [0,1], default 0.6); freekv: correction cosine "
                           "(in [-1,1], default 0.9)"})
    EXPECT_NE(help.find(part), std::string::npos) << part << "\n" << help;
}

}  // namespace
}  // namespace kvarena
