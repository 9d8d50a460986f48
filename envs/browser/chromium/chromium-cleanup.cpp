// chromium-cleanup.cpp: the registry of running Chromiums and the signal-time cleanup (see
// chromium-cleanup.h). Everything reachable from chromium_cleanup_now() is async-signal-safe:
// atomics, kill, open/getdents64/unlinkat/close.
#include "browser/chromium/chromium-cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>

namespace kvarena {
namespace {

constexpr int k_slots = 64;
constexpr size_t k_dir_max = 240;

struct chromium_slot {
  std::atomic<int> state{0};    // 0 free, 1 being filled or emptied, 2 registered
  std::atomic<pid_t> group{0};  // 0 until the process is forked
  char dir[k_dir_max] = {};
};
chromium_slot g_slots[k_slots];
// Set when kvarena is going down by a signal: a thread that registers a new Chromium after
// that (its old one was just killed) removes the directory itself and waits for the end.
std::atomic<bool> g_dying{false};

struct linux_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// Removes `name` under the directory `parent_fd`, a tree if it is a directory; syscalls only.
void remove_tree_at(int parent_fd, const char* name, int depth) noexcept {
  int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    unlinkat(parent_fd, name, 0);
    return;
  }
  alignas(linux_dirent64) char buf[2048];
  for (int pass = 0; pass < 64 && depth < 48; ++pass) {  // deleting while listing can skip entries: list again
    bool removed = false;
    lseek(fd, 0, SEEK_SET);
    for (long n; (n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;) {
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
        off += d->d_reclen;
        if (std::strcmp(d->d_name, ".") == 0 || std::strcmp(d->d_name, "..") == 0) continue;
        if (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN) remove_tree_at(fd, d->d_name, depth + 1);
        else unlinkat(fd, d->d_name, 0);
        removed = true;
      }
    }
    if (!removed) break;
  }
  close(fd);
  unlinkat(parent_fd, name, AT_REMOVEDIR);
}

extern "C" void on_fatal_signal(int sig) {
  const int saved = errno;
  chromium_cleanup_for_exit();
  errno = saved;
  signal(sig, SIG_DFL);
  raise(sig);  // blocked while this handler runs; delivered when it returns
}

}  // namespace

std::string chromium_temp_prefix(pid_t kvarena_pid) {
  return "/tmp/kvarena-chromium-" + std::to_string(kvarena_pid) + "-";
}

int register_chromium(const std::string& temp_dir) {
  if (temp_dir.size() >= k_dir_max) return -1;
  for (int i = 0; i < k_slots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].dir, temp_dir.c_str(), temp_dir.size() + 1);
    g_slots[i].group.store(0);
    g_slots[i].state.store(2);
    if (g_dying.load()) {  // the exit's cleanup may have passed this slot already
      remove_tree_at(AT_FDCWD, g_slots[i].dir, 0);
      for (;;) pause();
    }
    return i;
  }
  return -1;
}

void set_chromium_group(int slot, pid_t process_group) {
  if (slot >= 0 && slot < k_slots) g_slots[slot].group.store(process_group);
}

void unregister_chromium(int slot) {
  if (slot < 0 || slot >= k_slots) return;
  g_slots[slot].state.store(1);
  g_slots[slot].group.store(0);
  g_slots[slot].state.store(0);
}

void chromium_cleanup_now() noexcept {
  for (chromium_slot& s : g_slots)
    if (pid_t g = s.group.load(); s.state.load() == 2 && g > 0) kill(-g, SIGKILL);
  for (chromium_slot& s : g_slots)
    if (s.state.load() == 2 && s.dir[0] == '/') remove_tree_at(AT_FDCWD, s.dir, 0);
}

void chromium_cleanup_for_exit() noexcept {
  g_dying.store(true);  // before the pass: a registration either is seen by it or sees this
  chromium_cleanup_now();
}

void install_chromium_signal_cleanup() {
  struct sigaction sa = {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int remove_stale_chromium_dirs(const std::string& folder) {
  namespace fs = std::filesystem;
  const std::string prefix = "kvarena-chromium-";
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>-XXXXXX"
    size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0 || rest.find_first_not_of("0123456789") != dash) continue;
    long long pid = 0;  // a 20-digit name is out of range: not ours, skipped
    auto [end, parsed] = std::from_chars(rest.data(), rest.data() + dash, pid);
    if (parsed != std::errc() || end != rest.data() + dash || pid <= 0 || pid > std::numeric_limits<pid_t>::max())
      continue;
    // Only a real directory (not a symlink) of this user: /tmp is everyone's.
    struct stat st;
    if (lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    const pid_t owner = static_cast<pid_t>(pid);
    if (owner == getpid() || kill(owner, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    std::error_code rm;
    if (fs::remove_all(e.path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

}  // namespace kvarena
