// fuzz-gguf.cpp: libFuzzer target for the model-file path. Each input becomes the content
// of a memfd, opened through /proc/self/fd/N, so the real open + mmap + parse path runs.
// GGUF inputs: gguf_file, then every tensor's bytes are read, then load_model_gguf;
// anything else: load_model_llama2c. engine_error is the expected outcome for bad input;
// any other exception, crash, leak or sanitizer report is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "engine-error.h"
#include "gguf-reader.h"
#include "model.h"

namespace {

int memfd() {
  static const int fd = [] {
    const int f = ::memfd_create("fuzz-input", MFD_CLOEXEC);
    if (f < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    return f;
  }();
  return fd;
}

void set_content(int fd, const uint8_t* data, size_t size) {
  if (::ftruncate(fd, 0) != 0) std::abort();
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, off_t(done));
    if (n <= 0) std::abort();
    done += size_t(n);
  }
}

// Reads every byte so ASan sees any view that points outside the mapping.
uint64_t touch(const kvarena::tensor_view& t) {
  uint64_t sum = 0;
  for (size_t i = 0; i < t.nbytes; ++i) sum += t.data[i];
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd();
  set_content(fd, data, size);
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  volatile uint64_t sink = 0;
  try {
    if (size >= 4 && std::memcmp(data, "GGUF", 4) == 0) {
      auto file = std::make_shared<const kvarena::gguf_file>(path);
      for (const auto& t : file->tensors()) sink = sink + touch(t);
      auto m = kvarena::load_model_gguf(file);
      sink = sink + touch(m->tok_embd) + touch(m->output);
    } else {
      auto m = kvarena::load_model_llama2c(path);
      sink = sink + touch(m->tok_embd) + touch(m->output) + touch(m->layers.back().w_down);
    }
  } catch (const kvarena::engine_error& e) {
    if (std::string(e.what()).rfind(path, 0) != 0) {  // every load error names the file first
      std::fprintf(stderr, "engine_error without the path: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
