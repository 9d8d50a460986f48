// backend-flag.h: the CLI's `--backend cpu|cuda` flag. The backends themselves are the
// engine's (sequence.h: make_sequence, check_backend); in CUDA builds main() registers the
// CUDA one (engine/cuda/cuda-backend.h). Without a CUDA build or a device, a command given
// --backend cuda exits 2 with one line, before it loads a model.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace kvarena::cli {

// Adds --backend (cpu|cuda, default cpu) to sub.
void add_backend_flag(CLI::App* sub, std::string& backend);

}  // namespace kvarena::cli
