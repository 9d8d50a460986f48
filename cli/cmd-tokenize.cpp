// cmd-tokenize.cpp: placeholder until the subcommand lands (replaced by its real implementation).
#include <stdexcept>

#include "cli-commands.h"

namespace kvarena::cli {
void add_tokenize_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("tokenize", "(not built yet)");
  sub->callback([&run] { run = [] { throw std::runtime_error("'tokenize' is not built yet"); return 1; }; });
}
}  // namespace kvarena::cli
