// gguf-reader.h: reads a GGUF (v2/v3) file: metadata key/values and tensor infos, with the
// tensor data used in place from a memory map. Every read is bounds-checked; any defect
// (bad magic, truncation, offsets past the end, unknown tensor type, bad shapes) throws
// engine_error "PATH: what is wrong". Not for writing: see gguf-writer.h.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mapped-file.h"
#include "tensor-view.h"

namespace kvarena {

enum class gguf_vtype : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
const char* gguf_vtype_name(gguf_vtype t);

// One metadata value. Scalars use the field of their kind; arrays hold their elements in
// the vector of the element kind (ints for all integer types and bool, floats for f32/f64,
// strings, or nested for arrays of arrays).
struct gguf_value {
  gguf_vtype type = gguf_vtype::u8;
  gguf_vtype elem_type = gguf_vtype::u8;  // arrays only
  int64_t i = 0;         // integer types and bool (u64 above INT64_MAX is rejected)
  double f = 0;          // f32/f64
  std::string s;         // string
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<gguf_value> nested;

  bool is_int() const;
  bool is_float() const { return type == gguf_vtype::f32 || type == gguf_vtype::f64; }
  size_t array_size() const;
};

class gguf_file {
 public:
  // Opens, maps and parses; throws engine_error naming the file on any defect.
  explicit gguf_file(const std::string& path);

  const std::string& path() const { return map_->path(); }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  size_t file_size() const { return map_->size(); }
  size_t data_offset() const { return data_offset_; }

  // Metadata in file order, and lookup.
  const std::vector<std::pair<std::string, gguf_value>>& metadata() const { return kv_; }
  const gguf_value* find(const std::string& key) const;

  // Typed getters: nullopt when absent; throw when present with an incompatible type.
  std::optional<int64_t> get_int(const std::string& key) const;    // any integer type
  std::optional<double> get_float(const std::string& key) const;   // f32/f64 or integer
  std::optional<std::string> get_string(const std::string& key) const;
  std::optional<bool> get_bool(const std::string& key) const;
  const std::vector<std::string>* get_string_array(const std::string& key) const;
  const std::vector<int64_t>* get_int_array(const std::string& key) const;
  const std::vector<double>* get_float_array(const std::string& key) const;
  // Same, but a missing key throws "PATH: missing metadata key 'KEY'".
  int64_t require_int(const std::string& key) const;
  std::string require_string(const std::string& key) const;

  const std::vector<tensor_view>& tensors() const { return tensors_; }
  const tensor_view* find_tensor(const std::string& name) const;

  // Keeps the mapping alive for views handed out (a model holds this).
  std::shared_ptr<const mapped_file> mapping() const { return map_; }

  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::shared_ptr<mapped_file> map_;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  size_t data_offset_ = 0;
  std::vector<std::pair<std::string, gguf_value>> kv_;
  std::map<std::string, size_t> kv_index_;
  std::vector<tensor_view> tensors_;
  std::map<std::string, size_t> tensor_index_;
};

}  // namespace kvarena
