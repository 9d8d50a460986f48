// test-gguf.cpp: the GGUF writer and reader together (every value and tensor type round
// trips), the reader against damaged files (every defect throws engine_error naming the
// file, never crashes), and the random-model generator (loadable, deterministic, sane
// statistics, valid synthetic tokenizers). Needs no shared files.
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

bytes read_bytes(const std::string& path) {
  const std::string s = test::read_file(path);
  return bytes(s.begin(), s.end());
}

void write_bytes(const std::string& path, const bytes& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// The little-endian bytes of the values in order (a `bytes` argument is copied as is).
void append_le(bytes& out, const bytes& b) { out.insert(out.end(), b.begin(), b.end()); }
template <typename T>
void append_le(bytes& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}
template <typename... T>
bytes le_bytes(const T&... v) {
  bytes out;
  (append_le(out, v), ...);
  return out;
}

template <typename T>
void poke(bytes& b, size_t off, T v) {
  ASSERT_LE(off + sizeof(T), b.size());
  std::memcpy(b.data() + off, &v, sizeof(T));
}

// Offset just past the GGUF string `s` (u64 length + bytes) in `b`.
size_t after_string(const bytes& b, const std::string& s) {
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
tensor_info_at find_tensor_info(const bytes& b, const std::string& name) {
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
std::string load_error(const std::string& path, const std::function<void()>& load) {
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
std::string gguf_error(const std::string& path) {
  return load_error(path, [&] { gguf_file f(path); });
}
#define EXPECT_CONTAINS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << (msg)

// A small file with a few keys and two tensors, for byte patching.
std::string write_small(const std::filesystem::path& dir, const std::function<void(gguf_writer&)>& extra = {}) {
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

random_model_spec tiny_spec(model_arch arch = model_arch::llama, ggml_type type = ggml_type::f32) {
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

uint64_t fnv1a(const bytes& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : b) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

// ---------------------------------------------------------------- round trip

TEST(GgufRoundTrip, EveryValueType) {
  const auto dir = test::temp_dir("gguf-values");
  gguf_writer w;
  w.set_u8("v.u8", 200);
  w.set_i8("v.i8", -100);
  w.set_u16("v.u16", 65000);
  w.set_i16("v.i16", -32000);
  w.set_u32("v.u32", 4000000000u);
  w.set_i32("v.i32", -2000000000);
  w.set_u64("v.u64", uint64_t(1) << 62);
  w.set_i64("v.i64", -(int64_t(1) << 62));
  w.set_f32("v.f32", 1.5f);
  w.set_f64("v.f64", 3.141592653589793);
  w.set_bool("v.true", true);
  w.set_bool("v.false", false);
  const std::string str("h\xc3\xa9llo\0x", 8);  // UTF-8 and an embedded NUL
  w.set_string("v.str", str);
  w.set_string("v.empty", "");
  w.set_string_array("v.strs", {"", "a", "\xe2\x96\x81the"});
  w.set_f32_array("v.f32s", {0.5f, -1.25f, 1e30f});
  w.set_f64_array("v.f64s", {0.1, -2.5});
  w.set_i32_array("v.i32s", {1, -2, 2147483647});
  w.set_i32_array("v.none", {});
  const std::vector<std::pair<gguf_vtype, std::vector<int64_t>>> int_arrays = {
      {gguf_vtype::u8, {0, 255}},         {gguf_vtype::i8, {-128, 127}},
      {gguf_vtype::u16, {0, 65535}},      {gguf_vtype::i16, {-32768, 32767}},
      {gguf_vtype::u32, {0, 4294967295}}, {gguf_vtype::i32, {INT32_MIN, INT32_MAX}},
      {gguf_vtype::u64, {0, INT64_MAX}},  {gguf_vtype::i64, {INT64_MIN, INT64_MAX}},
      {gguf_vtype::boolean, {0, 1}}};
  for (const auto& [t, v] : int_arrays) w.set_int_array(std::string("ints.") + gguf_vtype_name(t), t, v);
  const std::string path = (dir / "v.gguf").string();
  w.write(path);

  gguf_file f(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), w.n_metadata());
  EXPECT_EQ(f.metadata()[0].first, "v.u8");  // file order kept
  for (const auto& [k, v] : std::vector<std::pair<std::string, int64_t>>{
           {"v.u8", 200}, {"v.i8", -100}, {"v.u16", 65000}, {"v.i16", -32000}, {"v.u32", 4000000000},
           {"v.i32", -2000000000}, {"v.u64", int64_t(1) << 62}, {"v.i64", -(int64_t(1) << 62)}}) {
    EXPECT_EQ(f.get_int(k), v) << k;
    EXPECT_EQ(std::string(gguf_vtype_name(f.find(k)->type)), k.substr(2)) << k;
  }
  EXPECT_EQ(f.get_float("v.f32"), 1.5);
  EXPECT_EQ(f.find("v.f32")->type, gguf_vtype::f32);
  EXPECT_EQ(f.get_float("v.f64"), 3.141592653589793);
  EXPECT_EQ(f.get_bool("v.true"), true);
  EXPECT_EQ(f.get_bool("v.false"), false);
  EXPECT_EQ(f.get_string("v.str"), str);
  EXPECT_EQ(f.get_string("v.empty"), "");
  EXPECT_EQ(*f.get_string_array("v.strs"), (std::vector<std::string>{"", "a", "\xe2\x96\x81the"}));
  EXPECT_EQ(*f.get_float_array("v.f32s"), (std::vector<double>{0.5, -1.25, double(1e30f)}));
  EXPECT_EQ(*f.get_float_array("v.f64s"), (std::vector<double>{0.1, -2.5}));
  EXPECT_EQ(*f.get_int_array("v.i32s"), (std::vector<int64_t>{1, -2, 2147483647}));
  EXPECT_TRUE(f.get_int_array("v.none")->empty());
  for (const auto& [t, v] : int_arrays) {
    const std::string k = std::string("ints.") + gguf_vtype_name(t);
    ASSERT_NE(f.find(k), nullptr) << k;
    EXPECT_EQ(f.find(k)->elem_type, t) << k;
    EXPECT_EQ(*f.get_int_array(k), v) << k;
  }
  EXPECT_FALSE(f.get_int("missing"));
  // Asking for the wrong type is an error that names the file, not a crash.
  EXPECT_CONTAINS(load_error(path, [&] { f.get_int("v.str"); }), "should be an integer");
  EXPECT_CONTAINS(load_error(path, [&] { f.get_string("v.u8"); }), "should be a string");
  EXPECT_CONTAINS(load_error(path, [&] { f.get_string_array("v.f32s"); }), "array of strings");
  EXPECT_CONTAINS(load_error(path, [&] { f.require_int("missing.key"); }), "missing metadata key 'missing.key'");
}

TEST(GgufRoundTrip, EveryTensorTypeAndRank) {
  const auto dir = test::temp_dir("gguf-tensors");
  gguf_writer w;
  struct want {
    std::string name;
    ggml_type type;
    std::vector<int64_t> ne;
    bytes data;
  };
  std::vector<want> wants;
  uint8_t next = 1;
  for (ggml_type t : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0}) {
    for (size_t rank = 1; rank <= 4; ++rank) {
      std::vector<int64_t> ne = {64, 3, 2, 5};
      ne.resize(rank);
      want x{std::string(ggml_traits(t).name) + ".r" + std::to_string(rank), t, ne, {}};
      x.data.resize(gguf_writer::tensor_bytes(x.name, t, ne));
      for (auto& c : x.data) c = next++;
      w.add_tensor(x.name, t, ne, x.data);
      wants.push_back(std::move(x));
    }
  }
  // A tensor whose data comes from a fill callback, and one of an odd size (padding).
  w.add_tensor("filled", ggml_type::f32, {3}, [](uint8_t* dst, size_t n) { std::memset(dst, 0xab, n); });
  const std::string path = (dir / "t.gguf").string();
  const uint64_t size = w.write(path);
  EXPECT_EQ(size, std::filesystem::file_size(path));

  gguf_file f(path);
  ASSERT_EQ(f.tensors().size(), wants.size() + 1);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  for (size_t i = 0; i < wants.size(); ++i) {
    const auto& t = f.tensors()[i];
    const auto& x = wants[i];
    EXPECT_EQ(t.name, x.name);
    EXPECT_EQ(t.type, x.type);
    EXPECT_EQ(t.n_dims, int(x.ne.size()));
    for (size_t d = 0; d < 4; ++d) EXPECT_EQ(t.ne[d], d < x.ne.size() ? x.ne[d] : 1) << x.name;
    ASSERT_EQ(t.nbytes, x.data.size());
    EXPECT_EQ(std::memcmp(t.data, x.data.data(), t.nbytes), 0) << x.name;
    EXPECT_EQ(size_t(t.data - f.mapping()->data()) % 32, 0u) << x.name;
    EXPECT_EQ(f.find_tensor(x.name), &t);
  }
  const tensor_view* filled = f.find_tensor("filled");
  ASSERT_NE(filled, nullptr);
  EXPECT_EQ(filled->nbytes, 12u);
  EXPECT_EQ(filled->data[11], 0xab);
  EXPECT_EQ(size % 32, 0u);  // the last tensor is padded too
}

TEST(GgufRoundTrip, AlignmentIsHonoured) {
  const auto dir = test::temp_dir("gguf-align");
  for (uint32_t align : {8u, 64u, 256u}) {
    gguf_writer w;
    w.set_alignment(align);
    EXPECT_EQ(w.alignment(), align);
    w.add_tensor_f32("x", ggml_type::f32, {3}, {1, 2, 3});
    w.add_tensor_f32("y", ggml_type::f32, {5}, {1, 2, 3, 4, 5});
    const std::string path = (dir / ("a" + std::to_string(align) + ".gguf")).string();
    w.write(path);
    gguf_file f(path);
    EXPECT_EQ(f.alignment(), align);
    for (const auto& t : f.tensors()) EXPECT_EQ(size_t(t.data - f.mapping()->data()) % align, 0u) << align;
    float y4;
    std::memcpy(&y4, f.find_tensor("y")->data + 16, 4);
    EXPECT_EQ(y4, 5.0f);
  }
  gguf_writer w;
  for (uint32_t bad : {0u, 1u, 4u, 48u, 1u << 21}) EXPECT_THROW(w.set_alignment(bad), engine_error) << bad;
}

TEST(GgufRoundTrip, SettingAKeyAgainReplacesIt) {
  const auto dir = test::temp_dir("gguf-replace");
  gguf_writer w;
  w.set_u32("k", 1);
  w.set_string("other", "x");
  w.set_string("k", "now a string");
  EXPECT_EQ(w.n_metadata(), 2u);
  const std::string path = (dir / "r.gguf").string();
  w.write(path);
  gguf_file f(path);
  EXPECT_EQ(f.metadata()[0].first, "k");
  EXPECT_EQ(f.get_string("k"), "now a string");
}

TEST(GgufRoundTrip, EmptyFile) {
  const auto dir = test::temp_dir("gguf-empty");
  const std::string path = (dir / "e.gguf").string();
  EXPECT_EQ(gguf_writer().write(path), 32u);  // 24-byte header padded to the alignment
  gguf_file f(path);
  EXPECT_TRUE(f.metadata().empty());
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufWriter, RejectsMisuse) {
  gguf_writer w;
  EXPECT_THROW(w.add_tensor("a", ggml_type::f32, {4}, bytes(15)), engine_error);      // wrong size
  EXPECT_THROW(w.add_tensor("a", ggml_type::q8_0, {48}, bytes(51)), engine_error);    // not a block multiple
  EXPECT_THROW(w.add_tensor("a", ggml_type::f32, {}, bytes(4)), engine_error);        // no dims
  EXPECT_THROW(w.add_tensor("a", ggml_type::f32, {1, 1, 1, 1, 1}, bytes(4)), engine_error);
  EXPECT_THROW(w.add_tensor("a", ggml_type::f32, {0}, bytes(0)), engine_error);
  EXPECT_THROW(w.add_tensor_f32("a", ggml_type::f32, {4}, {1, 2, 3}), engine_error);  // value count
  w.add_tensor("a", ggml_type::f32, {1}, bytes(4));
  EXPECT_THROW(w.add_tensor("a", ggml_type::f32, {1}, bytes(4)), engine_error);       // duplicate
  EXPECT_THROW(w.set_int_array("k", gguf_vtype::u8, {256}), engine_error);
  EXPECT_THROW(w.set_int_array("k", gguf_vtype::string, {1}), engine_error);
  const std::string bad = "/nonexistent-dir/x.gguf";
  EXPECT_CONTAINS(load_error(bad, [&] { w.write(bad); }), "cannot write");
}

// ---------------------------------------------------------------- damaged files

TEST(GgufBadInput, WrongMagicAndVersion) {
  const auto dir = test::temp_dir("gguf-bad-header");
  const std::string path = write_small(dir);
  const bytes good = read_bytes(path);
  const std::string bad = (dir / "bad.gguf").string();

  bytes b = good;
  b[0] = 'X';
  write_bytes(bad, b);
  EXPECT_CONTAINS(gguf_error(bad), "bad magic");
  for (uint32_t v : {0u, 1u, 4u, 99u, 0xffffffffu}) {
    b = good;
    poke<uint32_t>(b, 4, v);
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "unsupported GGUF version " + std::to_string(v));
  }
  b = good;
  poke<uint32_t>(b, 4, 2);  // v2 has the same layout as v3
  write_bytes(bad, b);
  EXPECT_EQ(gguf_file(bad).version(), 2u);
  write_bytes(bad, {});
  EXPECT_CONTAINS(gguf_error(bad), "bad magic");
  EXPECT_CONTAINS(gguf_error((dir / "does-not-exist.gguf").string()), "cannot open");
}

// Truncating a complete random model at every byte offset: every prefix must be rejected
// with an error naming the file, by the parser and by the model loader.
TEST(GgufBadInput, TruncatedAtEveryOffset) {
  const auto dir = test::temp_dir("gguf-truncate");
  auto spec = tiny_spec(model_arch::llama, ggml_type::q8_0);
  spec.dim = 32;
  spec.n_layers = 1;
  spec.n_heads = 2;
  spec.n_kv_heads = 1;
  spec.ffn_dim = 32;
  spec.n_vocab = 300;
  const std::string full = (dir / "full.gguf").string();
  write_random_model(spec, full);
  ASSERT_NO_THROW(load_model(full));
  // The cut copies live in a memfd (fast to shrink); its /proc path is what errors name.
  const bytes content = read_bytes(full);
  const int fd = ::memfd_create("cut.gguf", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, content.data(), content.size()), ssize_t(content.size()));
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const size_t size = content.size();
  ASSERT_LT(size, 64u * 1024) << "keep this model small: the test parses it `size` times";
  size_t data_end = 0;  // the padding after the last tensor's bytes is not needed
  {
    gguf_file f(full);
    for (const auto& t : f.tensors()) data_end = std::max(data_end, size_t(t.data - f.mapping()->data()) + t.nbytes);
  }
  ASSERT_GT(size, data_end);
  ASSERT_EQ(::ftruncate(fd, off_t(data_end)), 0);
  EXPECT_NO_THROW(load_model(path));
  for (size_t n = data_end; n-- > 0;) {
    ASSERT_EQ(::ftruncate(fd, off_t(n)), 0);
    gguf_error(path);
    load_error(path, [&] { load_model(path); });
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "at truncation length " << n << " of " << size;
      break;
    }
  }
  ::close(fd);
}

TEST(GgufBadInput, TensorDataOutsideTheFile) {
  const auto dir = test::temp_dir("gguf-bad-offset");
  const bytes good = read_bytes(write_small(dir));
  const std::string bad = (dir / "bad.gguf").string();
  const auto ti = find_tensor_info(good, "tensor_b");
  for (uint64_t off : {uint64_t(32 * 1024), uint64_t(1) << 63, ~uint64_t(0) - 31, uint64_t(64)}) {
    bytes b = good;
    poke<uint64_t>(b, ti.offset, off);
    write_bytes(bad, b);
    // 64 puts tensor_b's 16 bytes just past the (padded) end of the data.
    EXPECT_CONTAINS(gguf_error(bad), "runs past the end") << off;
  }
  bytes b = good;
  poke<uint64_t>(b, ti.offset, 33);
  write_bytes(bad, b);
  EXPECT_CONTAINS(gguf_error(bad), "not a multiple of the alignment 32");
}

TEST(GgufBadInput, BadTensorTypeAndShape) {
  const auto dir = test::temp_dir("gguf-bad-tensor");
  const bytes good = read_bytes(write_small(dir));
  const std::string bad = (dir / "bad.gguf").string();
  const auto ti = find_tensor_info(good, "tensor_a");
  for (uint32_t t : {3u, 13u, 31u, 0xffffffffu}) {
    bytes b = good;
    poke<uint32_t>(b, ti.type, t);
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "unknown or unsupported type " + std::to_string(t));
  }
  for (uint32_t nd : {0u, 5u, 1000u}) {
    bytes b = good;
    poke<uint32_t>(b, ti.n_dims, nd);
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), std::to_string(nd) + " dimensions");
  }
  for (uint64_t ne : {uint64_t(0), (uint64_t(1) << 40) + 1, ~uint64_t(0)}) {
    bytes b = good;
    poke<uint64_t>(b, ti.ne0, ne);
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "invalid dimension 0");
  }
  {  // Q8_0 with a first dimension that is not a multiple of 32
    bytes b = good;
    poke<uint32_t>(b, ti.type, 8);
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "not a multiple of the block size 32");
  }
  {  // dims whose byte size wraps 128-bit arithmetic to 0: 2^40 * 4 bytes * 2^40 * 2^40 * 2^6
    gguf_writer w;
    w.add_tensor_f32("big", ggml_type::f32, {1, 1, 1, 1}, {1});
    const std::string p = (dir / "wrap.gguf").string();
    w.write(p);
    bytes b = read_bytes(p);
    const auto t = find_tensor_info(b, "big");
    poke<uint64_t>(b, t.ne0, uint64_t(1) << 40);
    poke<uint64_t>(b, t.ne0 + 8, uint64_t(1) << 40);
    poke<uint64_t>(b, t.ne0 + 16, uint64_t(1) << 40);
    poke<uint64_t>(b, t.ne0 + 24, uint64_t(1) << 6);
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "runs past the end");
  }
}

TEST(GgufBadInput, HugeCountsAndLengths) {
  const auto dir = test::temp_dir("gguf-bad-counts");
  const bytes good = read_bytes(write_small(dir));
  const std::string bad = (dir / "bad.gguf").string();
  for (uint64_t n : {uint64_t(1000000), uint64_t(1) << 62, ~uint64_t(0)}) {
    bytes b = good;
    poke<uint64_t>(b, 8, n);  // tensor count
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "tensor count");
    b = good;
    poke<uint64_t>(b, 16, n);  // metadata count
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "metadata count");
    b = good;
    poke<uint64_t>(b, after_string(good, "test.strings") + 8, n);  // array length
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "array of " + std::to_string(n) + " elements runs past the end");
    b = good;
    poke<uint64_t>(b, after_string(good, "general.architecture") + 4, n);  // string length
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "runs past the end");
    b = good;
    poke<uint64_t>(b, 24, n);  // the first key's length
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), "string length");
  }
  bytes b = good;  // a key length that reaches exactly one byte past the end
  poke<uint64_t>(b, 24, b.size() - 24 - 8 + 1);
  write_bytes(bad, b);
  EXPECT_CONTAINS(gguf_error(bad), "runs past the end");
}

TEST(GgufBadInput, BadMetadataValues) {
  const auto dir = test::temp_dir("gguf-bad-values");
  const bytes good = read_bytes(write_small(dir));
  const std::string bad = (dir / "bad.gguf").string();
  auto with = [&](const std::string& key, size_t delta, auto value, const std::string& want) {
    bytes b = good;
    poke(b, after_string(good, key) + delta, value);
    write_bytes(bad, b);
    EXPECT_CONTAINS(gguf_error(bad), want) << key;
  };
  with("test.u32", 0, uint32_t(13), "unknown value type 13");
  with("test.u32", 0, uint32_t(0xffffffff), "unknown value type");
  with("test.u64", 4, uint64_t(1) << 63, "out of range");  // u64 above INT64_MAX
  with("test.u64", 4, ~uint64_t(0), "out of range");
  with("test.bool", 4, uint8_t(2), "bool value 2");
  with("test.strings", 4, uint32_t(13), "unknown array element type 13");
  // Nested arrays: make the inner one an array of arrays, and so on, past the depth limit.
  bytes b = good;
  const size_t inner_type = after_string(good, "test.nested") + 4 + 4 + 8;  // inner elem type
  poke<uint32_t>(b, inner_type, uint32_t(gguf_vtype::array));
  write_bytes(bad, b);
  gguf_error(bad);  // i32 payload now read as array headers: must fail cleanly

  // Arrays nested 5 deep (the reader allows 4).
  const std::string deep = write_small(dir, [](gguf_writer& w) {
    bytes p;
    for (int i = 0; i < 4; ++i) p = le_bytes(p, uint32_t(gguf_vtype::array), uint64_t(1));
    w.set_raw("test.deep", gguf_vtype::array, le_bytes(p, uint32_t(gguf_vtype::i32), uint64_t(1), 7));
  });
  EXPECT_CONTAINS(gguf_error(deep), "nested too deeply");
}

TEST(GgufBadInput, BadAlignment) {
  const auto dir = test::temp_dir("gguf-bad-align");
  auto write_with = [&](const std::function<void(gguf_writer&)>& f) {
    const std::string p = write_small(dir, f);
    const std::string bad = (dir / "bad.gguf").string();
    std::filesystem::rename(p, bad);
    return gguf_error(bad);
  };
  for (uint32_t a : {0u, 1u, 3u, 4u, 48u, 1u << 21}) {
    EXPECT_CONTAINS(write_with([a](gguf_writer& w) { w.set_u32("general.alignment", a); }),
                    "general.alignment must be a power of two in 8..1048576 (got " + std::to_string(a) + ")");
  }
  EXPECT_CONTAINS(write_with([](gguf_writer& w) { w.set_bool("general.alignment", true); }),
                  "general.alignment must be");
  EXPECT_CONTAINS(write_with([](gguf_writer& w) { w.set_string("general.alignment", "32"); }),
                  "general.alignment must be");
  EXPECT_CONTAINS(write_with([](gguf_writer& w) { w.set_i32("general.alignment", -32); }),
                  "general.alignment must be");
}

TEST(GgufBadInput, DuplicateKeysAndTensors) {
  const auto dir = test::temp_dir("gguf-dup");
  const std::string path = write_small(dir, [](gguf_writer& w) {
    w.set_u32("dup.key_a", 1);
    w.set_u32("dup.key_b", 2);
  });
  const bytes good = read_bytes(path);
  const std::string bad = (dir / "bad.gguf").string();
  bytes b = good;
  b[after_string(good, "dup.key_b") - 1] = 'a';
  write_bytes(bad, b);
  EXPECT_CONTAINS(gguf_error(bad), "duplicate metadata key 'dup.key_a'");
  b = good;
  b[after_string(good, "tensor_b") - 1] = 'a';
  write_bytes(bad, b);
  EXPECT_CONTAINS(gguf_error(bad), "duplicate tensor name 'tensor_a'");
}

// A llama GGUF built from the random-model plan, minus one key or with one tensor
// changed, for the loader's checks.
namespace {
std::string write_llama_variant(const std::filesystem::path& dir, const std::string& drop_key,
                                const std::string& drop_tensor, const std::string& reshape_tensor) {
  const auto spec = tiny_spec();
  const auto c = random_model_config(spec);
  gguf_writer w;
  auto u32 = [&](const std::string& k, int64_t v) {
    if (k != drop_key) w.set_u32(k, uint32_t(v));
  };
  if (drop_key != "general.architecture") w.set_string("general.architecture", "llama");
  u32("llama.context_length", c.n_ctx);
  u32("llama.embedding_length", c.dim);
  u32("llama.block_count", c.n_layers);
  u32("llama.feed_forward_length", c.ffn_dim);
  u32("llama.attention.head_count", c.n_heads);
  u32("llama.attention.head_count_kv", c.n_kv_heads);
  for (const auto& p : random_model_tensors(spec)) {
    if (p.name == drop_tensor) continue;
    std::vector<int64_t> ne = p.ne;
    if (p.name == reshape_tensor) ne[0] += ne[0] % 2 ? -1 : 2;
    std::vector<float> v(static_cast<size_t>(ne[0] * (ne.size() > 1 ? ne[1] : 1)), 0.5f);
    w.add_tensor_f32(p.name, p.type, ne, v);
  }
  const std::string path = (dir / "variant.gguf").string();
  w.write(path);
  return path;
}
}  // namespace

TEST(GgufBadInput, LoaderRejectsMissingKeysAndTensorsAndBadShapes) {
  const auto dir = test::temp_dir("gguf-loader");
  ASSERT_NO_THROW(load_model(write_llama_variant(dir, "", "", "")));
  for (const char* key : {"general.architecture", "llama.context_length", "llama.embedding_length",
                          "llama.block_count", "llama.feed_forward_length", "llama.attention.head_count"}) {
    const std::string p = write_llama_variant(dir, key, "", "");
    EXPECT_CONTAINS(load_error(p, [&] { load_model(p); }), std::string("missing metadata key '") + key + "'");
  }
  for (const char* t : {"token_embd.weight", "blk.1.attn_k.weight", "blk.0.ffn_norm.weight", "output_norm.weight"}) {
    const std::string p = write_llama_variant(dir, "", t, "");
    EXPECT_CONTAINS(load_error(p, [&] { load_model(p); }), t);
  }
  for (const char* t : {"blk.0.attn_q.weight", "blk.1.ffn_down.weight", "blk.0.attn_norm.weight", "output.weight"}) {
    const std::string p = write_llama_variant(dir, "", "", t);
    EXPECT_CONTAINS(load_error(p, [&] { load_model(p); }), std::string("tensor '") + t + "' has shape");
  }
}

// A block_count far beyond the tensors present must be an engine_error before anything is
// sized by it (found by fuzz-gguf: the loader allocated n_layers layer slots first).
TEST(GgufBadInput, LoaderRejectsHugeBlockCount) {
  const auto dir = test::temp_dir("gguf-block-count");
  bytes b = read_bytes(write_llama_variant(dir, "", "", ""));
  const std::string bad = (dir / "bad.gguf").string();
  for (uint32_t n : {3u, 1000u, 0xffffffffu}) {
    poke<uint32_t>(b, after_string(b, "llama.block_count") + 4, n);
    write_bytes(bad, b);
    load_error(bad, [&] { load_model(bad); });
  }
}

// ---------------------------------------------------------------- random models

TEST(RandomModel, LoadsForEveryArchAndType) {
  const auto dir = test::temp_dir("random-all");
  for (model_arch arch : {model_arch::llama, model_arch::qwen2, model_arch::gpt2}) {
    for (ggml_type type : {ggml_type::f32, ggml_type::f16, ggml_type::bf16, ggml_type::q8_0, ggml_type::q4_0}) {
      for (bool tie : {false, true}) {
        auto spec = tiny_spec(arch, type);
        spec.tie_output = tie;
        const std::string what = std::string(model_arch_name(arch)) + "/" + ggml_traits(type).name + (tie ? "/tied" : "");
        const std::string path = (dir / "m.gguf").string();
        const auto sum = write_random_model(spec, path);
        EXPECT_EQ(sum.file_bytes, std::filesystem::file_size(path)) << what;
        gguf_file f(path);
        const auto plans = random_model_tensors(spec);
        ASSERT_EQ(f.tensors().size(), plans.size()) << what;
        int64_t n_params = 0;
        for (const auto& p : plans) {
          const tensor_view* t = f.find_tensor(p.name);
          ASSERT_NE(t, nullptr) << what << " " << p.name;
          EXPECT_EQ(t->type, p.ne.size() == 2 ? type : ggml_type::f32) << what << " " << p.name;
          n_params += t->n_elements();
        }
        EXPECT_EQ(sum.n_params, n_params) << what;
        EXPECT_EQ(f.get_string("general.architecture"), model_arch_name(arch));
        EXPECT_EQ(f.get_string("tokenizer.ggml.model"), arch == model_arch::llama ? "llama" : "gpt2");
        EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")->size(), size_t(spec.n_vocab));

        const auto m = load_model(path);
        auto fields = [](const model_config& c) {
          return std::make_tuple(c.arch, c.n_vocab, c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim,
                                 c.ffn_dim, c.n_ctx, c.rope_dims, c.rope_neox, c.rope_freq_base, c.norm_eps);
        };
        EXPECT_EQ(fields(m->config), fields(random_model_config(spec))) << what;
        EXPECT_EQ(m->output.data == m->tok_embd.data, tie) << what;
        EXPECT_EQ(bool(m->layers[0].bq), arch == model_arch::qwen2) << what;
      }
    }
  }
}

TEST(RandomModel, BitIdenticalEverywhere) {
  const auto dir = test::temp_dir("random-determinism");
  auto spec = tiny_spec(model_arch::llama, ggml_type::f16);
  spec.seed = 42;
  const std::string a = (dir / "a.gguf").string(), b = (dir / "b.gguf").string();
  write_random_model(spec, a);
  write_random_model(spec, b);
  const bytes ba = read_bytes(a);
  EXPECT_EQ(ba, read_bytes(b));
  // Golden hashes: any change to the PRNG, the scales, the vocabulary or the writer's
  // layout changes them (update them only for an intended format change).
  EXPECT_EQ(fnv1a(ba), 0xd1d3c13fc2eb61e1ull) << std::hex << fnv1a(ba);
  spec.arch = model_arch::gpt2;
  spec.n_kv_heads = 4;
  spec.type = ggml_type::q8_0;
  write_random_model(spec, a);
  EXPECT_EQ(fnv1a(read_bytes(a)), 0x2256479a3ab675ceull) << std::hex << fnv1a(read_bytes(a));
  spec.seed = 43;
  write_random_model(spec, b);
  EXPECT_NE(read_bytes(a), read_bytes(b));
}

TEST(RandomModel, ValuesHaveThePlannedStatistics) {
  const auto spec = tiny_spec(model_arch::qwen2);
  for (const auto& p : random_model_tensors(spec)) {
    const auto v = random_tensor_values(spec, p.name);
    double sum = 0, sq = 0;
    float lo = v[0], hi = v[0];
    for (float x : v) {
      sum += x;
      sq += double(x) * x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    const double n = double(v.size()), mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    const double half = p.stddev * std::sqrt(3.0);
    EXPECT_GE(lo, p.mean - half * 1.0001) << p.name;
    EXPECT_LE(hi, p.mean + half * 1.0001) << p.name;
    EXPECT_NEAR(mean, p.mean, 4 * p.stddev / std::sqrt(n) + 1e-7) << p.name;
    EXPECT_NEAR(sd, p.stddev, p.stddev * (n > 1000 ? 0.05 : 0.35)) << p.name;
    EXPECT_GT(sd, 0) << p.name;  // every tensor (norms, biases) differs from a constant
  }
  EXPECT_THROW(random_tensor_values(spec, "no.such.tensor"), engine_error);
}

TEST(RandomModel, StoredTensorsAreTheConvertedValues) {
  const auto dir = test::temp_dir("random-values");
  for (ggml_type type : {ggml_type::f32, ggml_type::f16, ggml_type::q4_0}) {
    const auto spec = tiny_spec(model_arch::llama, type);
    const std::string path = (dir / "m.gguf").string();
    write_random_model(spec, path);
    gguf_file f(path);
    for (const char* name : {"blk.1.attn_k.weight", "output_norm.weight", "token_embd.weight"}) {
      const auto v = random_tensor_values(spec, name);
      const tensor_view* t = f.find_tensor(name);
      ASSERT_NE(t, nullptr);
      bytes want(t->nbytes);
      for (int64_t r = 0; r < t->rows(); ++r) {
        quantize_row_ref(t->type, v.data() + r * t->ne[0], want.data() + size_t(r) * t->row_bytes(), t->ne[0]);
      }
      EXPECT_EQ(std::memcmp(want.data(), t->data, t->nbytes), 0) << name << " " << ggml_traits(type).name;
    }
  }
}

TEST(RandomModel, RejectsBadSpecs) {
  const auto dir = test::temp_dir("random-bad");
  const std::string path = (dir / "x.gguf").string();
  auto err = [&](const std::function<void(random_model_spec&)>& change) {
    auto s = tiny_spec();
    change(s);
    try {
      write_random_model(s, path);
    } catch (const engine_error& e) {
      return std::string(e.what());
    }
    ADD_FAILURE() << "accepted";
    return std::string();
  };
  EXPECT_CONTAINS(err([](auto& s) { s.dim = 66; }), "not a multiple of n_heads");
  EXPECT_CONTAINS(err([](auto& s) { s.n_kv_heads = 3; }), "not a multiple of n_kv_heads");
  EXPECT_CONTAINS(err([](auto& s) { s.n_kv_heads = 8; }), "not a multiple of n_kv_heads");
  EXPECT_CONTAINS(err([](auto& s) { s.dim = 60; s.n_heads = 4; s.n_kv_heads = 4; s.dim = 4 * 15; }), "must be even");
  EXPECT_CONTAINS(err([](auto& s) { s.type = ggml_type::q8_0; s.ffn_dim = 100; }), "multiples of 32");
  EXPECT_CONTAINS(err([](auto& s) { s.type = ggml_type::q4_0; s.dim = 48; s.n_heads = 4; }), "multiples of 32");
  EXPECT_CONTAINS(err([](auto& s) { s.n_vocab = 100; }), "n_vocab");
  EXPECT_CONTAINS(err([](auto& s) { s.n_layers = 0; }), "n_layers");
  EXPECT_CONTAINS(err([](auto& s) { s.dim = -1; }), "dim");
  EXPECT_CONTAINS(err([](auto& s) { s.rope_freq_base = 0; }), "rope_freq_base");
  EXPECT_CONTAINS(err([](auto& s) { s.qk_bias_scale = 4; }), "needs --arch qwen2");
  EXPECT_FALSE(std::filesystem::exists(path));
}

// qk_bias_scale scales exactly the query/key biases of qwen2 and nothing else.
TEST(RandomModel, QkBiasScaleScalesOnlyTheQueryKeyBiases) {
  auto a = tiny_spec(model_arch::qwen2), b = a;
  b.qk_bias_scale = 40.f;
  const auto pa = random_model_tensors(a), pb = random_model_tensors(b);
  ASSERT_EQ(pa.size(), pb.size());
  int scaled = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    const bool qk = pa[i].name.find("attn_q.bias") != std::string::npos ||
                    pa[i].name.find("attn_k.bias") != std::string::npos;
    EXPECT_FLOAT_EQ(pb[i].stddev, qk ? 40.f * pa[i].stddev : pa[i].stddev) << pa[i].name;
    scaled += qk;
  }
  EXPECT_EQ(scaled, 2 * a.n_layers);
}

TEST(RandomModel, WithoutTokenizerAnyVocabSize) {
  const auto dir = test::temp_dir("random-no-tok");
  auto spec = tiny_spec(model_arch::gpt2);
  spec.n_vocab = 10;
  spec.with_tokenizer = false;
  const std::string path = (dir / "m.gguf").string();
  write_random_model(spec, path);
  gguf_file f(path);
  EXPECT_EQ(f.find("tokenizer.ggml.model"), nullptr);
  EXPECT_EQ(load_model(path)->config.n_vocab, 10);
}

TEST(SyntheticVocab, SentencePieceIsWellFormed) {
  for (int64_t n : {300, 1000, 32000}) {
    const auto v = make_spm_vocab(n);
    ASSERT_EQ(int64_t(v.tokens.size()), n);
    ASSERT_EQ(v.scores.size(), v.tokens.size());
    ASSERT_EQ(v.token_types.size(), v.tokens.size());
    EXPECT_EQ(v.tokens[0], "<unk>");
    EXPECT_EQ(v.tokens[1], "<s>");
    EXPECT_EQ(v.tokens[2], "</s>");
    EXPECT_EQ(v.token_types[0], 2);
    EXPECT_EQ(v.token_types[1], 3);
    EXPECT_EQ(v.tokens[3 + 0x0a], "<0x0A>");
    EXPECT_EQ(v.tokens[3 + 0xff], "<0xFF>");
    for (int b = 0; b < 256; ++b) EXPECT_EQ(v.token_types[size_t(3 + b)], 6);
    EXPECT_EQ(v.tokens[259], "\xe2\x96\x81");
    EXPECT_EQ(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size(), v.tokens.size());
    // Every multi-char normal piece is reachable: the piece minus its last char exists.
    const std::set<std::string> all(v.tokens.begin(), v.tokens.end());
    for (size_t i = 260; i < v.tokens.size(); ++i) {
      const std::string& t = v.tokens[i];
      if (t.size() > 1 && t != "\xe2\x96\x81") {
        EXPECT_TRUE(all.count(t.substr(0, t.size() - 1))) << t;
      }
      EXPECT_LT(v.scores[i], v.scores[i - 1]) << i;  // earlier pieces merge first
    }
    if (n >= 1000) {
      EXPECT_TRUE(all.count("\xe2\x96\x81the") && all.count("ing"));
    }
  }
}

TEST(SyntheticVocab, BytePairIsWellFormed) {
  for (int64_t n : {300, 5000, 50257}) {
    const auto v = make_bpe_vocab(n);
    ASSERT_EQ(int64_t(v.tokens.size()), n);
    EXPECT_EQ(v.tokens.back(), "<|endoftext|>");
    EXPECT_EQ(v.token_types.back(), 3);
    EXPECT_EQ(v.eos_id, n - 1);
    EXPECT_EQ(v.tokens[0], "!");
    EXPECT_EQ(v.tokens[32], "A");
    EXPECT_EQ(v.tokens[188], "\xc4\x80");  // byte 0 -> U+0100
    EXPECT_EQ(v.tokens[188 + 32], "\xc4\xa0");  // byte 32 (space) -> U+0120 'Ġ'
    EXPECT_EQ(int64_t(v.merges.size()), n - 257);
    const std::set<std::string> all(v.tokens.begin(), v.tokens.end());
    EXPECT_EQ(all.size(), v.tokens.size());
    for (size_t i = 0; i < v.merges.size(); ++i) {
      const std::string& m = v.merges[i];
      const size_t sp = m.find(' ');
      ASSERT_NE(sp, std::string::npos) << m;
      EXPECT_TRUE(all.count(m.substr(0, sp))) << m;
      EXPECT_TRUE(all.count(m.substr(sp + 1))) << m;
      EXPECT_EQ(v.tokens[256 + i], m.substr(0, sp) + m.substr(sp + 1)) << m;  // merge i makes token 256+i
    }
  }
}
