// runner-progress.h: what a run tells the person watching it. On a terminal one line on
// stderr, redrawn as items start and finish:
//   [ 12/50] 1 error | 4.2 items/min | ETA 9m02s | task 12 window:window=64 seed 0
// Elsewhere (a log, a Slurm .out file) nothing while it runs except one line per item that
// did not finish ("task 12 window seed 0: error: ..."), then the summary line.
// Thread-safe: workers call it from several threads.
// Not here: the report table (results-report.h), which the CLI prints at the end.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "results-db.h"

namespace kvarena {

// "task 12 window:window=64 seed 0"
std::string item_label(const results::work_item& item);
// "4m05s", "1h02m", "12s"
std::string format_duration(double seconds);

class run_progress {
 public:
  // total: items this process will run (already-done items excluded); tty: redraw a line.
  run_progress(FILE* out, bool tty, int64_t total);

  void started(const results::work_item& item);
  void finished(const results::task_result& r);
  // Clears the line (tty) so that other output starts on a fresh line.
  void clear();

  int64_t done() const;
  int64_t errors() const;  // error and timeout rows
  int64_t successes() const;
  double elapsed_s() const;

 private:
  void draw_locked();
  FILE* out_;
  bool tty_;
  int64_t total_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  mutable std::mutex mu_;
  int64_t done_ = 0, errors_ = 0, successes_ = 0;
  std::string current_;
  int64_t running_ = 0;
};

}  // namespace kvarena
