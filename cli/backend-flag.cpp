// backend-flag.cpp: see backend-flag.h.
#include "backend-flag.h"

namespace kvarena::cli {

void add_backend_flag(CLI::App* sub, std::string& backend) {
  sub->add_option("--backend", backend, "Inference backend: cpu, or cuda (needs a CUDA build and a GPU; exit 2 without)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
}

}  // namespace kvarena::cli
