// gguf-test-util.h: what the GGUF and random-model tests share (test-gguf.cpp,
// test-random-model.cpp): file bytes, little-endian pokes, finding a key or tensor record in
// a file, the loaders' error text, a small valid file, a tiny model spec, FNV-1a.
#pragma once
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <tuple>

#include "engine-error.h"
#include "gguf-reader.h"
#include "gguf-writer.h"
#include "model-random.h"
#include "model.h"
#include "test-util.h"

using namespace kvarena;
using bytes = std::vector<uint8_t>;

namespace {

inline bytes read_bytes(const std::string& path) {
  const std::string s = test::read_file(path);
  return bytes(s.begin(), s.end());
}

inline void write_bytes(const std::string& path, const bytes& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// The little-endian bytes of the values in order (a `bytes` argument is copied as is).
inline void append_le(bytes& out, const bytes& b) { out.insert(out.end(), b.begin(), b.end()); }
template <typename T>
inline void append_le(bytes& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}
template <typename... T>
inline bytes le_bytes(const T&... v) {
  bytes out;
  (append_le(out, v), ...);
  return out;
}

template <typename T>
inline void poke(bytes& b, size_t off, T v) {
  ASSERT_LE(off + sizeof(T), b.size());
  std::memcpy(b.data() + off, &v, sizeof(T));
}

// Offset just past the GGUF string `s` (u64 length + bytes) in `b`.
inline size_t after_string(const bytes& b, const std::string& s) {
  bytes pat(8 + s.size());
  const uint64_t n = s.size();
  std::memcpy(pat.data(), &n, 8);
  std::copy(s.begin(), s.end(), pat.begin() + 8);
  auto it = std::search(b.begin(), b.end(), pat.begin(), pat.end());
  EXPECT_NE(it, b.end()) << "string '" << s << "' not in file";
  return size_t(it - b.begin()) + pat.size();
}

// Field offsets of a tensor info: n_dims, ne[0], then type and offset after the dims.
struct tensor_info_at {
  size_t n_dims, ne0, type, offset;
};
inline tensor_info_at find_tensor_info(const bytes& b, const std::string& name) {
  tensor_info_at t{};
  t.n_dims = after_string(b, name);
  uint32_t nd = 0;
  std::memcpy(&nd, b.data() + t.n_dims, 4);
  t.ne0 = t.n_dims + 4;
  t.type = t.ne0 + 8 * nd;
  t.offset = t.type + 4;
  return t;
}

// Runs `load` and returns the engine_error message; fails the test if nothing (or
// something else) is thrown, or if the message does not name the file.
inline std::string load_error(const std::string& path, const std::function<void()>& load) {
  try {
    load();
  } catch (const engine_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an engine_error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}
inline std::string gguf_error(const std::string& path) {
  return load_error(path, [&] { gguf_file f(path); });
}
#define EXPECT_CONTAINS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

// A small file with a few keys and two tensors, for byte patching.
inline std::string write_small(const std::filesystem::path& dir, const std::function<void(gguf_writer&)>& extra = {}) {
  gguf_writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("test.u32", 7);
  w.set_u64("test.u64", 5);
  w.set_bool("test.bool", true);
  w.set_string_array("test.strings", {"a", "bc"});
  w.set_raw("test.nested", gguf_vtype::array,  // array of 1 array of 2 i32
            le_bytes(uint32_t(gguf_vtype::array), uint64_t(1), uint32_t(gguf_vtype::i32), uint64_t(2), 1, 2));
  if (extra) extra(w);
  w.add_tensor_f32("tensor_a", ggml_type::f32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  w.add_tensor_f32("tensor_b", ggml_type::f16, {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const std::string path = (dir / "small.gguf").string();
  w.write(path);
  return path;
}

inline random_model_spec tiny_spec(model_arch arch = model_arch::llama, ggml_type type = ggml_type::f32) {
  random_model_spec s;
  s.arch = arch;
  s.dim = 64;
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = arch == model_arch::gpt2 ? 4 : 2;
  s.ffn_dim = 96;
  s.n_vocab = 320;
  s.n_ctx = 64;
  s.type = type;
  s.seed = 7;
  return s;
}

inline uint64_t fnv1a(const bytes& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : b) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace
