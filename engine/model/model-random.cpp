// model-random.cpp: plans the tensors of a random llama / qwen2 / qwen3 / phi3 / gpt2 model, generates
// their values deterministically, and writes them as GGUF (with hyperparameters and a
// synthetic tokenizer) or as a llama2.c checkpoint. The vocabularies are in
// model-random-vocab.cpp.
#include "model-random.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "engine-error.h"
#include "gguf-writer.h"
#include "splitmix64.h"

namespace kvarena {

namespace {

// llama.cpp's general.file_type (llama_ftype) for a model whose matrices are `t`.
uint32_t file_type_of(ggml_type t) {
  switch (t) {
    case ggml_type::f32: return 0;
    case ggml_type::f16: return 1;
    case ggml_type::q4_0: return 2;
    case ggml_type::q8_0: return 7;
    case ggml_type::bf16: return 32;
    case ggml_type::q2_k: return 10;  // the K-quants are never written here (read only)
    case ggml_type::q3_k: return 12;
    case ggml_type::q4_k: return 15;
    case ggml_type::q5_k: return 17;
    case ggml_type::q6_k: return 18;
    case ggml_type::iq4_nl: return 25;  // never written here either
    case ggml_type::iq4_xs: return 30;
  }
  return 0;
}

[[noreturn]] void bad_spec(const std::string& what) {
  throw engine_error("random model: " + what);
}

int64_t kv_heads_of(const random_model_spec& s) {
  if (s.arch == model_arch::gpt2 || s.n_kv_heads == 0) return s.n_heads;
  return s.n_kv_heads;
}

// Shape checks shared by GGUF and llama2.c output; min_vocab differs (a GGUF carries a
// synthetic tokenizer that needs room, a llama2.c checkpoint does not).
void validate_shape(const random_model_spec& s, int64_t min_vocab) {
  auto range = [](const char* what, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      bad_spec(std::string(what) + " = " + std::to_string(v) + " must be in " + std::to_string(lo) + ".." +
               std::to_string(hi));
    }
  };
  range("dim", s.dim, 1, 1 << 16);
  range("n_layers", s.n_layers, 1, 1024);
  range("n_heads", s.n_heads, 1, s.dim);
  range("ffn_dim", s.ffn_dim, 1, 1 << 18);
  if (s.n_vocab < min_vocab && min_vocab > 1) {
    bad_spec("n_vocab = " + std::to_string(s.n_vocab) + " is too small for the synthetic tokenizer (needs >= " +
             std::to_string(min_vocab) + "; write the model without a tokenizer for less)");
  }
  range("n_vocab", s.n_vocab, 1, 1 << 22);
  range("n_ctx", s.n_ctx, 1, 1 << 20);
  if (s.n_kv_heads < 0) bad_spec("n_kv_heads = " + std::to_string(s.n_kv_heads) + " must be >= 0");
  if (!(s.qk_bias_scale >= 0.0f && s.qk_bias_scale <= 1000.0f))
    bad_spec("qk_bias_scale = " + std::to_string(s.qk_bias_scale) + " must be in [0, 1000]");
  if (s.arch == model_arch::gemma2 || s.arch == model_arch::gemma3)
    bad_spec(std::string("arch ") + model_arch_name(s.arch) + " is not written by the random-model generator (use tests/fixtures/make_arch_fixture.py, "
             "llama.cpp's gguf-py)");
  if (s.qk_bias_scale != 1.0f && s.arch != model_arch::qwen2)
    bad_spec("qk_bias_scale needs --arch qwen2 (the only architecture with query/key biases)");
  if (!(s.output_scale > 0.0f && s.output_scale <= 1000.0f))
    bad_spec("output_scale = " + std::to_string(s.output_scale) + " must be in (0, 1000]");
  if (s.arch == model_arch::gpt2 && (s.head_dim != 0 || s.rope_scale_linear != 0.0f || s.rope_freqs))
    bad_spec("head_dim, rope_scale_linear and rope_freqs need a RoPE architecture (llama, qwen2, qwen3)");
  if (s.head_dim < 0 || s.head_dim > 1024 || s.head_dim % 2 != 0)
    bad_spec("head_dim = " + std::to_string(s.head_dim) + " must be even and in [0, 1024]");
  if (!(s.rope_scale_linear >= 0.0f) || !std::isfinite(s.rope_scale_linear))
    bad_spec("rope_scale_linear must be >= 0");
  if (s.head_dim == 0 && s.dim % s.n_heads != 0)
    bad_spec("dim " + std::to_string(s.dim) + " is not a multiple of n_heads " + std::to_string(s.n_heads));
  const int64_t kvh = kv_heads_of(s);
  if (kvh > s.n_heads || s.n_heads % kvh != 0) {
    bad_spec("n_heads " + std::to_string(s.n_heads) + " is not a multiple of n_kv_heads " + std::to_string(kvh));
  }
  const int64_t head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.n_heads;
  if (s.arch != model_arch::gpt2 && head_dim % 2 != 0) {
    bad_spec("head_dim " + std::to_string(head_dim) + " (dim / n_heads) must be even for RoPE");
  }
  const auto& tr = ggml_traits(s.type);
  if (tr.block_elems > 1 && (s.dim % tr.block_elems != 0 || s.ffn_dim % tr.block_elems != 0)) {
    bad_spec(std::string("type ") + tr.name + " needs dim and ffn_dim to be multiples of " +
             std::to_string(tr.block_elems) + " (got " + std::to_string(s.dim) + ", " + std::to_string(s.ffn_dim) + ")");
  }
  if (tr.block_elems > 1 && (head_dim * s.n_heads) % tr.block_elems != 0)
    bad_spec(std::string("type ") + tr.name + " needs n_heads * head_dim to be a multiple of " +
             std::to_string(tr.block_elems));
  if (!(s.rope_freq_base > 0) || !std::isfinite(s.rope_freq_base)) bad_spec("rope_freq_base must be > 0");
  if (!(s.norm_eps > 0) || !std::isfinite(s.norm_eps)) bad_spec("norm_eps must be > 0");
}

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Uniform values with a given mean and standard deviation, bit-identical everywhere:
// u is an integer in [-2^23, 2^23), step = half_width / 2^23 with its mantissa cut to
// 28 bits, so u * step (24 x 28 bits) is exact in double; the only roundings are the
// add of the mean and the conversion to float, which IEEE 754 fixes (also under FMA
// contraction, since the product is exact). std::sqrt is correctly rounded by IEEE 754.
class uniform_stream {
 public:
  uniform_stream(uint64_t seed, const std::string& name, float mean, float stddev)
      : rng_{seed ^ fnv1a64(name)}, mean_(mean) {
    double step = double(stddev) * std::sqrt(3.0) / double(1 << 23);
    uint64_t bits;
    std::memcpy(&bits, &step, 8);
    bits &= ~((uint64_t(1) << 25) - 1);  // keep 27 explicit mantissa bits (+1 implicit)
    std::memcpy(&step_, &bits, 8);
  }
  void fill(float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t u = int64_t(rng_.next() >> 40) - (int64_t(1) << 23);
      dst[i] = float(double(mean_) + double(u) * step_);
    }
  }

 private:
  splitmix64_stream rng_;  // one stream per tensor: its values do not depend on which other tensors exist
  float mean_;
  double step_;
};

const random_tensor_plan& find_plan(const std::vector<random_tensor_plan>& plans, const std::string& name) {
  for (const auto& p : plans) {
    if (p.name == name) return p;
  }
  bad_spec("no tensor named '" + name + "' in this model");
}

int64_t n_elements(const random_tensor_plan& p) {
  int64_t n = 1;
  for (int64_t d : p.ne) n *= d;
  return n;
}

void write_tokenizer(gguf_writer& w, const synthetic_vocab& v) {
  w.set_string("tokenizer.ggml.model", v.model);
  if (!v.pre.empty()) w.set_string("tokenizer.ggml.pre", v.pre);
  w.set_string_array("tokenizer.ggml.tokens", v.tokens);
  if (!v.scores.empty()) w.set_f32_array("tokenizer.ggml.scores", v.scores);
  w.set_i32_array("tokenizer.ggml.token_type", v.token_types);
  if (!v.merges.empty()) w.set_string_array("tokenizer.ggml.merges", v.merges);
  if (v.unk_id >= 0) w.set_u32("tokenizer.ggml.unknown_token_id", uint32_t(v.unk_id));
  if (v.bos_id >= 0) w.set_u32("tokenizer.ggml.bos_token_id", uint32_t(v.bos_id));
  if (v.eos_id >= 0) w.set_u32("tokenizer.ggml.eos_token_id", uint32_t(v.eos_id));
  w.set_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
}

}  // namespace

void validate_random_model_spec(const random_model_spec& spec) {
  validate_shape(spec, spec.with_tokenizer ? 300 : 1);
}

model_config random_model_config(const random_model_spec& s) {
  model_config c;
  c.arch = s.arch;
  c.n_vocab = s.n_vocab;
  c.dim = s.dim;
  c.n_layers = s.n_layers;
  c.n_heads = s.n_heads;
  c.n_kv_heads = kv_heads_of(s);
  c.head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.n_heads;
  c.ffn_dim = s.ffn_dim;
  c.n_ctx = s.n_ctx;
  c.rope_dims = s.arch == model_arch::gpt2 ? 0 : c.head_dim;
  c.rope_freq_base = s.rope_freq_base;
  // llama.cpp's rope type (NEOX) for qwen2, qwen3 and phi3
  c.rope_neox = s.arch == model_arch::qwen2 || s.arch == model_arch::qwen3 || s.arch == model_arch::phi3;
  if (s.rope_scale_linear > 0.0f) c.rope_freq_scale = float(1.0 / double(s.rope_scale_linear));
  if (s.rope_freqs) {  // the values random_model_tensors' rope_freqs.weight holds
    c.rope_freq_factors.resize(size_t(c.rope_dims / 2));
    uniform_stream(s.seed, "rope_freqs.weight", 2.5f, 1.0f).fill(c.rope_freq_factors.data(), c.rope_dims / 2);
  }
  c.norm_eps = s.norm_eps;
  return c;
}

std::vector<random_tensor_plan> random_model_tensors(const random_model_spec& s) {
  validate_shape(s, 1);
  const model_config c = random_model_config(s);
  const int64_t d = c.dim, qd = c.q_dim(), kv = c.kv_dim(), f = c.ffn_dim, V = c.n_vocab;
  const ggml_type T = s.type, F = ggml_type::f32;
  // Scales: q/k/v/gate/up keep unit-variance inputs at unit variance (1/sqrt(in)), so
  // attention scores have std ~1 (attention is neither uniform nor one-hot); the residual
  // branches (attn_output, ffn_down) are scaled by 1/sqrt(2 L) so the residual stream
  // stays O(1) over all layers; output gives logits with a std of ~2.
  auto inv_sqrt = [](double n) { return float(1.0 / std::sqrt(n)); };
  const float s_in = inv_sqrt(double(d));
  const float s_branch_attn = inv_sqrt(double(d) * 2.0 * double(c.n_layers));
  const float s_branch_ffn = inv_sqrt(double(f) * 2.0 * double(c.n_layers));
  const float s_out = 2.0f * s_in * s.output_scale;  // output_scale 1: exactly 2 * s_in
  const float s_embd = s.tie_output ? s_out : 1.0f;
  const float norm_mean = 1.0f, norm_std = 0.1f, bias_std = 0.05f;

  std::vector<random_tensor_plan> p;
  auto mat = [&](const std::string& n, int64_t in, int64_t out, float sd) { p.push_back({n, {in, out}, T, 0.0f, sd}); };
  auto norm = [&](const std::string& n, int64_t len) { p.push_back({n, {len}, F, norm_mean, norm_std}); };
  auto bias = [&](const std::string& n, int64_t len) { p.push_back({n, {len}, F, 0.0f, bias_std}); };

  mat("token_embd.weight", d, V, s_embd);
  if (s.arch == model_arch::gpt2) mat("position_embd.weight", d, c.n_ctx, 0.5f);
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    if (s.arch == model_arch::gpt2) {
      norm(b + "attn_norm.weight", d);
      bias(b + "attn_norm.bias", d);
      mat(b + "attn_qkv.weight", d, 3 * d, s_in);
      bias(b + "attn_qkv.bias", 3 * d);
      mat(b + "attn_output.weight", d, d, s_branch_attn);
      bias(b + "attn_output.bias", d);
      norm(b + "ffn_norm.weight", d);
      bias(b + "ffn_norm.bias", d);
      mat(b + "ffn_up.weight", d, f, s_in);
      bias(b + "ffn_up.bias", f);
      mat(b + "ffn_down.weight", f, d, s_branch_ffn);
      bias(b + "ffn_down.bias", d);
      continue;
    }
    norm(b + "attn_norm.weight", d);
    if (s.arch == model_arch::phi3) {  // fused Q|K|V and gate|up, as Phi-3 files store them
      mat(b + "attn_qkv.weight", d, qd + 2 * kv, s_in);
      mat(b + "attn_output.weight", qd, d, s_branch_attn);
      norm(b + "ffn_norm.weight", d);
      mat(b + "ffn_up.weight", d, 2 * f, s_in);
      mat(b + "ffn_down.weight", f, d, s_branch_ffn);
      continue;
    }
    mat(b + "attn_q.weight", d, qd, s_in);
    mat(b + "attn_k.weight", d, kv, s_in);
    mat(b + "attn_v.weight", d, kv, s_in);
    if (s.arch == model_arch::qwen2) {
      p.push_back({b + "attn_q.bias", {qd}, F, 0.0f, bias_std * s.qk_bias_scale});
      p.push_back({b + "attn_k.bias", {kv}, F, 0.0f, bias_std * s.qk_bias_scale});
      bias(b + "attn_v.bias", kv);
    }
    if (s.arch == model_arch::qwen3) {  // per-head q/k RMSNorm weights
      norm(b + "attn_q_norm.weight", c.head_dim);
      norm(b + "attn_k_norm.weight", c.head_dim);
    }
    mat(b + "attn_output.weight", qd, d, s_branch_attn);
    norm(b + "ffn_norm.weight", d);
    mat(b + "ffn_gate.weight", d, f, s_in);
    mat(b + "ffn_up.weight", d, f, s_in);
    mat(b + "ffn_down.weight", f, d, s_branch_ffn);
  }
  norm("output_norm.weight", d);
  if (s.rope_freqs) p.push_back({"rope_freqs.weight", {c.rope_dims / 2}, F, 2.5f, 1.0f});
  if (s.arch == model_arch::gpt2) bias("output_norm.bias", d);
  if (!s.tie_output) mat("output.weight", d, V, s_out);
  return p;
}

std::vector<float> random_tensor_values(const random_model_spec& spec, const std::string& name) {
  const auto plans = random_model_tensors(spec);
  const auto& p = find_plan(plans, name);
  std::vector<float> v(size_t(n_elements(p)));
  uniform_stream(spec.seed, p.name, p.mean, p.stddev).fill(v.data(), int64_t(v.size()));
  return v;
}

random_model_summary write_random_model(const random_model_spec& spec, const std::string& path) {
  validate_random_model_spec(spec);
  const model_config c = random_model_config(spec);
  const std::string arch = model_arch_name(spec.arch);
  gguf_writer w;
  w.set_string("general.architecture", arch);
  w.set_string("general.name", "random-" + arch + "-d" + std::to_string(c.dim) + "-l" + std::to_string(c.n_layers) +
                                   "-" + ggml_traits(spec.type).name + "-s" + std::to_string(spec.seed));
  w.set_u32("general.file_type", file_type_of(spec.type));
  if (ggml_traits(spec.type).block_elems > 1) w.set_u32("general.quantization_version", 2);
  w.set_alignment(32);
  w.set_u32(arch + ".context_length", uint32_t(c.n_ctx));
  w.set_u32(arch + ".embedding_length", uint32_t(c.dim));
  w.set_u32(arch + ".block_count", uint32_t(c.n_layers));
  w.set_u32(arch + ".feed_forward_length", uint32_t(c.ffn_dim));
  w.set_u32(arch + ".attention.head_count", uint32_t(c.n_heads));
  w.set_u32(arch + ".attention.head_count_kv", uint32_t(c.n_kv_heads));
  if (spec.arch == model_arch::gpt2) {
    w.set_f32(arch + ".attention.layer_norm_epsilon", c.norm_eps);
  } else {
    w.set_f32(arch + ".attention.layer_norm_rms_epsilon", c.norm_eps);
    w.set_u32(arch + ".rope.dimension_count", uint32_t(c.rope_dims));
    w.set_f32(arch + ".rope.freq_base", c.rope_freq_base);
    if (spec.head_dim > 0) {
      w.set_u32(arch + ".attention.key_length", uint32_t(c.head_dim));
      w.set_u32(arch + ".attention.value_length", uint32_t(c.head_dim));
    }
    if (spec.rope_scale_linear > 0.0f) {
      w.set_string(arch + ".rope.scaling.type", "linear");
      w.set_f32(arch + ".rope.scaling.factor", spec.rope_scale_linear);
    }
  }
  if (spec.with_tokenizer) {
    switch (spec.arch) {
      case model_arch::llama:
      case model_arch::gemma2:
      case model_arch::gemma3:
      case model_arch::phi3: write_tokenizer(w, make_spm_vocab(c.n_vocab)); break;
      case model_arch::qwen2:
      case model_arch::qwen3: write_tokenizer(w, make_bpe_vocab(c.n_vocab, "qwen2")); break;
      case model_arch::gpt2: write_tokenizer(w, make_bpe_vocab(c.n_vocab, "gpt-2")); break;
    }
  }

  for (const auto& [key, value] : spec.extra_u32) w.set_u32(key, value);
  for (const auto& [key, value] : spec.extra_strings) w.set_string(key, value);

  random_model_summary sum;
  for (const auto& p : random_model_tensors(spec)) {
    sum.n_params += n_elements(p);
    const uint64_t seed = spec.seed;
    w.add_tensor(p.name, p.type, p.ne, [p, seed](uint8_t* dst, size_t) {
      uniform_stream rng(seed, p.name, p.mean, p.stddev);
      const int64_t row = p.ne[0];
      const size_t row_bytes = ggml_row_bytes(p.type, row);
      std::vector<float> buf(size_t(row), 0.0f);
      for (int64_t r = 0; r < n_elements(p) / row; ++r) {
        rng.fill(buf.data(), row);
        quantize_row_ref(p.type, buf.data(), dst + size_t(r) * row_bytes, row);
      }
    });
  }
  sum.n_tensors = w.n_tensors();
  sum.file_bytes = w.write(path);
  return sum;
}

void write_llama2c_checkpoint(const random_model_spec& spec, const std::string& path) {
  if (spec.arch != model_arch::llama) bad_spec("a llama2.c checkpoint needs arch llama");
  if (spec.head_dim != 0 || spec.rope_scale_linear != 0.0f || spec.rope_freqs)
    bad_spec("a llama2.c checkpoint has no head_dim or RoPE scaling");
  validate_shape(spec, 1);
  const model_config c = random_model_config(spec);
  const auto plans = random_model_tensors(spec);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) fail_file(path, std::string("cannot write: ") + std::strerror(errno));
  auto put = [&](const void* p, size_t n) {
    if (std::fwrite(p, 1, n, f.get()) != n) fail_file(path, std::string("write failed: ") + std::strerror(errno));
  };
  const int32_t header[7] = {int32_t(c.dim),        int32_t(c.ffn_dim),
                             int32_t(c.n_layers),   int32_t(c.n_heads),
                             int32_t(c.n_kv_heads), int32_t(spec.tie_output ? c.n_vocab : -c.n_vocab),
                             int32_t(c.n_ctx)};
  put(header, sizeof(header));
  auto put_tensor = [&](const std::string& name) {
    const auto& p = find_plan(plans, name);
    std::vector<float> v(size_t(n_elements(p)));
    uniform_stream(spec.seed, p.name, p.mean, p.stddev).fill(v.data(), int64_t(v.size()));
    put(v.data(), v.size() * 4);
  };
  // Each array below is the concatenation over layers of one kind of tensor; a llama2.c
  // (out, in) row-major matrix has the same bytes as GGUF's ne = {in, out}.
  auto per_layer = [&](const char* kind) {
    for (int64_t l = 0; l < c.n_layers; ++l) put_tensor("blk." + std::to_string(l) + "." + kind + ".weight");
  };
  put_tensor("token_embd.weight");
  per_layer("attn_norm");
  per_layer("attn_q");
  per_layer("attn_k");
  per_layer("attn_v");
  per_layer("attn_output");
  per_layer("ffn_norm");
  per_layer("ffn_gate");  // w1
  per_layer("ffn_down");  // w2
  per_layer("ffn_up");    // w3
  put_tensor("output_norm.weight");
  // Two RoPE tables (freq_cis_real, freq_cis_imag) of seq_len * head_dim / 2 each, unused
  // by llama2.c's run.c and by kvarena: zeros.
  const std::vector<float> zeros(size_t(c.n_ctx * c.head_dim / 2) * 2, 0.0f);
  put(zeros.data(), zeros.size() * 4);
  if (!spec.tie_output) put_tensor("output.weight");
  if (std::fclose(f.release()) != 0) fail_file(path, std::string("write failed: ") + std::strerror(errno));
}

void write_llama2c_checkpoint(const model_config& config, uint64_t seed, const std::string& path,
                              bool shared_classifier) {
  random_model_spec s;
  s.arch = model_arch::llama;
  s.dim = config.dim;
  s.n_layers = config.n_layers;
  s.n_heads = config.n_heads;
  s.n_kv_heads = config.n_kv_heads;
  s.ffn_dim = config.ffn_dim;
  s.n_vocab = config.n_vocab;
  s.n_ctx = config.n_ctx;
  s.seed = seed;
  s.tie_output = shared_classifier;
  write_llama2c_checkpoint(s, path);
}

}  // namespace kvarena
