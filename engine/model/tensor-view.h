// tensor-view.h: a non-owning view of one weight tensor (as stored in a GGUF file or in
// memory the model owns). ggml order: ne[0] is the contiguous dimension, so a PyTorch
// (out, in) matrix has ne = {in, out, 1, 1} and row r starts at data + r * row_bytes.
#pragma once
#include <cstdint>
#include <string>

#include "ggml-types.h"

namespace kvarena {

struct tensor_view {
  std::string name;
  ggml_type type = ggml_type::f32;
  int n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};
  const uint8_t* data = nullptr;  // nullptr for an absent tensor
  size_t nbytes = 0;

  explicit operator bool() const { return data != nullptr; }
  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  size_t row_bytes() const { return ggml_row_bytes(type, ne[0]); }
  const uint8_t* row(int64_t r) const { return data + size_t(r) * row_bytes(); }
};

}  // namespace kvarena
