// runner-progress.cpp: see runner-progress.h.
#include "runner-progress.h"

#include <cmath>

namespace kvarena {

std::string item_label(const results::work_item& item) {
  return "task " + item.task_id + " " + item.policy + " seed " + std::to_string(item.seed);
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%llds", (long long)s);
  return buf;
}

run_progress::run_progress(FILE* out, bool tty, int64_t total) : out_(out), tty_(tty), total_(total) {}

void run_progress::started(const results::work_item& item) {
  std::lock_guard lock(mu_);
  ++running_;
  current_ = item_label(item);
  if (tty_) draw_locked();
}

void run_progress::finished(const results::task_result& r) {
  std::lock_guard lock(mu_);
  --running_;
  ++done_;
  if (r.success) ++successes_;
  if (r.status != results::item_status::done) {
    ++errors_;
    if (tty_) std::fputs("\r\033[K", out_);
    std::fprintf(out_, "kvarena run: %s: %s: %s\n", item_label(r.item).c_str(), results::to_string(r.status),
                 r.error.c_str());
  }
  if (tty_) draw_locked();
  std::fflush(out_);
}

void run_progress::clear() {
  std::lock_guard lock(mu_);
  if (tty_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

int64_t run_progress::done() const {
  std::lock_guard lock(mu_);
  return done_;
}
int64_t run_progress::errors() const {
  std::lock_guard lock(mu_);
  return errors_;
}
int64_t run_progress::successes() const {
  std::lock_guard lock(mu_);
  return successes_;
}
double run_progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void run_progress::draw_locked() {
  const double el = elapsed_s();
  const double per_min = el > 0 ? 60.0 * double(done_) / el : 0;
  std::string eta = "?";
  if (done_ > 0) eta = format_duration(el / double(done_) * double(total_ - done_));
  const int width = static_cast<int>(std::to_string(total_).size());
  const std::string others = running_ > 1 ? " (+" + std::to_string(running_ - 1) + " running)" : "";
  std::fprintf(out_, "\r\033[K[%*lld/%lld] %lld error%s | %.1f items/min | ETA %s | %s%s", width, (long long)done_,
               (long long)total_, (long long)errors_, errors_ == 1 ? "" : "s", per_min, eta.c_str(),
               current_.c_str(), others.c_str());
  std::fflush(out_);
}

}  // namespace kvarena
