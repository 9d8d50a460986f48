// gguf-writer.cpp: encodes metadata values as they appear in the file as soon as they are
// set, lays out tensor infos with aligned offsets, and streams tensor data at write time.
#include "gguf-writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "engine-error.h"

namespace kvarena {

namespace {

// Little-endian encoder (x86-64 and aarch64 are little-endian; memcpy of the value is the
// file layout).
class encoder {
 public:
  template <typename T>
  void put(T v) {
    const size_t n = buf_.size();
    buf_.resize(n + sizeof(T));
    std::memcpy(buf_.data() + n, &v, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  void put_bytes(const std::vector<uint8_t>& b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
  void pad_to(size_t alignment) {
    buf_.resize((buf_.size() + alignment - 1) / alignment * alignment, 0);
  }
  std::vector<uint8_t>& bytes() { return buf_; }

 private:
  std::vector<uint8_t> buf_;
};

std::vector<uint8_t> encode_scalar_int(gguf_vtype t, int64_t v, const std::string& key) {
  auto check = [&](int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      throw engine_error("gguf_writer: metadata key '" + key + "': value " + std::to_string(v) +
                         " does not fit type " + gguf_vtype_name(t));
    }
  };
  encoder e;
  switch (t) {
    case gguf_vtype::u8: check(0, 255); e.put<uint8_t>(uint8_t(v)); break;
    case gguf_vtype::i8: check(-128, 127); e.put<int8_t>(int8_t(v)); break;
    case gguf_vtype::u16: check(0, 65535); e.put<uint16_t>(uint16_t(v)); break;
    case gguf_vtype::i16: check(-32768, 32767); e.put<int16_t>(int16_t(v)); break;
    case gguf_vtype::u32: check(0, int64_t(UINT32_MAX)); e.put<uint32_t>(uint32_t(v)); break;
    case gguf_vtype::i32: check(INT32_MIN, INT32_MAX); e.put<int32_t>(int32_t(v)); break;
    case gguf_vtype::u64: check(0, INT64_MAX); e.put<uint64_t>(uint64_t(v)); break;
    case gguf_vtype::i64: e.put<int64_t>(v); break;
    case gguf_vtype::boolean: check(0, 1); e.put<uint8_t>(uint8_t(v)); break;
    default:
      throw engine_error("gguf_writer: metadata key '" + key + "': " + gguf_vtype_name(t) +
                         " is not an integer type");
  }
  return std::move(e.bytes());
}

// The value of an integer-typed encoded scalar, decoded as the reader does; nullopt for
// other types or a short payload.
std::optional<int64_t> payload_int(gguf_vtype t, const std::vector<uint8_t>& p) {
  auto get = [&p](auto x) -> std::optional<int64_t> {
    if (p.size() < sizeof(x)) return std::nullopt;
    std::memcpy(&x, p.data(), sizeof(x));
    return int64_t(x);
  };
  switch (t) {
    case gguf_vtype::u8: return get(uint8_t{});
    case gguf_vtype::i8: return get(int8_t{});
    case gguf_vtype::u16: return get(uint16_t{});
    case gguf_vtype::i16: return get(int16_t{});
    case gguf_vtype::u32: return get(uint32_t{});
    case gguf_vtype::i32: return get(int32_t{});
    case gguf_vtype::u64: return get(uint64_t{});
    case gguf_vtype::i64: return get(int64_t{});
    default: return std::nullopt;
  }
}

size_t checked_alignment(int64_t a, const std::string& what) {
  if (a < 8 || (a & (a - 1)) != 0 || a > (1 << 20))
    throw engine_error("gguf_writer: " + what + " must be a power of two in 8..1048576, got " + std::to_string(a));
  return size_t(a);
}

}  // namespace

void gguf_writer::set(const std::string& key, gguf_vtype type, std::vector<uint8_t> payload) {
  for (auto& e : kv_) {
    if (e.key == key) {
      e.type = type;
      e.payload = std::move(payload);
      return;
    }
  }
  kv_.push_back({key, type, std::move(payload)});
}

void gguf_writer::set_u8(const std::string& k, uint8_t v) { set(k, gguf_vtype::u8, encode_scalar_int(gguf_vtype::u8, v, k)); }
void gguf_writer::set_i8(const std::string& k, int8_t v) { set(k, gguf_vtype::i8, encode_scalar_int(gguf_vtype::i8, v, k)); }
void gguf_writer::set_u16(const std::string& k, uint16_t v) { set(k, gguf_vtype::u16, encode_scalar_int(gguf_vtype::u16, v, k)); }
void gguf_writer::set_i16(const std::string& k, int16_t v) { set(k, gguf_vtype::i16, encode_scalar_int(gguf_vtype::i16, v, k)); }
void gguf_writer::set_i32(const std::string& k, int32_t v) { set(k, gguf_vtype::i32, encode_scalar_int(gguf_vtype::i32, v, k)); }
void gguf_writer::set_i64(const std::string& k, int64_t v) { set(k, gguf_vtype::i64, encode_scalar_int(gguf_vtype::i64, v, k)); }
void gguf_writer::set_bool(const std::string& k, bool v) { set(k, gguf_vtype::boolean, encode_scalar_int(gguf_vtype::boolean, v, k)); }

void gguf_writer::set_u32(const std::string& k, uint32_t v) {
  set(k, gguf_vtype::u32, encode_scalar_int(gguf_vtype::u32, v, k));
}

void gguf_writer::set_u64(const std::string& k, uint64_t v) {
  // u64 is written as is (the reader rejects values above INT64_MAX, which tests rely on).
  encoder e;
  e.put<uint64_t>(v);
  set(k, gguf_vtype::u64, std::move(e.bytes()));
}

void gguf_writer::set_f32(const std::string& k, float v) {
  encoder e;
  e.put<float>(v);
  set(k, gguf_vtype::f32, std::move(e.bytes()));
}

void gguf_writer::set_f64(const std::string& k, double v) {
  encoder e;
  e.put<double>(v);
  set(k, gguf_vtype::f64, std::move(e.bytes()));
}

void gguf_writer::set_string(const std::string& k, const std::string& v) {
  encoder e;
  e.put_string(v);
  set(k, gguf_vtype::string, std::move(e.bytes()));
}

void gguf_writer::set_string_array(const std::string& k, const std::vector<std::string>& v) {
  encoder e;
  e.put<uint32_t>(uint32_t(gguf_vtype::string));
  e.put<uint64_t>(v.size());
  for (const auto& s : v) e.put_string(s);
  set(k, gguf_vtype::array, std::move(e.bytes()));
}

void gguf_writer::set_f32_array(const std::string& k, const std::vector<float>& v) {
  encoder e;
  e.put<uint32_t>(uint32_t(gguf_vtype::f32));
  e.put<uint64_t>(v.size());
  for (float x : v) e.put<float>(x);
  set(k, gguf_vtype::array, std::move(e.bytes()));
}

void gguf_writer::set_f64_array(const std::string& k, const std::vector<double>& v) {
  encoder e;
  e.put<uint32_t>(uint32_t(gguf_vtype::f64));
  e.put<uint64_t>(v.size());
  for (double x : v) e.put<double>(x);
  set(k, gguf_vtype::array, std::move(e.bytes()));
}

void gguf_writer::set_i32_array(const std::string& k, const std::vector<int32_t>& v) {
  encoder e;
  e.put<uint32_t>(uint32_t(gguf_vtype::i32));
  e.put<uint64_t>(v.size());
  for (int32_t x : v) e.put<int32_t>(x);
  set(k, gguf_vtype::array, std::move(e.bytes()));
}

void gguf_writer::set_int_array(const std::string& k, gguf_vtype elem, const std::vector<int64_t>& v) {
  encoder e;
  e.put<uint32_t>(uint32_t(elem));
  e.put<uint64_t>(v.size());
  for (int64_t x : v) e.put_bytes(encode_scalar_int(elem, x, k));
  set(k, gguf_vtype::array, std::move(e.bytes()));
}

void gguf_writer::set_raw(const std::string& k, gguf_vtype type, std::vector<uint8_t> payload) {
  set(k, type, std::move(payload));
}

void gguf_writer::set_alignment(uint32_t alignment) {
  checked_alignment(alignment, "general.alignment");
  set_u32("general.alignment", alignment);
}

size_t gguf_writer::alignment() const {
  // Whatever general.alignment holds decides the layout, however it was set; a value that
  // is not a usable alignment (tests write such files on purpose) falls back to 32.
  for (const auto& e : kv_) {
    if (e.key != "general.alignment") continue;
    const auto v = payload_int(e.type, e.payload);
    if (v && *v >= 8 && (*v & (*v - 1)) == 0 && *v <= (1 << 20)) return size_t(*v);
  }
  return 32;
}

size_t gguf_writer::tensor_bytes(const std::string& name, ggml_type type, const std::vector<int64_t>& ne) {
  if (ne.empty() || ne.size() > 4)
    throw engine_error("gguf_writer: tensor '" + name + "' must have 1..4 dimensions, got " + std::to_string(ne.size()));
  for (int64_t d : ne) {
    if (d <= 0) throw engine_error("gguf_writer: tensor '" + name + "' has a dimension <= 0");
  }
  const auto& tr = ggml_traits(type);
  if (ne[0] % tr.block_elems != 0) {
    throw engine_error("gguf_writer: tensor '" + name + "' of type " + tr.name + ": first dimension " +
                       std::to_string(ne[0]) + " is not a multiple of " + std::to_string(tr.block_elems));
  }
  size_t n = ggml_row_bytes(type, ne[0]);
  for (size_t d = 1; d < ne.size(); ++d) n *= size_t(ne[d]);
  return n;
}

void gguf_writer::add(tensor_entry t) {
  for (const auto& e : tensors_) {
    if (e.name == t.name) throw engine_error("gguf_writer: duplicate tensor '" + t.name + "'");
  }
  tensors_.push_back(std::move(t));
}

void gguf_writer::add_tensor(const std::string& name, ggml_type type, std::vector<int64_t> ne,
                             std::vector<uint8_t> bytes) {
  const size_t n = tensor_bytes(name, type, ne);
  if (bytes.size() != n) {
    throw engine_error("gguf_writer: tensor '" + name + "' needs " + std::to_string(n) + " bytes, got " +
                       std::to_string(bytes.size()));
  }
  add({name, type, std::move(ne), n, std::move(bytes), nullptr});
}

void gguf_writer::add_tensor(const std::string& name, ggml_type type, std::vector<int64_t> ne, fill_fn fill) {
  const size_t n = tensor_bytes(name, type, ne);
  add({name, type, std::move(ne), n, {}, std::move(fill)});
}

void gguf_writer::add_tensor_f32(const std::string& name, ggml_type type, std::vector<int64_t> ne,
                                 const std::vector<float>& values) {
  int64_t n_elem = 1;
  for (int64_t d : ne) n_elem *= d;
  if (int64_t(values.size()) != n_elem) {
    throw engine_error("gguf_writer: tensor '" + name + "' has " + std::to_string(n_elem) + " elements, got " +
                       std::to_string(values.size()) + " values");
  }
  std::vector<uint8_t> bytes(tensor_bytes(name, type, ne));
  const int64_t row = ne[0];
  const size_t row_bytes = ggml_row_bytes(type, row);
  for (int64_t r = 0; r < n_elem / row; ++r) {
    quantize_row_ref(type, values.data() + r * row, bytes.data() + size_t(r) * row_bytes, row);
  }
  add_tensor(name, type, std::move(ne), std::move(bytes));
}

uint64_t gguf_writer::write(const std::string& path) const {
  const size_t align = alignment();
  encoder h;
  h.put<uint32_t>(0x46554747u);  // "GGUF"
  h.put<uint32_t>(3);
  h.put<uint64_t>(tensors_.size());
  h.put<uint64_t>(kv_.size());
  for (const auto& e : kv_) {
    h.put_string(e.key);
    h.put<uint32_t>(uint32_t(e.type));
    h.put_bytes(e.payload);
  }
  uint64_t offset = 0;  // from the start of the data section
  for (const auto& t : tensors_) {
    h.put_string(t.name);
    h.put<uint32_t>(uint32_t(t.ne.size()));
    for (int64_t d : t.ne) h.put<uint64_t>(uint64_t(d));
    h.put<uint32_t>(uint32_t(t.type));
    h.put<uint64_t>(offset);
    offset += (t.nbytes + align - 1) / align * align;
  }
  h.pad_to(align);

  // Written to PATH.tmp and renamed, so PATH is never a half-written file; any failure
  // (including one thrown by a fill callback) removes the temporary.
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail_file(path, std::string("cannot write: ") + std::strerror(errno));
  uint64_t total = 0;
  try {
    auto put = [&](const uint8_t* p, size_t n) {
      if (n && std::fwrite(p, 1, n, f) != n) fail_file(path, std::string("write failed: ") + std::strerror(errno));
      total += n;
    };
    put(h.bytes().data(), h.bytes().size());
    std::vector<uint8_t> buf;
    const uint8_t zeros[64] = {};
    for (const auto& t : tensors_) {
      const uint8_t* src = t.bytes.data();
      if (t.fill) {
        buf.assign(t.nbytes, 0);
        t.fill(buf.data(), t.nbytes);
        src = buf.data();
      }
      put(src, t.nbytes);
      for (size_t pad = (align - t.nbytes % align) % align; pad > 0;) {
        const size_t n = std::min(pad, sizeof(zeros));
        put(zeros, n);
        pad -= n;
      }
    }
    const int rc = std::fclose(f);
    f = nullptr;
    if (rc != 0) fail_file(path, std::string("write failed: ") + std::strerror(errno));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      fail_file(path, std::string("cannot rename the written file into place: ") + std::strerror(errno));
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  return total;
}

}  // namespace kvarena
