// model-loader.cpp: turns a GGUF file into a `model`: reads the config keys of the
// architecture (llama, qwen2, qwen3, gemma2, gemma3, phi3, gpt2), finds every tensor and checks its type and shape
// against the config, so the forward pass can trust every view it is handed. Weights stay
// in the memory map; only 1-D tensors stored in a non-F32 type are converted (the norm and
// bias kernels take F32). load_model() picks GGUF or llama2.c by the file's magic.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "engine-error.h"
#include "gguf-reader.h"
#include "model.h"

namespace kvarena {

namespace {

std::string shape_str(const int64_t* ne, int n) {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "}";
}

// Finds tensors by name and checks them against the shapes the config implies.
class tensor_binder {
 public:
  tensor_binder(const gguf_file& f, model& m) : f_(f), m_(m) {}

  // A weight matrix {in, out}, used by matmul in its stored type.
  tensor_view matrix(const std::string& name, int64_t in, int64_t out, bool required = true) {
    const tensor_view* t = find(name, required);
    if (!t) return {};
    const int64_t want[2] = {in, out};
    check_shape(*t, want, 2);
    return *t;
  }

  // A vector {n} (norm weight, bias): the kernels take F32, so other types are converted
  // into a buffer the model owns.
  bool has(const std::string& name) const { return f_.find_tensor(name) != nullptr; }

  tensor_view vec(const std::string& name, int64_t n, bool required = true) {
    const tensor_view* t = find(name, required);
    if (!t) return {};
    const int64_t want[1] = {n};
    check_shape(*t, want, 1);
    if (t->type == ggml_type::f32) return *t;
    auto& buf = m_.owned.emplace_back(size_t(n) * sizeof(float));
    dequantize_row_ref(t->type, t->data, reinterpret_cast<float*>(buf.data()), n);
    tensor_view v = *t;
    v.type = ggml_type::f32;
    v.data = buf.data();
    v.nbytes = buf.size();
    return v;
  }

 private:
  const tensor_view* find(const std::string& name, bool required) {
    const tensor_view* t = f_.find_tensor(name);
    if (!t && required) {
      f_.fail("missing tensor '" + name + "' (required by architecture '" +
              model_arch_name(m_.config.arch) + "')");
    }
    return t;
  }

  void check_shape(const tensor_view& t, const int64_t* want, int n) {
    bool ok = true;
    for (int i = 0; i < 4; ++i) ok = ok && t.ne[i] == (i < n ? want[i] : 1);
    if (!ok) {
      f_.fail("tensor '" + t.name + "' has shape " + shape_str(t.ne, std::max(t.n_dims, 1)) +
              ", expected " + shape_str(want, n));
    }
  }

  const gguf_file& f_;
  model& m_;
};

// Rows [r0, r1) of a matrix {in, out} as a matrix of its own (a part of a fused tensor).
tensor_view rows_of(const tensor_view& w, int64_t r0, int64_t r1) {
  tensor_view v = w;
  v.ne[1] = r1 - r0;
  v.data = w.data + size_t(r0) * w.row_bytes();
  v.nbytes = size_t(r1 - r0) * w.row_bytes();
  return v;
}
// Elements [i0, i1) of an F32 vector as a vector of its own.
tensor_view elems_of(const tensor_view& b, int64_t i0, int64_t i1) {
  if (!b) return {};
  tensor_view v = b;
  v.ne[0] = i1 - i0;
  v.data = b.data + size_t(i0) * sizeof(float);
  v.nbytes = size_t(i1 - i0) * sizeof(float);
  return v;
}

std::string blk(int64_t l, const char* what) {
  return "blk." + std::to_string(l) + "." + what;
}

// RoPE scaling keys, read as llama.cpp reads them: `rope.scaling.type` (absent = linear),
// `rope.scaling.factor` (or the older `rope.scale_linear`; absent or 0 = no scaling). Linear
// is applied; "none" disables the factor; YaRN and LongRoPE are refused by name rather than
// silently run unscaled.
void read_rope_scaling(const gguf_file& f, const std::string& a, model_config& c) {
  const std::string type = f.get_string(a + "rope.scaling.type").value_or("linear");
  double factor = 0.0;
  if (auto v = f.get_float(a + "rope.scaling.factor"))
    factor = *v;
  else if (auto old = f.get_float(a + "rope.scale_linear"))
    factor = *old;
  if (type == "none") return;
  if (type == "yarn" || type == "longrope") {
    f.fail("RoPE scaling type '" + type + "' (" + a + "rope.scaling.type) is not supported (supported: none, "
           "linear, and Llama 3's rope_freqs.weight)");
  }
  if (type != "linear") f.fail("unknown RoPE scaling type '" + type + "' (" + a + "rope.scaling.type)");
  if (factor == 0.0) return;
  if (!(factor > 0) || !std::isfinite(factor))
    f.fail(a + "rope.scaling.factor must be positive (got " + std::to_string(factor) + ")");
  c.rope_freq_scale = float(1.0 / factor);
}

// gemma2 and gemma3, as llama.cpp v0.4.0 reads them (src/models/gemma2.cpp, gemma3.cpp):
// the embedding scaled by sqrt(dim); queries by 1/sqrt(head_dim), except the 27B models'
// (gemma2: 46 layers, gemma3: 62) 1/sqrt(dim / n_heads) (their query_pre_attn_scalar: GGUFs
// carry no such key); `final_logit_softcapping` (gemma2 default 30, gemma3 none), gemma2's
// `attn_logit_softcapping` (default 50). Sliding-window layers: `attention.sliding_window`
// (gemma2 default 4096; gemma3: absent or 0 = every layer global), in each run of
// `attention.sliding_window_pattern` P layers (gemma2 default 2, gemma3 6) the first P-1 are
// sliding-window, the last global; the local layers' RoPE base `rope.freq_base_swa`
// (gemma2: default the global base and scaling; gemma3: default 10000, unscaled).
void read_gemma_config(const gguf_file& f, const std::string& a, model_config& c) {
  const bool g2 = c.arch == model_arch::gemma2;
  c.embed_scale = std::sqrt(float(c.dim));
  const bool is_27b = c.n_layers == (g2 ? 46 : 62);
  c.attn_scale = is_27b ? 1.0f / std::sqrt(float(c.dim / c.n_heads)) : 1.0f / std::sqrt(float(c.head_dim));
  auto cap = [&](const char* key, double dflt) {
    const float v = float(f.get_float(a + key).value_or(dflt));
    if (!(v >= 0) || !std::isfinite(v)) f.fail(a + key + " must be a non-negative number");
    return v;
  };
  c.final_logit_softcap = cap("final_logit_softcapping", g2 ? 30.0 : 0.0);
  if (g2) c.attn_logit_softcap = cap("attn_logit_softcapping", 50.0);
  const int64_t window = f.get_int(a + "attention.sliding_window").value_or(g2 ? 4096 : 0);
  if (window < 0) f.fail(a + "attention.sliding_window must not be negative");
  if (window == 0) return;
  const int64_t period = f.get_int(a + "attention.sliding_window_pattern").value_or(g2 ? 2 : 6);
  if (period < 0) f.fail(a + "attention.sliding_window_pattern must not be negative");
  c.sliding_window = window;
  c.layer_swa.assign(size_t(c.n_layers), 0);
  for (int64_t l = 0; l < c.n_layers; ++l) c.layer_swa[size_t(l)] = period == 0 || l % period < period - 1;
  c.rope_freq_base_swa = float(f.get_float(a + "rope.freq_base_swa").value_or(g2 ? c.rope_freq_base : 10000.0));
  c.rope_freq_scale_swa = g2 ? c.rope_freq_scale : 1.0f;
  if (!(c.rope_freq_base_swa > 0)) f.fail(a + "rope.freq_base_swa must be positive");
}

void read_config(const gguf_file& f, model_config& c) {
  const std::string a = std::string(model_arch_name(c.arch)) + ".";
  c.n_ctx = f.require_int(a + "context_length");
  c.dim = f.require_int(a + "embedding_length");
  c.n_layers = f.require_int(a + "block_count");
  c.ffn_dim = f.require_int(a + "feed_forward_length");
  c.n_heads = f.require_int(a + "attention.head_count");
  c.n_kv_heads = f.get_int(a + "attention.head_count_kv").value_or(c.n_heads);

  auto positive = [&](const char* key, int64_t v) {
    if (v <= 0) f.fail("metadata key '" + a + key + "' must be positive (got " + std::to_string(v) + ")");
  };
  positive("context_length", c.n_ctx);
  positive("embedding_length", c.dim);
  positive("block_count", c.n_layers);
  positive("feed_forward_length", c.ffn_dim);
  positive("attention.head_count", c.n_heads);
  positive("attention.head_count_kv", c.n_kv_heads);
  if (c.n_heads % c.n_kv_heads != 0) {
    f.fail("head_count " + std::to_string(c.n_heads) + " is not a multiple of head_count_kv " +
           std::to_string(c.n_kv_heads));
  }
  // Head width: attention.key_length where the file sets it (gemma: 256, whatever the
  // embedding width; queries then are n_heads * head_dim wide), else dim / n_heads.
  const std::optional<int64_t> key_len = f.get_int(a + "attention.key_length");
  if (c.arch != model_arch::gpt2 && key_len) {
    if (*key_len <= 0 || *key_len > 1024)
      f.fail("metadata key '" + a + "attention.key_length' = " + std::to_string(*key_len) + " is out of range");
    c.head_dim = *key_len;
  } else {
    if (c.dim % c.n_heads != 0) {
      f.fail("embedding_length " + std::to_string(c.dim) + " is not a multiple of head_count " +
             std::to_string(c.n_heads));
    }
    c.head_dim = c.dim / c.n_heads;
  }
  for (const char* key : {"attention.key_length", "attention.value_length"}) {
    if (auto v = f.get_int(a + key); v && *v != c.head_dim) {
      f.fail("metadata key '" + a + key + "' = " + std::to_string(*v) + " differs from the head width " +
             std::to_string(c.head_dim) + " (not supported)");
    }
  }

  if (c.arch == model_arch::gpt2) {
    c.norm_eps = float(f.get_float(a + "attention.layer_norm_epsilon").value_or(1e-5));
    c.rope_dims = 0;
  } else {
    c.norm_eps = float(f.get_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
    c.rope_dims = f.get_int(a + "rope.dimension_count").value_or(c.head_dim);
    c.rope_freq_base = float(f.get_float(a + "rope.freq_base").value_or(10000.0));
    // llama.cpp's NEOX archs
    c.rope_neox = c.arch == model_arch::qwen2 || c.arch == model_arch::qwen3 || c.arch == model_arch::gemma2 ||
                  c.arch == model_arch::gemma3 || c.arch == model_arch::phi3;
    if (c.rope_dims <= 0 || c.rope_dims > c.head_dim || c.rope_dims % 2 != 0) {
      f.fail("rope.dimension_count " + std::to_string(c.rope_dims) +
             " must be even and in [2, head_dim = " + std::to_string(c.head_dim) + "]");
    }
    if (!(c.rope_freq_base > 0)) f.fail("rope.freq_base must be positive");
    read_rope_scaling(f, a, c);
  }
  if (!(c.norm_eps > 0)) f.fail("the norm epsilon must be positive");
  if (c.arch == model_arch::gemma2 || c.arch == model_arch::gemma3) read_gemma_config(f, a, c);
}

void bind_llama(tensor_binder& b, model& m) {
  const auto& c = m.config;
  const int64_t d = c.dim, qd = c.q_dim(), kv = c.kv_dim(), ff = c.ffn_dim;
  for (int64_t l = 0; l < c.n_layers; ++l) {
    auto& L = m.layers[size_t(l)];
    L.attn_norm = b.vec(blk(l, "attn_norm.weight"), d);
    if (c.arch == model_arch::phi3 && b.has(blk(l, "attn_qkv.weight"))) {
      // phi3's fused Q|K|V {dim, q_dim + 2 kv_dim} (llama.cpp's views: q, then k, then v
      // rows), used as three matrices; its optional bias alike.
      const tensor_view w = b.matrix(blk(l, "attn_qkv.weight"), d, qd + 2 * kv);
      L.wq = rows_of(w, 0, qd), L.wk = rows_of(w, qd, qd + kv), L.wv = rows_of(w, qd + kv, qd + 2 * kv);
      const tensor_view bias = b.vec(blk(l, "attn_qkv.bias"), qd + 2 * kv, false);
      L.bq = elems_of(bias, 0, qd), L.bk = elems_of(bias, qd, qd + kv), L.bv = elems_of(bias, qd + kv, qd + 2 * kv);
    } else {
      L.wq = b.matrix(blk(l, "attn_q.weight"), d, qd);
      L.wk = b.matrix(blk(l, "attn_k.weight"), d, kv);
      L.wv = b.matrix(blk(l, "attn_v.weight"), d, kv);
      // Q/K/V biases: required by qwen2, optional in llama files (llama.cpp accepts them).
      const bool need_bias = c.arch == model_arch::qwen2;
      L.bq = b.vec(blk(l, "attn_q.bias"), qd, need_bias);
      L.bk = b.vec(blk(l, "attn_k.bias"), kv, need_bias);
      L.bv = b.vec(blk(l, "attn_v.bias"), kv, need_bias);
    }
    // qwen3, gemma3: RMSNorm of each head of q and k (after the projections, before RoPE).
    if (c.arch == model_arch::qwen3 || c.arch == model_arch::gemma3) {
      L.q_norm = b.vec(blk(l, "attn_q_norm.weight"), c.head_dim);
      L.k_norm = b.vec(blk(l, "attn_k_norm.weight"), c.head_dim);
    }
    L.wo = b.matrix(blk(l, "attn_output.weight"), qd, d);
    // gemma2/3: RMSNorm of the attention and FFN outputs before each residual add. The norm
    // weights are used as stored: llama.cpp's converter already added Gemma's 1 to them.
    if (c.arch == model_arch::gemma2 || c.arch == model_arch::gemma3) {
      L.attn_post_norm = b.vec(blk(l, "post_attention_norm.weight"), d);
      L.ffn_post_norm = b.vec(blk(l, "post_ffw_norm.weight"), d);
    }
    L.ffn_norm = b.vec(blk(l, "ffn_norm.weight"), d);
    if (c.arch == model_arch::phi3) {
      // phi3's fused gate|up {dim, 2 ffn}: SwiGLU of the first half times the second
      // (ggml_swiglu on the fused product), used as the two matrices.
      const tensor_view w = b.matrix(blk(l, "ffn_up.weight"), d, 2 * ff);
      L.w_gate = rows_of(w, 0, ff), L.w_up = rows_of(w, ff, 2 * ff);
    } else {
      L.w_gate = b.matrix(blk(l, "ffn_gate.weight"), d, ff);
      L.w_up = b.matrix(blk(l, "ffn_up.weight"), d, ff);
    }
    L.w_down = b.matrix(blk(l, "ffn_down.weight"), ff, d);
  }
}

void bind_gpt2(tensor_binder& b, model& m) {
  const auto& c = m.config;
  const int64_t d = c.dim, qkv = d + 2 * c.kv_dim(), ff = c.ffn_dim;
  m.pos_embd = b.matrix("position_embd.weight", d, c.n_ctx);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    auto& L = m.layers[size_t(l)];
    L.attn_norm = b.vec(blk(l, "attn_norm.weight"), d);
    L.attn_norm_b = b.vec(blk(l, "attn_norm.bias"), d);
    L.wqkv = b.matrix(blk(l, "attn_qkv.weight"), d, qkv);
    L.bqkv = b.vec(blk(l, "attn_qkv.bias"), qkv);
    L.wo = b.matrix(blk(l, "attn_output.weight"), d, d);
    L.bo = b.vec(blk(l, "attn_output.bias"), d);
    L.ffn_norm = b.vec(blk(l, "ffn_norm.weight"), d);
    L.ffn_norm_b = b.vec(blk(l, "ffn_norm.bias"), d);
    L.w_up = b.matrix(blk(l, "ffn_up.weight"), d, ff);
    L.b_up = b.vec(blk(l, "ffn_up.bias"), ff);
    L.w_down = b.matrix(blk(l, "ffn_down.weight"), ff, d);
    L.b_down = b.vec(blk(l, "ffn_down.bias"), d);
  }
}

}  // namespace

std::unique_ptr<model> load_model_gguf(std::shared_ptr<const gguf_file> file) {
  const gguf_file& f = *file;
  auto m = std::make_unique<model>();
  m->path = f.path();
  m->gguf = file;

  const std::string arch = f.require_string("general.architecture");
  const std::optional<model_arch> a = model_arch_from_name(arch);
  if (!a) f.fail("unsupported architecture '" + arch + "' (supported: " + model_arch_names() + ")");
  m->config.arch = *a;
  model_config& c = m->config;
  read_config(f, c);

  const tensor_view* embd = f.find_tensor("token_embd.weight");
  if (!embd) f.fail("missing tensor 'token_embd.weight'");
  c.n_vocab = embd->ne[1];

  tensor_binder b(f, *m);
  m->tok_embd = b.matrix("token_embd.weight", c.dim, c.n_vocab);
  m->output_norm = b.vec("output_norm.weight", c.dim);
  if (c.arch == model_arch::gpt2) m->output_norm_b = b.vec("output_norm.bias", c.dim);
  // gemma2: llama.cpp always ties the output to the embedding (an output.weight is ignored).
  if (c.arch != model_arch::gemma2) m->output = b.matrix("output.weight", c.dim, c.n_vocab, /*required=*/false);
  if (!m->output) m->output = m->tok_embd;  // tied embeddings

  // Each block has several tensors: a block_count beyond the tensor count is a bad file
  // (and must not drive a huge allocation).
  if (uint64_t(c.n_layers) > f.tensors().size()) {
    f.fail("block_count " + std::to_string(c.n_layers) + " exceeds the " +
           std::to_string(f.tensors().size()) + " tensors in the file");
  }
  // Llama 3.1+ RoPE scaling: one frequency divisor per rotated pair (llama.cpp reads the
  // tensor for llama and qwen-style archs alike; gpt2 has no RoPE).
  // phi3's LongRoPE factors (the 128k models): per-context long/short frequency factors and
  // an attention factor kvarena does not apply: refused by name rather than run unscaled.
  if (c.arch == model_arch::phi3) {
    for (const char* t : {"rope_factors_long.weight", "rope_factors_short.weight"})
      if (f.find_tensor(t))
        f.fail(std::string("tensor '") + t + "': phi3 LongRoPE (the 128k-context models) is not supported");
  }
  // gemma's and phi3's graphs pass no rope_freqs factors: llama.cpp never reads the tensor there.
  if (c.arch != model_arch::gpt2 && c.arch != model_arch::gemma2 && c.arch != model_arch::gemma3 &&
      c.arch != model_arch::phi3) {
    if (const tensor_view* rf = f.find_tensor("rope_freqs.weight")) {
      const tensor_view v = b.vec("rope_freqs.weight", c.rope_dims / 2);
      const float* p = reinterpret_cast<const float*>(v.data);
      c.rope_freq_factors.assign(p, p + c.rope_dims / 2);
      for (float x : c.rope_freq_factors)
        if (!(x > 0) || !std::isfinite(x))
          f.fail("tensor '" + rf->name + "' holds a frequency factor that is not a positive number");
    }
  }
  m->layers.resize(size_t(c.n_layers));
  if (c.arch == model_arch::gpt2) {
    bind_gpt2(b, *m);
  } else {
    bind_llama(b, *m);
  }
  return m;
}

std::unique_ptr<model> load_model(const std::string& path) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) fail_file(path, std::string("cannot open model file: ") + std::strerror(errno));
  char magic[4] = {0, 0, 0, 0};
  const size_t got = std::fread(magic, 1, 4, fp);
  std::fclose(fp);
  if (got == 4 && std::memcmp(magic, "GGUF", 4) == 0) {
    return load_model_gguf(std::make_shared<const gguf_file>(path));
  }
  return load_model_llama2c(path);
}

}  // namespace kvarena
