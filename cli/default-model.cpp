// default-model.cpp: see default-model.h.
#include "default-model.h"

#include <filesystem>
#include <vector>

#include "engine-error.h"

namespace kvarena::cli {

std::string model_or_default(const std::string& given) {
  if (!given.empty()) return given;
  namespace fs = std::filesystem;
  std::vector<fs::path> places = {fs::path(k_default_model_file)};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) places.push_back(exe.parent_path().parent_path() / k_default_model_file);
  std::string looked;
  for (const fs::path& p : places) {
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + p.lexically_normal().string();
  }
  throw engine_error("--model: not given, and the default model is not there (looked for " + looked +
                     "); give a GGUF, or train one with scripts/train/train.sh");
}

}  // namespace kvarena::cli
