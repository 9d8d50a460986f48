// test-gguf.cpp: the GGUF writer and reader together (every value and tensor type round
// trips), the reader against damaged files (every defect throws engine_error naming the
// file, never crashes). The random-model generator: test-random-model.cpp. Needs no shared
// files.
#include <gtest/gtest.h>

#include "gguf-test-util.h"

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
  for (uint32_t t : {3u, 15u, 31u, 0xffffffffu}) {  // 15: Q8_K, never a stored type
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
