// chromium-process.cpp: starting, watching and killing the headless Chromium process (see
// chromium-process.h).
#include "chromium-process.h"

#include "chromium-cleanup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
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
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
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

  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    const std::string why = std::strerror(errno);
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
    execv(opt.executable.c_str(), argv.data());
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here: whichever runs first
  set_chromium_group(cleanup_slot_, pid_);

  const auto deadline = std::chrono::steady_clock::now() + opt.start_timeout;
  const std::string port_file = user_data_dir_ + "/DevToolsActivePort";
  while (true) {
    std::ifstream in(port_file);
    std::string port_line, path_line;
    if (in && std::getline(in, port_line) && std::getline(in, path_line) && !path_line.empty()) {
      port_ = std::atoi(port_line.c_str());
      browser_path_ = path_line;
      if (port_ > 0) break;
    }
    if (!alive()) {
      std::string tail = stderr_tail();
      discard();
      throw std::runtime_error("Chromium (" + opt.executable + ") exited while starting" +
                               (tail.empty() ? std::string() : ": " + tail));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::string tail = stderr_tail();
      discard();
      throw std::runtime_error("Chromium did not open its DevTools port within " +
                               std::to_string(opt.start_timeout.count() / 1000) + " s" +
                               (tail.empty() ? std::string() : ": " + tail));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
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
