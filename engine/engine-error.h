// engine-error.h: the one exception type the engine throws for errors a user can cause
// (bad model file, bad tokens, bad options). Messages name the input and what is wrong.
// Internal invariants use KV_ASSERT, which aborts loudly with file and line.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kvarena {

struct engine_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A backend that cannot run here (no CUDA build, no device, an unknown name): the CLI
// exits 2 for it, so scripts can tell "this machine cannot" from "this input is wrong".
struct backend_error : engine_error {
  using engine_error::engine_error;
};

// "PATH: what" — every load error names the file first.
[[noreturn]] inline void fail_file(const std::string& path, const std::string& what) {
  throw engine_error(path + ": " + what);
}

}  // namespace kvarena

#define KV_ASSERT(cond)                                                                 \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      std::fprintf(stderr, "%s:%d: internal invariant failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                              \
      std::abort();                                                                     \
    }                                                                                   \
  } while (0)
