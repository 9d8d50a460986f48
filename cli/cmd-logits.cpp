// cmd-logits.cpp: placeholder until the subcommand lands (replaced by its real implementation).
#include <stdexcept>

#include "cli-commands.h"

namespace kvarena::cli {
void add_logits_command(CLI::App& app, command_fn& run) {
  auto* sub = app.add_subcommand("logits", "(not built yet)");
  sub->callback([&run] { run = [] { throw std::runtime_error("'logits' is not built yet"); return 1; }; });
}
}  // namespace kvarena::cli
