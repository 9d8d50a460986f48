// cmd-sites.cpp: `kvarena sites [--port 8080] [--host 127.0.0.1] [--seed 1] [--threads 2]`:
// serves the local web sites (envs/sites/) until Ctrl-C / SIGTERM. Prints one line per
// site with its base URL for the default tenant "main" on stdout (port 0 picks a free port
// and the line shows it); hints on stderr.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include <pthread.h>

#include "cli-commands.h"
#include "sites/site-server.h"

namespace kvarena::cli {

namespace {

struct sites_args {
  std::string host = "127.0.0.1";
  int port = 8080;
  uint64_t seed = 1;
  int threads = 2;
};

int run_sites(const sites_args& a) {
  // Block the stop signals before the server threads start (they inherit the mask), so
  // only sigwait() below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  sites::sites_options opt;
  opt.http.host = a.host;
  opt.http.port = static_cast<uint16_t>(a.port);
  opt.http.threads = a.threads;
  opt.seed = a.seed;
  sites::sites_server server(opt);
  server.start();

  for (const auto& [name, url] : server.site_urls(std::string(sites::kDefaultTenant)))
    std::printf("%-12s %s/\n", name.c_str(), url.c_str());
  std::fflush(stdout);
  std::fprintf(stderr,
               "kvarena sites: serving on %s (seed %llu). Log in as blake.sullivan, password \"password\" "
               "(every seeded user has that password).\n"
               "Tenants for isolated sessions: POST %s/_admin/tenants. Ctrl-C to stop.\n",
               server.base_url().c_str(), static_cast<unsigned long long>(a.seed), server.base_url().c_str());

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "kvarena sites: stopping (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  server.stop();
  return 0;
}

}  // namespace

void add_sites_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("sites", "Serve the local web sites (classifieds, ...) for a browser");
  auto a = std::make_shared<sites_args>();
  sub->add_option("--port,-p", a->port, "TCP port (0 = pick a free one)")->check(CLI::Range(0, 65535));
  sub->add_option("--host", a->host, "Address to bind (0.0.0.0 = every interface)");
  sub->add_option("--seed", a->seed, "Seed of the site content (same seed, same content)");
  sub->add_option("-t,--threads", a->threads, "Server threads")->check(CLI::PositiveNumber);
  sub->callback([&run, a] { run = [a] { return run_sites(*a); }; });
}

}  // namespace kvarena::cli
