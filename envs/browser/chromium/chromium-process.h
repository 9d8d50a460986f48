// chromium-process.h: one headless Chromium process that kvarena owns: started with a fresh
// --user-data-dir in a temporary directory and DevTools over --remote-debugging-pipe (fds 3
// and 4 of the child, cdp-connection.h: no TCP port), in its own process group,
// with PR_SET_PDEATHSIG so it dies with the kvarena thread that started it (start it from
// a long-lived thread). The destructor kills the whole process group (renderers, GPU and
// zygote processes included) and removes the temporary directory
// (/tmp/kvarena-chromium-<pid>-XXXXXX); on SIGTERM/SIGINT/SIGHUP or SIGKILL of kvarena,
// chromium-cleanup.h does it.
//
// chromium_host shares one process between many browser sessions (each gets its own
// browser context: chromium-browser.h) and starts a fresh process when the last one died.
// Thread-safe.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kvarena {

class cdp_pipe;

struct chromium_options {
  std::string executable = "/usr/bin/chromium";
  std::chrono::milliseconds start_timeout{30000};
  std::vector<std::string> extra_args;  // appended to the defaults
};

class chromium_process {
 public:
  // Starts Chromium and waits for it to answer on its DevTools pipe. Throws std::runtime_error saying what
  // is wrong (no executable: which package to install; exited early: its last stderr lines).
  explicit chromium_process(const chromium_options& opt);
  ~chromium_process();
  chromium_process(const chromium_process&) = delete;
  chromium_process& operator=(const chromium_process&) = delete;

  // The DevTools pipe (cdp_connection: one per browser session on it).
  const std::shared_ptr<cdp_pipe>& pipe() const { return pipe_; }
  pid_t pid() const { return pid_; }
  const std::string& user_data_dir() const { return user_data_dir_; }
  // False once the process has exited (reaped here).
  bool alive();
  // SIGKILL to the process group (tests use it to simulate a crash).
  void kill_now();

 private:
  std::string stderr_tail() const;
  void discard();  // kill, remove the directory, unregister

  int cleanup_slot_ = -1;  // chromium-cleanup.h's registry

  pid_t pid_ = -1;
  bool exited_ = false;
  std::shared_ptr<cdp_pipe> pipe_;
  std::string temp_dir_, user_data_dir_, stderr_path_;
};

// Whether `executable` exists and can be run.
bool chromium_available(const std::string& executable = "/usr/bin/chromium");

class chromium_host {
 public:
  explicit chromium_host(chromium_options opt = {}) : opt_(std::move(opt)) {}
  // The running process, started (or restarted after a crash) on demand. Throws
  // std::runtime_error when Chromium is missing or will not start.
  std::shared_ptr<chromium_process> acquire();
  // The current process if one was started (for tests), else null.
  std::shared_ptr<chromium_process> current();
  const chromium_options& options() const { return opt_; }

 private:
  chromium_options opt_;
  std::mutex mu_;
  std::shared_ptr<chromium_process> process_;
};

}  // namespace kvarena
