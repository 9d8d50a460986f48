// gguf-writer.h: writes GGUF v3 files (little-endian, packed header, tensor data aligned
// to `general.alignment`, default 32). Used by the random-model generator, the CLI and the
// tests; everything it writes round-trips through gguf_file (gguf-reader.h).
// Not a general editor: it builds a file from scratch, then writes it once.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "ggml-types.h"
#include "gguf-reader.h"

namespace kvarena {

class gguf_writer {
 public:
  // Fills a tensor's data (exactly its byte size) when write() reaches it, so large models
  // are generated one tensor at a time instead of being held in memory whole.
  using fill_fn = std::function<void(uint8_t* dst, size_t nbytes)>;

  // Metadata, in insertion order. Setting a key again replaces its value in place.
  void set_u8(const std::string& key, uint8_t v);
  void set_i8(const std::string& key, int8_t v);
  void set_u16(const std::string& key, uint16_t v);
  void set_i16(const std::string& key, int16_t v);
  void set_u32(const std::string& key, uint32_t v);
  void set_i32(const std::string& key, int32_t v);
  void set_u64(const std::string& key, uint64_t v);
  void set_i64(const std::string& key, int64_t v);
  void set_f32(const std::string& key, float v);
  void set_f64(const std::string& key, double v);
  void set_bool(const std::string& key, bool v);
  void set_string(const std::string& key, const std::string& v);
  void set_string_array(const std::string& key, const std::vector<std::string>& v);
  void set_f32_array(const std::string& key, const std::vector<float>& v);
  void set_i32_array(const std::string& key, const std::vector<int32_t>& v);
  // Arrays of any integer element type (u8..i64, bool): values must fit the type.
  void set_int_array(const std::string& key, gguf_vtype elem, const std::vector<int64_t>& v);
  void set_f64_array(const std::string& key, const std::vector<double>& v);
  // Escape hatch for nested arrays and hand-made values: `payload` is the encoded value
  // exactly as it follows the u32 type tag in the file.
  void set_raw(const std::string& key, gguf_vtype type, std::vector<uint8_t> payload);
  // Sets general.alignment (u32), which write() then uses: a power of two in 8..2^20.
  void set_alignment(uint32_t alignment);

  // Tensors, in insertion order. ne: 1..4 dims, ne[0] contiguous (a PyTorch (out, in)
  // weight is {in, out}); ne[0] must be a multiple of the type's block size. The bytes
  // must be exactly ggml_row_bytes(type, ne[0]) * ne[1] * ne[2] * ne[3].
  void add_tensor(const std::string& name, ggml_type type, std::vector<int64_t> ne,
                  std::vector<uint8_t> bytes);
  void add_tensor(const std::string& name, ggml_type type, std::vector<int64_t> ne, fill_fn fill);
  // F32 convenience: values converted with quantize_row_ref to `type`.
  void add_tensor_f32(const std::string& name, ggml_type type, std::vector<int64_t> ne,
                      const std::vector<float>& values);

  size_t n_tensors() const { return tensors_.size(); }
  size_t n_metadata() const { return kv_.size(); }
  size_t alignment() const;  // general.alignment when it holds a valid value, else 32
  // Byte size of a tensor of this type and shape (validates the shape).
  static size_t tensor_bytes(const std::string& name, ggml_type type, const std::vector<int64_t>& ne);

  // Writes the whole file (through PATH.tmp, renamed at the end); returns its size in bytes.
  // Throws engine_error "PATH: ..." on I/O errors.
  uint64_t write(const std::string& path) const;

 private:
  struct kv_entry {
    std::string key;
    gguf_vtype type;
    std::vector<uint8_t> payload;  // encoded value after the type tag
  };
  struct tensor_entry {
    std::string name;
    ggml_type type;
    std::vector<int64_t> ne;
    size_t nbytes;
    std::vector<uint8_t> bytes;  // used when fill is empty
    fill_fn fill;
  };
  void set(const std::string& key, gguf_vtype type, std::vector<uint8_t> payload);
  void add(tensor_entry t);

  std::vector<kv_entry> kv_;
  std::vector<tensor_entry> tensors_;
};

}  // namespace kvarena
