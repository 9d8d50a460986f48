// runner-plan.cpp: see runner-plan.h.
#include "runner-plan.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace kvarena {

namespace {

namespace fs = std::filesystem;

// A non-negative integer, the whole text; nullopt otherwise.
std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

int64_t env_int(const env_lookup& get, const char* name, bool required, const std::string& why) {
  const char* v = get(name);
  if (!v || !*v) {
    if (required) throw std::invalid_argument(name + std::string(" is not set (") + why + ")");
    return -1;
  }
  auto x = to_int(v);
  if (!x) throw std::invalid_argument(name + std::string("=") + v + " is not a non-negative integer");
  return *x;
}

void check_index(const shard_spec& s) {
  if (s.count < 1)
    throw std::invalid_argument(s.source + ": the shard count must be at least 1 (got " + std::to_string(s.count) + ")");
  if (s.index < 0 || s.index >= s.count)
    throw std::invalid_argument(s.source + ": shard index " + std::to_string(s.index) + " of " +
                                std::to_string(s.count) + " is not in 0.." + std::to_string(s.count - 1) +
                                " (shards are numbered from 0; submit the array as --array=0-" +
                                std::to_string(s.count - 1) + ")");
}

}  // namespace

shard_spec parse_shard(std::string_view text) {
  const std::string t(text);
  const size_t slash = text.find('/');
  std::optional<int64_t> i, n;
  if (slash != std::string_view::npos) i = to_int(text.substr(0, slash)), n = to_int(text.substr(slash + 1));
  if (!i || !n) throw std::invalid_argument("--shard " + t + ": expected I/N with integers 0 <= I < N, e.g. 0/4");
  if (*n < 1) throw std::invalid_argument("--shard " + t + ": the shard count N must be at least 1");
  if (*i >= *n)
    throw std::invalid_argument("--shard " + t + ": the index must be in 0.." + std::to_string(*n - 1) +
                                " (shards are numbered from 0)");
  return {*i, *n, "--shard"};
}

std::optional<shard_spec> shard_from_environment(std::optional<int64_t> shard_count, const env_lookup& getenv_fn) {
  const env_lookup get = getenv_fn ? getenv_fn : env_lookup([](const char* n) { return std::getenv(n); });
  const char* slurm_id = get("SLURM_ARRAY_TASK_ID");
  if (slurm_id && *slurm_id) {
    shard_spec s;
    s.source = "SLURM_ARRAY_TASK_ID=" + std::string(slurm_id);
    s.index = env_int(get, "SLURM_ARRAY_TASK_ID", true, "");
    s.count = env_int(get, "SLURM_ARRAY_TASK_COUNT", true, "a Slurm job array sets it with SLURM_ARRAY_TASK_ID");
    s.source += " SLURM_ARRAY_TASK_COUNT=" + std::to_string(s.count);
    // An array must be exactly 0..N-1 with step 1, or items would be skipped or run twice.
    const int64_t lo = env_int(get, "SLURM_ARRAY_TASK_MIN", false, "");
    const int64_t hi = env_int(get, "SLURM_ARRAY_TASK_MAX", false, "");
    const int64_t step = env_int(get, "SLURM_ARRAY_TASK_STEP", false, "");
    if ((lo >= 0 && lo != 0) || (hi >= 0 && hi != s.count - 1) || (step >= 0 && step != 1))
      throw std::invalid_argument(s.source + ": the array's ids are " + std::to_string(std::max<int64_t>(lo, 0)) +
                                  "-" + std::to_string(hi) + (step > 1 ? ":" + std::to_string(step) : "") +
                                  ", not 0.." + std::to_string(s.count - 1) + "; submit it as --array=0-" +
                                  std::to_string(s.count - 1));
    check_index(s);
    return s;
  }
  const char* k8s = get("JOB_COMPLETION_INDEX");
  if (k8s && *k8s) {
    shard_spec s;
    s.source = "JOB_COMPLETION_INDEX=" + std::string(k8s);
    s.index = env_int(get, "JOB_COMPLETION_INDEX", true, "");
    if (!shard_count)
      throw std::invalid_argument(s.source + " is set but not the shard count: pass --shard-count N (the job's "
                                  "completions)");
    s.count = *shard_count;
    s.source += " --shard-count " + std::to_string(s.count);
    check_index(s);
    return s;
  }
  if (shard_count)
    throw std::invalid_argument("--shard-count " + std::to_string(*shard_count) +
                                " needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); use --shard I/N otherwise");
  return std::nullopt;
}

std::vector<int64_t> seeds_from_count(int64_t n) {
  if (n < 1) throw std::invalid_argument("--seeds " + std::to_string(n) + ": give at least 1 (seeds 0..N-1)");
  std::vector<int64_t> s(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s[static_cast<size_t>(i)] = i;
  return s;
}

std::vector<int64_t> parse_seed_list(std::string_view text) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  size_t b = 0;
  while (true) {
    const size_t e = text.find(',', b);
    const std::string_view part = text.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
    auto v = to_int(part);
    if (!v)
      throw std::invalid_argument("--seed-list " + std::string(text) + ": '" + std::string(part) +
                                  "' is not a non-negative integer (e.g. --seed-list 0,5,7)");
    if (!seen.insert(*v).second)
      throw std::invalid_argument("--seed-list " + std::string(text) + ": seed " + std::to_string(*v) + " is repeated");
    out.push_back(*v);
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  return out;
}

std::vector<results::planned_item> plan_work_items(const std::vector<std::string>& task_ids,
                                                   const std::vector<std::string>& policies,
                                                   const std::vector<int64_t>& seeds, int64_t shard_count) {
  std::vector<results::work_item> items;
  items.reserve(task_ids.size() * policies.size() * seeds.size());
  for (const auto& t : task_ids)
    for (const auto& p : policies)
      for (int64_t s : seeds) items.push_back({t, p, s});
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  std::vector<results::planned_item> plan;
  plan.reserve(items.size());
  const int64_t n = std::max<int64_t>(shard_count, 1);
  for (size_t k = 0; k < items.size(); ++k) plan.push_back({items[k], static_cast<int64_t>(k) % n});
  return plan;
}

std::vector<results::work_item> shard_work_items(const std::vector<results::planned_item>& plan, int64_t index) {
  std::vector<results::work_item> out;
  for (const auto& p : plan)
    if (p.shard == index) out.push_back(p.item);
  return out;
}

std::string shard_file_name(const shard_spec& s) {
  return "shard-" + std::to_string(s.index) + "-of-" + std::to_string(s.count) + ".sqlite";
}

run_output resolve_run_output(const std::string& out, const std::string& name, const std::optional<shard_spec>& shard,
                              const std::string& suite, const std::string& model_or_agent) {
  auto last_component = [](const std::string& p) {
    fs::path x = fs::path(p).lexically_normal();
    if (x.filename().empty()) x = x.parent_path();  // "dir/"
    return x.filename().string();
  };
  std::error_code ec;
  const bool ends_with_slash = !out.empty() && out.back() == '/';
  const bool folder = shard.has_value() || ends_with_slash || (!out.empty() && fs::is_directory(out, ec));
  if (shard && !out.empty() && fs::path(out).extension() == ".sqlite" && !fs::is_directory(out, ec))
    throw std::invalid_argument("--out " + out + ": with a shard (" + shard->source +
                                ") --out is a folder that gets shard-I-of-N.sqlite; pass the folder");
  run_output r;
  r.folder = folder;
  std::string base = out;
  if (out.empty()) {
    r.name = !name.empty() ? name
                           : last_component(suite) + "-" + fs::path(last_component(model_or_agent)).stem().string();
    base = "results/runs/" + r.name + (folder ? "" : ".sqlite");
  } else {
    r.name = !name.empty() ? name : folder ? last_component(out) : fs::path(out).stem().string();
  }
  if (r.name.empty() || r.name == "." || r.name == "..")
    throw std::invalid_argument("--out " + out + ": cannot take a run name from it; pass --name");
  r.file = folder ? (fs::path(base) / shard_file_name(shard.value_or(shard_spec{0, 1, ""}))).string() : base;
  return r;
}

}  // namespace kvarena
