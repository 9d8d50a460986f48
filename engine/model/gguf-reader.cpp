// gguf-reader.cpp: bounds-checked GGUF parser. A cursor walks the mapped bytes; every
// read checks the remaining size first, and every count is checked against the bytes
// left before anything is allocated, so a hostile file cannot make us allocate or read
// beyond its size.
#include "gguf-reader.h"

#include <cstring>
#include <limits>

#include "engine-error.h"

namespace kvarena {

namespace {

constexpr int k_max_array_depth = 4;

class cursor {
 public:
  cursor(const gguf_file& f, const uint8_t* data, size_t size) : f_(f), data_(data), size_(size) {}

  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }

  void need(size_t n, const char* what) const {
    if (n > left()) {
      f_.fail("truncated file: need " + std::to_string(n) + " bytes for " + what + " at offset " +
              std::to_string(pos_) + ", only " + std::to_string(left()) + " left");
    }
  }
  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(const char* what) {
    const uint64_t n = read<uint64_t>(what);
    if (n > left()) {
      f_.fail(std::string("string length ") + std::to_string(n) + " for " + what + " at offset " +
              std::to_string(pos_ - 8) + " runs past the end of the file");
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), size_t(n));
    pos_ += size_t(n);
    return s;
  }

 private:
  const gguf_file& f_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

size_t scalar_size(gguf_vtype t) {
  switch (t) {
    case gguf_vtype::u8: case gguf_vtype::i8: case gguf_vtype::boolean: return 1;
    case gguf_vtype::u16: case gguf_vtype::i16: return 2;
    case gguf_vtype::u32: case gguf_vtype::i32: case gguf_vtype::f32: return 4;
    case gguf_vtype::u64: case gguf_vtype::i64: case gguf_vtype::f64: return 8;
    case gguf_vtype::string: return 8;  // at least the length prefix
    case gguf_vtype::array: return 12;  // at least type + count
  }
  return 1;
}

bool valid_vtype(uint32_t t) { return t <= 12; }

void read_value(const gguf_file& f, cursor& c, gguf_vtype type, gguf_value& out,
                const std::string& key, int depth);

void read_scalar_into(const gguf_file& f, cursor& c, gguf_vtype type, const std::string& key,
                      int64_t* i, double* d, std::string* s) {
  const char* what = "metadata value";
  switch (type) {
    case gguf_vtype::u8: *i = c.read<uint8_t>(what); return;
    case gguf_vtype::i8: *i = c.read<int8_t>(what); return;
    case gguf_vtype::u16: *i = c.read<uint16_t>(what); return;
    case gguf_vtype::i16: *i = c.read<int16_t>(what); return;
    case gguf_vtype::u32: *i = c.read<uint32_t>(what); return;
    case gguf_vtype::i32: *i = c.read<int32_t>(what); return;
    case gguf_vtype::i64: *i = c.read<int64_t>(what); return;
    case gguf_vtype::u64: {
      const uint64_t v = c.read<uint64_t>(what);
      if (v > uint64_t(std::numeric_limits<int64_t>::max()))
        f.fail("metadata key '" + key + "': u64 value " + std::to_string(v) + " is out of range");
      *i = int64_t(v);
      return;
    }
    case gguf_vtype::boolean: {
      const uint8_t v = c.read<uint8_t>(what);
      if (v > 1) f.fail("metadata key '" + key + "': bool value " + std::to_string(v) + " is not 0 or 1");
      *i = v;
      return;
    }
    case gguf_vtype::f32: *d = c.read<float>(what); return;
    case gguf_vtype::f64: *d = c.read<double>(what); return;
    case gguf_vtype::string: *s = c.read_string(what); return;
    case gguf_vtype::array: break;
  }
  KV_ASSERT(false && "read_scalar_into: array");
}

void read_value(const gguf_file& f, cursor& c, gguf_vtype type, gguf_value& out,
                const std::string& key, int depth) {
  out.type = type;
  if (type != gguf_vtype::array) {
    read_scalar_into(f, c, type, key, &out.i, &out.f, &out.s);
    return;
  }
  if (depth >= k_max_array_depth) f.fail("metadata key '" + key + "': arrays nested too deeply");
  const uint32_t et = c.read<uint32_t>("array element type");
  if (!valid_vtype(et))
    f.fail("metadata key '" + key + "': unknown array element type " + std::to_string(et));
  out.elem_type = gguf_vtype(et);
  const uint64_t n = c.read<uint64_t>("array length");
  if (n > c.left() / scalar_size(out.elem_type)) {
    f.fail("metadata key '" + key + "': array of " + std::to_string(n) +
           " elements runs past the end of the file");
  }
  switch (out.elem_type) {
    case gguf_vtype::string:
      out.strings.resize(size_t(n));
      for (auto& s : out.strings) s = c.read_string("array string");
      return;
    case gguf_vtype::f32:
    case gguf_vtype::f64:
      out.floats.resize(size_t(n));
      for (auto& v : out.floats) read_scalar_into(f, c, out.elem_type, key, nullptr, &v, nullptr);
      return;
    case gguf_vtype::array:
      out.nested.resize(size_t(n));
      for (auto& v : out.nested) read_value(f, c, gguf_vtype::array, v, key, depth + 1);
      return;
    default:
      out.ints.resize(size_t(n));
      for (auto& v : out.ints) read_scalar_into(f, c, out.elem_type, key, &v, nullptr, nullptr);
      return;
  }
}

}  // namespace

const char* gguf_vtype_name(gguf_vtype t) {
  static const char* names[] = {"u8",  "i8",     "u16",   "i16", "u32", "i32", "f32",
                                "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = uint32_t(t);
  return i < 13 ? names[i] : "unknown";
}

bool gguf_value::is_int() const {
  switch (type) {
    case gguf_vtype::u8: case gguf_vtype::i8: case gguf_vtype::u16: case gguf_vtype::i16:
    case gguf_vtype::u32: case gguf_vtype::i32: case gguf_vtype::u64: case gguf_vtype::i64:
    case gguf_vtype::boolean:
      return true;
    default:
      return false;
  }
}

size_t gguf_value::array_size() const {
  return ints.size() + floats.size() + strings.size() + nested.size();
}

void gguf_file::fail(const std::string& what) const { fail_file(path(), what); }

gguf_file::gguf_file(const std::string& path) : map_(std::make_shared<mapped_file>(path)) {
  cursor c(*this, map_->data(), map_->size());
  if (map_->size() < 4 || std::memcmp(map_->data(), "GGUF", 4) != 0) {
    fail("not a GGUF file (bad magic: expected 'GGUF' in the first 4 bytes)");
  }
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    fail("unsupported GGUF version " + std::to_string(version_) + " (supported: 2, 3)");
  }
  const uint64_t n_tensors = c.read<uint64_t>("tensor count");
  const uint64_t n_kv = c.read<uint64_t>("metadata count");
  // Each metadata pair needs >= 8 (key len) + 4 (type) + 1 bytes; each tensor info >= 8+4+8+4+8.
  if (n_kv > c.left() / 13) fail("metadata count " + std::to_string(n_kv) + " is larger than the file can hold");
  if (n_tensors > c.left() / 32) fail("tensor count " + std::to_string(n_tensors) + " is larger than the file can hold");

  kv_.reserve(size_t(n_kv));
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key = c.read_string("metadata key");
    const uint32_t t = c.read<uint32_t>("metadata value type");
    if (!valid_vtype(t)) fail("metadata key '" + key + "' has unknown value type " + std::to_string(t));
    gguf_value v;
    read_value(*this, c, gguf_vtype(t), v, key, 0);
    if (kv_index_.count(key)) fail("duplicate metadata key '" + key + "'");
    kv_index_[key] = kv_.size();
    kv_.emplace_back(std::move(key), std::move(v));
  }

  // The GGUF spec asks for a multiple of 8; below that, F32 tensor data could be unaligned
  // for the kernels.
  if (const gguf_value* a = find("general.alignment")) {
    if (!a->is_int() || a->type == gguf_vtype::boolean || a->i < 8 || (a->i & (a->i - 1)) != 0 || a->i > (1 << 20)) {
      fail("general.alignment must be a power of two in 8..1048576 (got " +
           (a->is_int() ? std::to_string(a->i) : std::string(gguf_vtype_name(a->type))) + ")");
    }
    alignment_ = size_t(a->i);
  }

  struct raw_info { std::string name; uint32_t n_dims; int64_t ne[4]; uint32_t type; uint64_t offset; };
  std::vector<raw_info> infos(static_cast<size_t>(n_tensors));
  for (auto& ti : infos) {
    ti.name = c.read_string("tensor name");
    ti.n_dims = c.read<uint32_t>("tensor dimension count");
    if (ti.n_dims < 1 || ti.n_dims > 4)
      fail("tensor '" + ti.name + "' has " + std::to_string(ti.n_dims) + " dimensions (must be 1..4)");
    for (int d = 0; d < 4; ++d) ti.ne[d] = 1;
    for (uint32_t d = 0; d < ti.n_dims; ++d) {
      const uint64_t ne = c.read<uint64_t>("tensor dimension");
      if (ne == 0 || ne > (uint64_t(1) << 40))
        fail("tensor '" + ti.name + "' has invalid dimension " + std::to_string(d) + " = " + std::to_string(ne));
      ti.ne[d] = int64_t(ne);
    }
    ti.type = c.read<uint32_t>("tensor type");
    ti.offset = c.read<uint64_t>("tensor data offset");
  }

  data_offset_ = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (n_tensors > 0 && data_offset_ > map_->size()) {
    fail("truncated file: tensor data should start at offset " + std::to_string(data_offset_) +
         " but the file has " + std::to_string(map_->size()) + " bytes");
  }
  const size_t data_size = data_offset_ <= map_->size() ? map_->size() - data_offset_ : 0;

  tensors_.reserve(infos.size());
  for (const auto& ti : infos) {
    const auto type = ggml_type_from_u32(ti.type);
    if (!type) {
      fail("tensor '" + ti.name + "' has unknown or unsupported type " + std::to_string(ti.type) +
           " (supported: f32=0, f16=1, q4_0=2, q8_0=8, q2_k=10, q3_k=11, q4_k=12, q5_k=13, q6_k=14, "
           "iq4_nl=20, iq4_xs=23, bf16=30)");
    }
    const auto& tr = ggml_traits(*type);
    if (ti.ne[0] % tr.block_elems != 0) {
      fail("tensor '" + ti.name + "' of type " + tr.name + ": first dimension " +
           std::to_string(ti.ne[0]) + " is not a multiple of the block size " + std::to_string(tr.block_elems));
    }
    // Overflow-safe byte size: each factor is <= 2^40 and the running product is checked
    // against the data size (< 2^64) after every step, so it stays below 2^104. (Four
    // factors of 2^40 multiplied unchecked would wrap 128 bits, possibly to 0.)
    unsigned __int128 nbytes = (unsigned __int128)(ti.ne[0] / tr.block_elems) * tr.block_bytes;
    bool too_big = nbytes > data_size;
    for (int d = 1; d < 4 && !too_big; ++d) {
      nbytes *= (unsigned __int128)ti.ne[d];
      too_big = nbytes > data_size;
    }
    if (ti.offset % alignment_ != 0) {
      fail("tensor '" + ti.name + "' data offset " + std::to_string(ti.offset) +
           " is not a multiple of the alignment " + std::to_string(alignment_));
    }
    if (too_big || ti.offset > data_size - size_t(nbytes)) {
      std::string shape;
      for (uint32_t d = 0; d < ti.n_dims; ++d) shape += (d ? ", " : "") + std::to_string(ti.ne[d]);
      fail("tensor '" + ti.name + "' data (offset " + std::to_string(ti.offset) + ", shape {" + shape + "}, type " +
           tr.name + ") runs past the end of the file (" + std::to_string(data_size) + " data bytes)");
    }
    if (tensor_index_.count(ti.name)) fail("duplicate tensor name '" + ti.name + "'");
    tensor_view v;
    v.name = ti.name;
    v.type = *type;
    v.n_dims = int(ti.n_dims);
    for (int d = 0; d < 4; ++d) v.ne[d] = ti.ne[d];
    v.data = map_->data() + data_offset_ + ti.offset;
    v.nbytes = size_t(nbytes);
    tensor_index_[v.name] = tensors_.size();
    tensors_.push_back(std::move(v));
  }
}

const gguf_value* gguf_file::find(const std::string& key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const tensor_view* gguf_file::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::optional<int64_t> gguf_file::get_int(const std::string& key) const {
  const gguf_value* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_int()) fail("metadata key '" + key + "' should be an integer, found " + gguf_vtype_name(v->type));
  return v->i;
}

std::optional<double> gguf_file::get_float(const std::string& key) const {
  const gguf_value* v = find(key);
  if (!v) return std::nullopt;
  if (v->is_float()) return v->f;
  if (v->is_int()) return double(v->i);
  fail("metadata key '" + key + "' should be a number, found " + gguf_vtype_name(v->type));
}

std::optional<std::string> gguf_file::get_string(const std::string& key) const {
  const gguf_value* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != gguf_vtype::string) fail("metadata key '" + key + "' should be a string, found " + gguf_vtype_name(v->type));
  return v->s;
}

std::optional<bool> gguf_file::get_bool(const std::string& key) const {
  const gguf_value* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_int()) fail("metadata key '" + key + "' should be a bool, found " + gguf_vtype_name(v->type));
  return v->i != 0;
}

namespace {
template <typename Vec>
const Vec* array_of(const gguf_file& f, const gguf_value* v, const std::string& key, bool ok,
                    const Vec& vec, const char* want) {
  if (!v) return nullptr;
  if (v->type != gguf_vtype::array || !ok)
    f.fail("metadata key '" + key + "' should be an array of " + want);
  return &vec;
}
}  // namespace

const std::vector<std::string>* gguf_file::get_string_array(const std::string& key) const {
  const gguf_value* v = find(key);
  if (!v) return nullptr;
  return array_of(*this, v, key, v->elem_type == gguf_vtype::string || v->array_size() == 0, v->strings, "strings");
}

const std::vector<int64_t>* gguf_file::get_int_array(const std::string& key) const {
  const gguf_value* v = find(key);
  if (!v) return nullptr;
  gguf_value probe;
  probe.type = v->elem_type;
  return array_of(*this, v, key, probe.is_int() || v->array_size() == 0, v->ints, "integers");
}

const std::vector<double>* gguf_file::get_float_array(const std::string& key) const {
  const gguf_value* v = find(key);
  if (!v) return nullptr;
  const bool ok = v->elem_type == gguf_vtype::f32 || v->elem_type == gguf_vtype::f64 || v->array_size() == 0;
  return array_of(*this, v, key, ok, v->floats, "floats");
}

int64_t gguf_file::require_int(const std::string& key) const {
  auto v = get_int(key);
  if (!v) fail("missing metadata key '" + key + "'");
  return *v;
}

std::string gguf_file::require_string(const std::string& key) const {
  auto v = get_string(key);
  if (!v) fail("missing metadata key '" + key + "'");
  return *v;
}

}  // namespace kvarena
