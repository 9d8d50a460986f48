// cli-commands.h: each subcommand registers itself on the CLI11 app and returns the
// function that runs it. main() only dispatches; errors become one-line messages + exit 1,
// usage_error (a bad combination of flags) exit 2.
#pragma once
#include <functional>

#include <CLI/CLI.hpp>

#include "engine-error.h"

namespace kvarena::cli {

using command_fn = std::function<int()>;

// A bad combination of flags: an option given where it would do nothing (a KV-policy flag
// that no chosen policy takes, policy-flags.h). main() prints it as one line like any error
// but exits k_exit_usage, so a script can tell "this combination means nothing" from a
// failure (exit 1).
struct usage_error : engine_error {
  using engine_error::engine_error;
};
constexpr int k_exit_usage = 2;

// Each add_* creates its subcommand on `app` and sets `run` to the action when chosen.
void add_model_command(CLI::App& app, command_fn& run);     // kvarena model random
void add_tokenize_command(CLI::App& app, command_fn& run);  // kvarena tokenize
void add_train_tokenizer_command(CLI::App& app, command_fn& run);  // kvarena train-tokenizer
void add_logits_command(CLI::App& app, command_fn& run);    // kvarena logits
void add_generate_command(CLI::App& app, command_fn& run);  // kvarena generate
void add_bench_command(CLI::App& app, command_fn& run);     // kvarena bench decode
void add_sites_command(CLI::App& app, command_fn& run);     // kvarena sites
void add_env_server_command(CLI::App& app, command_fn& run);  // kvarena env-server
void add_tasks_command(CLI::App& app, command_fn& run);       // kvarena tasks generate|validate|list|oracle
void add_bench_env_command(CLI::App& app, command_fn& run);   // kvarena bench env (after add_bench_command)
void add_bench_policy_command(CLI::App& app, command_fn& run);  // kvarena bench ppl|niah|memory|latency|confidence-kl (after add_bench_command)
void add_merge_command(CLI::App& app, command_fn& run);   // kvarena merge OUT shards...
void add_report_command(CLI::App& app, command_fn& run);  // kvarena report RUN.sqlite
void add_run_command(CLI::App& app, command_fn& run);     // kvarena run (suite x policies x seeds -> results file)
void add_train_data_command(CLI::App& app, command_fn& run);  // kvarena train-data
void add_serve_command(CLI::App& app, command_fn& run);       // kvarena serve (OpenAI-compatible endpoint)

}  // namespace kvarena::cli
