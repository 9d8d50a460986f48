// model-llama2c.cpp: loads a llama2.c checkpoint (legacy .bin: 7 int32 header, then F32
// arrays, see specs/engine.md) as a llama `model`. The file is memory-mapped and every
// tensor_view points into the map (model::storage keeps it alive); nothing is copied.
// The header is validated against the file size before any view is made. Not handled:
// llama2.c's versioned export formats (magic "ak42"), which are reported as such.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "engine-error.h"
#include "mapped-file.h"
#include "model.h"

namespace kvarena {

namespace {

constexpr size_t k_header_bytes = 7 * sizeof(int32_t);
constexpr uint32_t k_versioned_magic = 0x616b3432;  // "ak42" in llama2.c export.py v1+

// Walks the float arrays in file order, handing out views.
class llama2c_cursor {
 public:
  llama2c_cursor(const mapped_file& map) : map_(map), pos_(k_header_bytes) {}

  // The next array of ne[0]*ne[1] floats as an F32 view named `name`.
  tensor_view take(const std::string& name, int64_t ne0, int64_t ne1 = 1) {
    tensor_view v;
    v.name = name;
    v.type = ggml_type::f32;
    v.n_dims = ne1 == 1 ? 1 : 2;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.nbytes = size_t(ne0 * ne1) * sizeof(float);
    KV_ASSERT(pos_ + v.nbytes <= map_.size());  // the total was checked against the size
    v.data = map_.data() + pos_;
    pos_ += v.nbytes;
    return v;
  }
  void skip(size_t n_floats) { pos_ += n_floats * sizeof(float); }

 private:
  const mapped_file& map_;
  size_t pos_;
};

}  // namespace

std::unique_ptr<model> load_model_llama2c(const std::string& path) {
  auto map = std::make_shared<const mapped_file>(path);
  auto fail = [&](const std::string& what) { fail_file(path, what); };
  if (map->size() < k_header_bytes) {
    fail("not a llama2.c checkpoint: " + std::to_string(map->size()) +
         " bytes is smaller than its 28-byte header (nor a GGUF file)");
  }
  int32_t h[7];
  std::memcpy(h, map->data(), sizeof(h));
  if (uint32_t(h[0]) == k_versioned_magic) {
    fail("llama2.c export format version " + std::to_string(h[1]) +
         " is not supported; export the checkpoint with the legacy format (version 0)");
  }
  const char* names[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; ++i) {
    if (h[i] == 0 || (h[i] < 0 && i != 5)) {
      fail("not a valid llama2.c checkpoint: header " + std::string(names[i]) + " = " + std::to_string(h[i]) +
           (i == 5 ? " (must be nonzero)" : " (must be positive)"));
    }
  }
  model_config c;
  c.arch = model_arch::llama;
  c.dim = h[0];
  c.ffn_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  const bool shared_classifier = h[5] > 0;  // negative: a separate output matrix follows
  c.n_vocab = shared_classifier ? h[5] : -int64_t(h[5]);
  c.n_ctx = h[6];
  if (c.dim % c.n_heads != 0) {
    fail("not a valid llama2.c checkpoint: dim " + std::to_string(c.dim) + " is not a multiple of n_heads " +
         std::to_string(c.n_heads));
  }
  if (c.n_kv_heads > c.n_heads || c.n_heads % c.n_kv_heads != 0) {
    fail("not a valid llama2.c checkpoint: n_heads " + std::to_string(c.n_heads) +
         " is not a multiple of n_kv_heads " + std::to_string(c.n_kv_heads));
  }
  c.head_dim = c.dim / c.n_heads;
  if (c.head_dim % 2 != 0) {
    fail("not a valid llama2.c checkpoint: head size " + std::to_string(c.head_dim) + " must be even for RoPE");
  }
  c.rope_dims = c.head_dim;  // llama2.c: adjacent pairs over the whole head, base 10000
  c.rope_freq_base = 10000.0f;
  c.rope_neox = false;
  c.norm_eps = 1e-5f;

  // All header values are < 2^31, so every product below fits in 128 bits.
  using u128 = unsigned __int128;
  const u128 d = u128(c.dim), L = u128(c.n_layers), V = u128(c.n_vocab), hid = u128(c.ffn_dim),
             kv = u128(c.kv_dim()), seq = u128(c.n_ctx), hd = u128(c.head_dim);
  const u128 n_floats = V * d + L * d + L * d * d + 2 * L * d * kv + L * d * d + L * d + 3 * L * hid * d + d +
                        seq * hd + (shared_classifier ? 0 : V * d);
  const u128 want = u128(k_header_bytes) + n_floats * 4;
  if (want != u128(map->size())) {
    const std::string want_s = want > u128(UINT64_MAX) ? "more than 2^64" : std::to_string(uint64_t(want));
    fail("llama2.c checkpoint size mismatch: the header (dim " + std::to_string(c.dim) + ", hidden " +
         std::to_string(c.ffn_dim) + ", layers " + std::to_string(c.n_layers) + ", heads " +
         std::to_string(c.n_heads) + "/" + std::to_string(c.n_kv_heads) + ", vocab " + std::to_string(h[5]) +
         ", seq_len " + std::to_string(c.n_ctx) + ") implies " + want_s + " bytes, the file has " +
         std::to_string(map->size()) + (want > u128(map->size()) ? " (truncated?)" : " (trailing data?)"));
  }

  auto m = std::make_unique<model>();
  m->path = path;
  m->config = c;
  m->layers.resize(size_t(c.n_layers));
  llama2c_cursor cur(*map);
  auto blk = [](size_t l, const char* what) { return "blk." + std::to_string(l) + "." + what + ".weight"; };
  // Each array is all layers of one kind, in order; matrices are (out, in) row-major,
  // i.e. ggml ne = {in, out}.
  auto per_layer = [&](const char* what, tensor_view layer_weights::*field, int64_t in, int64_t out) {
    for (size_t l = 0; l < m->layers.size(); ++l) m->layers[l].*field = cur.take(blk(l, what), in, out);
  };
  const int64_t D = c.dim, KV = c.kv_dim(), H = c.ffn_dim;
  m->tok_embd = cur.take("token_embd.weight", D, c.n_vocab);
  per_layer("attn_norm", &layer_weights::attn_norm, D, 1);
  per_layer("attn_q", &layer_weights::wq, D, D);
  per_layer("attn_k", &layer_weights::wk, D, KV);
  per_layer("attn_v", &layer_weights::wv, D, KV);
  per_layer("attn_output", &layer_weights::wo, D, D);
  per_layer("ffn_norm", &layer_weights::ffn_norm, D, 1);
  per_layer("ffn_gate", &layer_weights::w_gate, D, H);  // w1
  per_layer("ffn_down", &layer_weights::w_down, H, D);  // w2
  per_layer("ffn_up", &layer_weights::w_up, D, H);      // w3
  m->output_norm = cur.take("output_norm.weight", D);
  cur.skip(size_t(c.n_ctx * c.head_dim));  // freq_cis_real + freq_cis_imag (unused)
  m->output = shared_classifier ? m->tok_embd : cur.take("output.weight", D, c.n_vocab);
  m->storage = map;
  return m;
}

}  // namespace kvarena
