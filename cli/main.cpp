// main.cpp: the kvarena binary. Registers the subcommands and turns any error a user can
// cause into a one-line message on stderr and exit status 1, or 2 for a usage error: a
// command line CLI11 rejects (unknown option, value outside its set) or an option the
// chosen KV policy does not take. --help and --version exit 0.
#include <cstdio>
#include <exception>
#include <string>

#include "browser/chromium/chromium-cleanup.h"
#include "cli-commands.h"
#include "engine-error.h"
#ifdef KVARENA_CUDA
#include "cuda-backend.h"
#endif

int main(int argc, char** argv) {
#ifdef KVARENA_CUDA
  kvarena::register_cuda_backend();  // make_sequence("cuda", ...)
#endif
  // SIGTERM/SIGINT/SIGHUP kill the Chromium this kvarena started and remove its profile
  // (commands with their own stop handling replace this: run, env-server, sites).
  kvarena::install_chromium_signal_cleanup();
  CLI::App app{"kvarena: evaluation harness for long-horizon web agents with an embedded LLM engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kvarena ") + KVARENA_VERSION);
  kvarena::cli::command_fn run;
  using namespace kvarena::cli;
  for (auto add : {add_model_command, add_tokenize_command, add_train_tokenizer_command, add_logits_command,
                   add_generate_command, add_bench_command, add_bench_env_command, add_bench_policy_command, add_sites_command,
                   add_env_server_command, add_tasks_command, add_merge_command, add_report_command,
                   add_run_command, add_train_data_command, add_serve_command}) {
    add(app, run);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints the message (or the help) and gives CLI11's own code: 0 for --help,
    // 100+ for the errors; those are usage errors here, like the policy ones.
    return app.exit(e) == 0 ? 0 : kvarena::cli::k_exit_usage;
  }
  try {
    return run ? run() : 0;
  } catch (const kvarena::cli::usage_error& e) {
    std::fprintf(stderr, "kvarena: error: %s\n", e.what());
    return kvarena::cli::k_exit_usage;
  } catch (const kvarena::backend_error& e) {  // e.g. --backend cuda without a GPU
    std::fprintf(stderr, "kvarena: error: %s\n", e.what());
    return kvarena::cli::k_exit_usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvarena: error: %s\n", e.what());
    return 1;
  }
}
