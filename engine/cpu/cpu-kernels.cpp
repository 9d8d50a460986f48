// cpu-kernels.cpp: the public CPU kernels. Picks a variant (AVX-512 / AVX2 / generic) once,
// owns the scratch memory the variants work in, and splits matmuls across the thread pool:
//   n_tok < 16  matrix-vector on groups of up to 4 tokens: output rows split between
//               threads, each chunk of rows read from memory once for all the tokens
//               (decode is memory-bound: this is where bandwidth matters);
//   n_tok >= 16 GEMM: x packed into token tiles by all threads, then each thread converts
//               its own weight rows panel by panel and multiplies them against every tile.
// rope_adjacent lives here (scalar: it is a few hundred multiply-adds per call).
#include "cpu-kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <cstring>
#include <mutex>

#include "cpu-kernels-impl.h"
#include "engine-error.h"

namespace kvarena {
namespace {

using cpu::kernel_table;

// ---- variant selection -------------------------------------------------------------------

bool cpu_can_run(const kernel_table* k) {
  if (!k) return false;
  const std::string name = k->name;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (name == "avx512")
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c");
  if (name == "avx2")
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c");
#endif
  return name == "generic";
}

// Every variant compiled in, best first.
std::vector<const kernel_table*> all_variants() {
  std::vector<const kernel_table*> v;
  for (const kernel_table* k : {cpu::kernels_avx512(), cpu::kernels_avx2(), cpu::kernels_generic()})
    if (k) v.push_back(k);
  return v;
}

const kernel_table* find_supported(const std::string& name, const char* what) {
  std::string names;
  for (const kernel_table* k : all_variants()) {
    if (!cpu_can_run(k)) continue;
    if (name == k->name) return k;
    names += std::string(names.empty() ? "" : ", ") + k->name;
  }
  throw engine_error(std::string(what) + "=" + name +
                     ": not a CPU kernel variant this machine can run (choose one of: " + names + ")");
}

std::atomic<const kernel_table*> g_active{nullptr};

const kernel_table& active() {
  const kernel_table* k = g_active.load(std::memory_order_acquire);
  if (k) return *k;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  k = g_active.load(std::memory_order_acquire);
  if (k) return *k;
  const char* env = std::getenv("KVARENA_CPU_VARIANT");
  if (env && *env) {
    k = find_supported(env, "KVARENA_CPU_VARIANT");
  } else {
    for (const kernel_table* v : all_variants())
      if (cpu_can_run(v)) {
        k = v;
        break;
      }
  }
  g_active.store(k, std::memory_order_release);
  return *k;
}

// ---- scratch -----------------------------------------------------------------------------

// A grow-only 64-byte-aligned buffer, one per thread that needs it.
class scratch_buffer {
 public:
  ~scratch_buffer() { std::free(p_); }
  template <class T>
  T* get(size_t n) {
    const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    if (bytes > size_) {
      std::free(p_);
      p_ = std::aligned_alloc(64, bytes);
      KV_ASSERT(p_ != nullptr);
      size_ = bytes;
    }
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
  size_t size_ = 0;
};

thread_local scratch_buffer tls_xq;     // caller: quantised activations
thread_local scratch_buffer tls_xt;     // caller: packed activations for the GEMM
thread_local scratch_buffer tls_panel;  // every thread: its GEMM weight panel

// ---- matmul ------------------------------------------------------------------------------

bool is_quantized(ggml_type t) { return t == ggml_type::q8_0 || t == ggml_type::q4_0; }

size_t row_bytes_of(ggml_type t, int64_t n) {
  switch (t) {
    case ggml_type::f32: return size_t(n) * 4;
    case ggml_type::f16:
    case ggml_type::bf16: return size_t(n) * 2;
    case ggml_type::q8_0: return size_t(n / 32) * sizeof(block_q8_0);
    case ggml_type::q4_0: return size_t(n / 32) * sizeof(block_q4_0);
    case ggml_type::q2_k:
    case ggml_type::q3_k:
    case ggml_type::q4_k:
    case ggml_type::q5_k:
    case ggml_type::q6_k:
    case ggml_type::iq4_nl:
    case ggml_type::iq4_xs: return ggml_row_bytes(t, n);
  }
  return 0;
}

[[noreturn]] void bad_weights(const tensor_view& w, const char* op, const std::string& what) {
  throw engine_error(std::string(op) + ": tensor '" + w.name + "' " + what);
}

// Checked on every call (hundreds per token): no allocation unless it fails.
cpu::weights weights_of(const tensor_view& w, const char* op) {
  if (!w.data) bad_weights(w, op, "is absent");
  switch (w.type) {
    case ggml_type::f32:
    case ggml_type::f16:
    case ggml_type::bf16:
    case ggml_type::q8_0:
    case ggml_type::q4_0:
    case ggml_type::q2_k:
    case ggml_type::q3_k:
    case ggml_type::q4_k:
    case ggml_type::q5_k:
    case ggml_type::q6_k:
    case ggml_type::iq4_nl:
    case ggml_type::iq4_xs: break;
    default:
      bad_weights(w, op, "has ggml type " + std::to_string(uint32_t(w.type)) +
                             ", which the CPU kernels do not support (F32, F16, BF16, Q8_0, Q4_0, "
                             "Q2_K..Q6_K, IQ4_NL, IQ4_XS)");
  }
  if (is_quantized(w.type) && w.ne[0] % 32 != 0)
    bad_weights(w, op, "has rows of " + std::to_string(w.ne[0]) +
                           " elements, not a multiple of the 32-element block");
  if (w.type == ggml_type::iq4_nl && w.ne[0] % 32 != 0)
    bad_weights(w, op, "has rows of " + std::to_string(w.ne[0]) +
                           " elements, not a multiple of the 32-element IQ4_NL block");
  if ((ggml_is_k_quant(w.type) || w.type == ggml_type::iq4_xs) && w.ne[0] % 256 != 0)
    bad_weights(w, op, "has rows of " + std::to_string(w.ne[0]) +
                           " elements, not a multiple of the 256-element K-quant super-block");
  return cpu::weights{w.type, w.ne[0], w.rows(), row_bytes_of(w.type, w.ne[0]), w.data};
}

// Up to this many tokens, matmul runs the matrix-vector kernel on groups of 4 tokens (the
// GEMM's 16- or 32-token tiles would be mostly padding).
constexpr int64_t gemm_min_tokens = 16;

// Below this many multiply-adds a matmul runs on the caller alone: a pool round trip
// (~1-2 us) would cost more than it saves.
constexpr int64_t parallel_min_macs = 1 << 16;

template <class F>
void run_split(thread_pool& pool, int64_t macs, F& fn) {
  if (macs < parallel_min_macs || pool.size() == 1)
    fn(0, 1);
  else
    pool.run(std::ref(fn));  // std::function of a reference: no allocation per call
}

// Thread ith's rows of [0, n): contiguous, in multiples of `align` rows.
void split_rows(int64_t n, int64_t align, int ith, int nth, int64_t& r0, int64_t& r1) {
  int64_t u0, u1;
  split_range((n + align - 1) / align, ith, nth, u0, u1);
  r0 = std::min(n, u0 * align);
  r1 = std::min(n, u1 * align);
}

}  // namespace

void cpu::quantize_q8k(const float* x, block_q8k* xq, int64_t n) {
  for (int64_t b = 0; b < n / 256; ++b, x += 256) {
    block_q8k& o = xq[b];
    float amax = 0.0f, mx = 0.0f;
    for (int i = 0; i < 256; ++i)
      if (std::fabs(x[i]) > amax) {
        amax = std::fabs(x[i]);
        mx = x[i];
      }
    if (amax == 0.0f) {
      std::memset(&o, 0, sizeof(o));
      continue;
    }
    const float iscale = -127.0f / mx;
    for (int i = 0; i < 256; ++i) {
      // round to nearest even by adding 1.5*2^23 (|iscale*x| <= 127): no libm call
      const float v = iscale * x[i] + 12582912.0f;
      int32_t bits;
      std::memcpy(&bits, &v, 4);
      o.q[i] = int8_t(std::min(127, (bits & 0x007fffff) - 0x00400000));
    }
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int i = 0; i < 16; ++i) s += o.q[16 * g + i];
      o.bsums[g] = int16_t(s);
    }
    o.d = 1.0f / iscale;
  }
}

// The matrix-vector drivers' loop: output rows split over the pool, in chunks of ~64 KB of
// weights, each chunk multiplied by every group of up to `group` tokens while it is still in
// L2 (the weights come from memory once for all the tokens): f(c0, c1, t0, nt) does rows
// [c0, c1) for tokens [t0, t0 + nt).
template <class F>
void for_row_chunks(thread_pool& pool, int64_t macs, const cpu::weights& cw, int64_t n_tok, int64_t group, F&& f) {
  const int64_t chunk = std::max<int64_t>(4, int64_t(65536 / cw.row_bytes) / 4 * 4);
  auto rows_job = [&](int ith, int nth) {
    int64_t r0, r1;
    split_rows(cw.out, 16, ith, nth, r0, r1);
    for (int64_t c0 = r0; c0 < r1; c0 += chunk) {
      const int64_t c1 = std::min(r1, c0 + chunk);
      for (int64_t t0 = 0; t0 < n_tok; t0 += group) f(c0, c1, t0, int(std::min<int64_t>(group, n_tok - t0)));
    }
  };
  run_split(pool, macs, rows_job);
}

// IQ4 weights: the activations rounded as llama.cpp rounds them for these types (IQ4_NL:
// Q8_0, the same blocks as for Q8_0/Q4_0 weights; IQ4_XS: Q8_K), then one integer kernel for
// every token count, on groups of up to 8 tokens, as the K-quants (cpu-kernels-simd-iq4.h).
static void matmul_iq4(thread_pool& pool, const kernel_table& k, const cpu::weights& cw, const float* x, int64_t n_tok,
                float* y) {
  const int64_t in = cw.in, out = cw.out, macs = in * out * n_tok;
  if (cw.type == ggml_type::iq4_nl) {
    const int64_t nb = in / 32;
    cpu::block_q8x* xq = tls_xq.get<cpu::block_q8x>(size_t(n_tok * nb));
    for (int64_t t = 0; t < n_tok; ++t) k.quantize_q8x(x + t * in, xq + t * nb, in);
    for_row_chunks(pool, macs, cw, n_tok, cpu::kq_max_tokens, [&](int64_t c0, int64_t c1, int64_t t0, int nt) {
      k.matvec_iq4nl(cw, xq + t0 * nb, nt, c0, c1, y + t0 * out, out);
    });
    return;
  }
  const int64_t nb = in / 256;
  cpu::block_q8k* xq = tls_xq.get<cpu::block_q8k>(size_t(n_tok * nb));
  for (int64_t t = 0; t < n_tok; ++t) cpu::quantize_q8k(x + t * in, xq + t * nb, in);
  for_row_chunks(pool, macs, cw, n_tok, cpu::kq_max_tokens, [&](int64_t c0, int64_t c1, int64_t t0, int nt) {
    k.matvec_iq4xs(cw, xq + t0 * nb, nt, c0, c1, y + t0 * out, out);
  });
}

void matmul(thread_pool& pool, const tensor_view& w, const float* x, int64_t n_tok, float* y) {
  const cpu::weights cw = weights_of(w, "matmul");
  const kernel_table& k = active();
  if (n_tok <= 0) return;
  const int64_t in = cw.in, out = cw.out;
  const bool quantized = is_quantized(cw.type);
  const int64_t macs = in * out * n_tok;

  if (ggml_is_iq4(cw.type)) {
    matmul_iq4(pool, k, cw, x, n_tok, y);
    return;
  }
  const bool kquant = ggml_is_k_quant(cw.type);
  // K-quants: the activations are rounded to Q8_K once; prefill runs the variant's integer
  // GEMM where it has one (AVX-512 VNNI), else (and for decode) the integer matrix-vector
  // kernel on groups of up to 8 tokens (each super-block unpacked once per group; a 64 KB
  // chunk of rows stays in L2 for all the groups).
  if (kquant) {
    const int64_t nb = in / 256;
    cpu::block_q8k* xq = tls_xq.get<cpu::block_q8k>(size_t(n_tok * nb));
    auto quant_job = [&](int ith, int nth) {  // tokens split between the threads
      int64_t t0, t1;
      split_range(n_tok, ith, nth, t0, t1);
      for (int64_t t = t0; t < t1; ++t) cpu::quantize_q8k(x + t * in, xq + t * nb, in);
    };
    if (n_tok >= gemm_min_tokens)
      run_split(pool, macs, quant_job);
    else
      quant_job(0, 1);
    if (n_tok >= gemm_min_tokens && k.gemm_k) {  // prefill: the variant's integer GEMM
      auto job = [&](int ith, int nth) {
        int64_t r0, r1;
        split_rows(out, k.gemm_k_rows, ith, nth, r0, r1);
        if (r0 >= r1) return;
        uint8_t* panel = tls_panel.get<uint8_t>(size_t(nb * k.gemm_k_block_bytes));
        k.gemm_k(cw, xq, n_tok, r0, r1, y, out, panel);
      };
      run_split(pool, macs, job);
      return;
    }
    for_row_chunks(pool, macs, cw, n_tok, cpu::kq_max_tokens, [&](int64_t c0, int64_t c1, int64_t t0, int nt) {
      k.matvec_k(cw, xq + t0 * nb, nt, c0, c1, y + t0 * out, out);
    });
    return;
  }
  if (n_tok < gemm_min_tokens) {
    const int64_t nb = in / 32;
    cpu::block_q8x* xq = nullptr;
    if (quantized) {
      xq = tls_xq.get<cpu::block_q8x>(size_t(n_tok * nb));
      for (int64_t t = 0; t < n_tok; ++t) k.quantize_q8x(x + t * in, xq + t * nb, in);
    }
    for_row_chunks(pool, macs, cw, n_tok, cpu::small_batch_max_tokens,
                   [&](int64_t c0, int64_t c1, int64_t t0, int nt) {
                     k.matvec(cw, x + t0 * in, in, xq ? xq + t0 * nb : nullptr, nt, c0, c1, y + t0 * out, out);
                   });
    return;
  }

  float* xt = tls_xt.get<float>(size_t(cpu::gemm_xt_floats(k, n_tok, in)));
  const int64_t n_tiles = cpu::gemm_n_tiles(k, n_tok);
  auto pack_job = [&](int ith, int nth) {
    int64_t j0, j1;
    split_range(n_tiles, ith, nth, j0, j1);
    if (j0 < j1) k.pack_x(x, n_tok, in, quantized, j0, j1, xt);
  };
  run_split(pool, macs, pack_job);
  auto gemm_job = [&](int ith, int nth) {
    int64_t r0, r1;
    split_rows(out, k.gemm_panel_rows, ith, nth, r0, r1);
    if (r0 >= r1) return;
    float* panel = tls_panel.get<float>(size_t(cpu::gemm_panel_floats(k, in)));
    k.gemm(cw, xt, n_tok, r0, r1, y, out, panel);
  };
  run_split(pool, macs, gemm_job);
}

void get_row(const tensor_view& w, int64_t r, float* dst) {
  const cpu::weights cw = weights_of(w, "get_row");
  if (r < 0 || r >= cw.out)
    throw engine_error("get_row: row " + std::to_string(r) + " of tensor '" + w.name +
                       "' is out of range (it has " + std::to_string(cw.out) + " rows)");
  if (ggml_is_iq4(cw.type))
    active().get_row_iq4(cw, r, dst);
  else
    active().get_row(cw, r, dst);
}

void rmsnorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  active().rmsnorm(x, w, y, n, eps);
}
void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps) {
  active().layernorm(x, w, b, y, n, eps);
}
void silu_mul(float* gate, const float* up, int64_t n) { active().silu_mul(gate, up, n); }
void gelu(float* x, int64_t n) { active().gelu(x, n); }
void softmax(float* x, int64_t n) { active().softmax(x, n); }
void add(float* y, const float* x, int64_t n) { active().add(y, x, n); }
float dot(const float* a, const float* b, int64_t n) { return active().dot(a, b, n); }
void axpy(float* y, float alpha, const float* x, int64_t n) { active().axpy(y, alpha, x, n); }

void rope_adjacent(float* x, int64_t n_heads, int64_t head_dim, int64_t rope_dims, int64_t pos,
                   float freq_base) {
  // cos/sin per pair, computed in double (the angle reaches thousands of radians) and kept
  // for the next call at the same position (q and k of every layer share it).
  struct table {
    int64_t pos = -1, rope_dims = -1;
    float base = 0.0f;
    std::vector<float> cs;  // (rope_dims/2, 2): cos, sin
  };
  thread_local table t;
  if (t.pos != pos || t.rope_dims != rope_dims || t.base != freq_base) {
    t.cs.resize(size_t(rope_dims / 2) * 2);
    for (int64_t i = 0; i < rope_dims / 2; ++i) {
      const double theta = double(pos) * std::pow(double(freq_base), -2.0 * double(i) / double(rope_dims));
      t.cs[2 * i] = float(std::cos(theta));
      t.cs[2 * i + 1] = float(std::sin(theta));
    }
    t.pos = pos;
    t.rope_dims = rope_dims;
    t.base = freq_base;
  }
  const float* cs = t.cs.data();
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < rope_dims / 2; ++i) {
      const float a = v[2 * i], b = v[2 * i + 1], c = cs[2 * i], s = cs[2 * i + 1];
      v[2 * i] = a * c - b * s;
      v[2 * i + 1] = a * s + b * c;
    }
  }
}

std::string cpu_kernel_variant() { return active().name; }

std::vector<std::string> cpu_kernel_variants_supported() {
  std::vector<std::string> names;
  for (const kernel_table* k : all_variants())
    if (cpu_can_run(k)) names.push_back(k->name);
  return names;
}

void set_cpu_kernel_variant(const std::string& name) {
  g_active.store(find_supported(name, "set_cpu_kernel_variant"), std::memory_order_release);
}

}  // namespace kvarena
