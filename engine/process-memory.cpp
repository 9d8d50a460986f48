// process-memory.cpp: see process-memory.h.
#include "process-memory.h"

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace kvarena {
namespace {

// The value of a "Name:   1234 kB" line of /proc/self/status, in bytes; 0 when absent.
size_t status_kib(const char* name) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(name);
  while (std::getline(f, line))
    if (line.compare(0, n, name) == 0 && line.size() > n && line[n] == ':')
      return size_t(std::strtoull(line.c_str() + n + 1, nullptr, 10)) * 1024;
  return 0;
}

}  // namespace

size_t process_rss_bytes() { return status_kib("VmRSS"); }

size_t process_peak_rss_bytes() {
  if (size_t b = status_kib("VmHWM")) return b;
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0) return size_t(ru.ru_maxrss) * 1024;  // Linux: KiB
  return 0;
}

bool reset_process_peak() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return bool(f);
}

}  // namespace kvarena
