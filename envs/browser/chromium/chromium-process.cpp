// chromium-process.cpp: starting, watching and killing the headless Chromium process (see
// chromium-process.h).
#include "chromium-process.h"

#include "cdp-connection.h"
#include "chromium-cleanup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kvarena {
namespace {

std::vector<std::string> default_args(const std::string& user_data_dir) {
  std::vector<std::string> args = {
      "--headless",
      "--remote-debugging-pipe",  // DevTools on fds 3 and 4: no TCP port anyone could attach to
      "--user-data-dir=" + user_data_dir,
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-extensions",
      "--disable-default-apps",
      "--disable-breakpad",
      "--disable-crash-reporter",
      "--disable-domain-reliability",
      "--disable-client-side-phishing-detection",
      "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
      "--disable-dev-shm-usage",
      "--disable-gpu",
      "--metrics-recording-only",
      "--mute-audio",
      "--hide-scrollbars",
      "--password-store=basic",
      "--use-mock-keychain",
      "--window-size=1280,2048",
  };
  if (geteuid() == 0) args.push_back("--no-sandbox");  // the sandbox refuses to run as root
  return args;
}

// Closes every descriptor from `first` up (in the forked child: async-signal-safe).
void close_from(int first) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, static_cast<unsigned>(first), ~0u, 0u) == 0) return;
#endif
  rlimit lim{};
  long max_fd = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY ? static_cast<long>(lim.rlim_cur)
                                                                                       : 65536;
  for (long fd = first; fd < max_fd; ++fd) close(static_cast<int>(fd));
}

// A pipe whose two ends are close-on-exec descriptors numbered 10 or more (so the child can
// dup2 them onto 3 and 4 without clobbering one with the other). False with errno.
bool high_pipe(int fds[2]) {
  int raw[2];
  if (::pipe2(raw, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    fds[i] = ::fcntl(raw[i], F_DUPFD_CLOEXEC, 10);
    if (fds[i] < 0) {
      const int e = errno;
      ::close(raw[0]), ::close(raw[1]);
      if (i == 1) ::close(fds[0]);
      errno = e;
      return false;
    }
  }
  ::close(raw[0]), ::close(raw[1]);
  return true;
}

}  // namespace

bool chromium_available(const std::string& executable) { return access(executable.c_str(), X_OK) == 0; }

chromium_process::chromium_process(const chromium_options& opt) {
  if (!chromium_available(opt.executable))
    throw std::runtime_error("the chromium browser backend needs " + opt.executable +
                             ", which is missing: install Debian's chromium package (scripts/setup.sh), or use "
                             "the text browser");
  remove_stale_chromium_dirs();  // left by a kvarena killed with SIGKILL
  std::string tmpl = chromium_temp_prefix(getpid()) + "XXXXXX";
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error(std::string("cannot make a temporary directory for Chromium: ") + std::strerror(errno));
  temp_dir_ = tmpl;
  cleanup_slot_ = register_chromium(temp_dir_);
  user_data_dir_ = temp_dir_ + "/profile";
  stderr_path_ = temp_dir_ + "/stderr.log";
  std::filesystem::create_directories(user_data_dir_);

  std::vector<std::string> args = default_args(user_data_dir_);
  args.insert(args.end(), opt.extra_args.begin(), opt.extra_args.end());
  args.push_back("about:blank");
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(opt.executable.c_str()));
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int to_chromium[2], from_chromium[2];  // Chromium reads [0] of the first on fd 3, writes [1] of the second on fd 4
  if (!high_pipe(to_chromium)) {
    const std::string why = std::strerror(errno);
    discard();
    throw std::runtime_error("cannot start Chromium: no pipe for DevTools: " + why);
  }
  if (!high_pipe(from_chromium)) {
    const std::string why = std::strerror(errno);
    ::close(to_chromium[0]), ::close(to_chromium[1]);
    discard();
    throw std::runtime_error("cannot start Chromium: no pipe for DevTools: " + why);
  }

  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    const std::string why = std::strerror(errno);
    for (int fd : {to_chromium[0], to_chromium[1], from_chromium[0], from_chromium[1]}) ::close(fd);
    discard();
    throw std::runtime_error("cannot start Chromium: fork failed: " + why);
  }
  if (pid_ == 0) {  // the child: only async-signal-safe calls until exec
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // kvarena died before prctl took effect
    int null_fd = open("/dev/null", O_RDWR);
    int err_fd = open(stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (null_fd >= 0) dup2(null_fd, 0), dup2(null_fd, 1);
    if (err_fd >= 0) dup2(err_fd, 2);
    // --remote-debugging-pipe: Chromium reads commands on fd 3 and writes on fd 4 (dup2
    // clears close-on-exec on the copies; the originals, 10 and up, close at exec).
    if (dup2(to_chromium[0], 3) < 0 || dup2(from_chromium[1], 4) < 0) _exit(127);
    // Nothing else of kvarena's: its listening sockets (the env API, the sites), client
    // connections and files are not Chromium's to hold (`ss -ltnp` would list the ports
    // as Chromium's too, and they would outlive a kvarena whose Chromium lingers).
    close_from(5);
    execv(opt.executable.c_str(), argv.data());
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here: whichever runs first
  set_chromium_group(cleanup_slot_, pid_);
  ::close(to_chromium[0]);  // Chromium's ends: only it holds them now, so its exit is end of file here
  ::close(from_chromium[1]);
  pipe_ = std::make_shared<cdp_pipe>(to_chromium[1], from_chromium[0]);

  // Ready once it answers a command on the pipe.
  std::string failure;
  try {
    cdp_connection probe(pipe_);
    probe.call("Browser.getVersion", nlohmann::json::object(), "", opt.start_timeout);
  } catch (const cdp_error& e) {
    if (e.timed_out()) {
      failure = "Chromium did not answer on its DevTools pipe within " +
                std::to_string(opt.start_timeout.count() / 1000) + " s";
    } else {
      for (int i = 0; i < 100 && alive(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      failure = "Chromium (" + opt.executable + ") exited while starting";
    }
  }
  if (!failure.empty()) {
    std::string tail = stderr_tail();
    pipe_.reset();
    discard();
    throw std::runtime_error(failure + (tail.empty() ? std::string() : ": " + tail));
  }
}

chromium_process::~chromium_process() { discard(); }

void chromium_process::discard() {
  kill_now();
  std::error_code ec;
  std::filesystem::remove_all(temp_dir_, ec);
  unregister_chromium(cleanup_slot_);
  cleanup_slot_ = -1;
}

bool chromium_process::alive() {
  if (exited_ || pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) exited_ = true;
  return !exited_;
}

void chromium_process::kill_now() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);  // the group: browser, renderers, zygote, GPU process
  if (!exited_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    exited_ = true;
  }
}

std::string chromium_process::stderr_tail() const {
  std::ifstream in(stderr_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > 600) s = s.substr(s.size() - 600);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::shared_ptr<chromium_process> chromium_host::acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!process_ || !process_->alive()) {
    process_.reset();  // sessions still holding the dead one keep it until they close
    process_ = std::make_shared<chromium_process>(opt_);
  }
  return process_;
}

std::shared_ptr<chromium_process> chromium_host::current() {
  std::lock_guard<std::mutex> lock(mu_);
  return process_;
}

}  // namespace kvarena
