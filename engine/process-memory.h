// process-memory.h: the process's resident memory as a user checks it (/usr/bin/time's
// "Maximum resident set size", VmHWM in /proc/self/status), and resetting its high-water
// mark so that one task's peak is measured apart from the tasks before it (Linux: writing
// 5 to /proc/self/clear_refs; where that is refused the peak covers the process's life and
// reset_process_peak says so by returning false).
#pragma once
#include <cstddef>

namespace kvarena {

size_t process_rss_bytes();        // VmRSS now (0 when unknown)
size_t process_peak_rss_bytes();   // VmHWM: the most resident since start or the last reset
bool reset_process_peak();         // true when the high-water mark was reset to the current RSS

}  // namespace kvarena
