// report-stats.cpp: see report-stats.h.
#include "report-stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace kvarena::results {

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

double median_of(std::vector<double> v) {
  if (v.empty()) return nan_value;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Rows grouped by task, tasks in name order: the bootstrap's unit.
std::map<std::string, std::vector<const item_outcome*>> by_task(const std::vector<item_outcome>& rows) {
  std::map<std::string, std::vector<const item_outcome*>> out;
  for (const item_outcome& r : rows) out[r.task].push_back(&r);
  return out;
}

// The 2.5th and 97.5th percentiles (linear interpolation) of the finite values.
bootstrap_ci percentiles(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return {nan_value, nan_value};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const double pos = q * double(v.size() - 1);
    const size_t i = size_t(pos);
    const double f = pos - double(i);
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
  };
  return {at(0.025), at(0.975)};
}

// Resamples the tasks of `full` and applies stat(policy rows, full rows) to each draw.
template <class Stat>
bootstrap_ci bootstrap(const std::vector<item_outcome>& policy, const std::vector<item_outcome>& full,
                       const bootstrap_options& o, Stat stat) {
  const auto p_tasks = by_task(policy), f_tasks = by_task(full);
  std::vector<std::string> tasks;
  for (const auto& [t, rows] : f_tasks) tasks.push_back(t);
  if (tasks.empty()) return {nan_value, nan_value};
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<size_t> pick(0, tasks.size() - 1);
  std::vector<double> ratios;
  std::vector<const item_outcome*> p, f;
  for (int b = 0; b < o.resamples; ++b) {
    p.clear(), f.clear();
    for (size_t i = 0; i < tasks.size(); ++i) {
      const std::string& t = tasks[pick(rng)];
      const auto& fr = f_tasks.at(t);
      f.insert(f.end(), fr.begin(), fr.end());
      if (auto it = p_tasks.find(t); it != p_tasks.end()) p.insert(p.end(), it->second.begin(), it->second.end());
    }
    ratios.push_back(stat(p, f));
  }
  return percentiles(std::move(ratios));
}

double success_rate(const std::vector<const item_outcome*>& rows) {
  if (rows.empty()) return nan_value;
  double k = 0;
  for (const item_outcome* r : rows) k += r->success;
  return k / double(rows.size());
}

double median_peak(const std::vector<const item_outcome*>& rows) {
  std::vector<double> v;
  for (const item_outcome* r : rows)
    if (r->ended && !std::isnan(r->logical_peak)) v.push_back(r->logical_peak);
  return median_of(std::move(v));
}

}  // namespace

std::pair<double, double> wilson_interval(int64_t k, int64_t n) {
  if (n <= 0) return {nan_value, nan_value};
  const double z = 1.959963984540054, p = double(k) / double(n), nn = double(n);
  const double denom = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

bootstrap_ci bootstrap_retained(const std::vector<item_outcome>& policy, const std::vector<item_outcome>& full,
                                const bootstrap_options& o) {
  return bootstrap(policy, full, o, [](const auto& p, const auto& f) {
    const double fs = success_rate(f);
    return fs > 0 ? success_rate(p) / fs : nan_value;
  });
}

bootstrap_ci bootstrap_memory_ratio(const std::vector<item_outcome>& policy, const std::vector<item_outcome>& full,
                                    const bootstrap_options& o) {
  return bootstrap(policy, full, o, [](const auto& p, const auto& f) {
    const double fm = median_peak(f);
    return fm > 0 ? median_peak(p) / fm : nan_value;
  });
}

std::vector<std::pair<int64_t, double>> template_success(const std::vector<item_outcome>& rows) {
  std::map<int64_t, std::pair<int64_t, int64_t>> count;  // template -> (successes, rows)
  for (const item_outcome& r : rows)
    if (r.template_id >= 0) {
      count[r.template_id].first += r.success;
      count[r.template_id].second += 1;
    }
  std::vector<std::pair<int64_t, double>> out;
  for (const auto& [t, c] : count) out.push_back({t, double(c.first) / double(c.second)});
  return out;
}

double template_mean(const std::vector<std::pair<int64_t, double>>& per_template) {
  if (per_template.empty()) return nan_value;
  double s = 0;
  for (const auto& [t, rate] : per_template) s += rate;
  return s / double(per_template.size());
}

}  // namespace kvarena::results
