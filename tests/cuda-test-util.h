// cuda-test-util.h: helpers shared by the CUDA backend's tests (test-cuda*.cpp): the device
// check and REQUIRE_GPU() skip, the CPU reference logits (cpu_logits_all),
// expect_close, a stream + allocator with upload/download (gpu_ctx), the synthetic span
// attention cases (attn_case, over kv-span-fixture.h), and a kv_store head as host arrays
// (host_head, copy_head, expect_same_head) with random keep sets.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda-check.h"
#include "cuda-kernels.h"
#include "cuda-kv-store.h"
#include "cuda-memory.h"
#include "cuda-ref.h"
#include "model-forward.h"
#include "kv/kv-attention-cpu.h"
#include "kv/kv-store.h"
#include "kv-span-fixture.h"

namespace kvarena::test {

inline bool have_gpu() {
  static const int n = cuda_device_count();
  return n > 0;
}

#define REQUIRE_GPU()                                                                            \
  do {                                                                                           \
    if (!::kvarena::test::have_gpu())                                                            \
      GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount failed or returned 0); the GPU "       \
                      "agreement tests run on a GPU machine (scripts/gpu-check.sh)";             \
  } while (0)

inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, float atol, float rtol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0, worst = 0;
  double worst_err = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - double(want[i]));
    const double tol = atol + rtol * std::fabs(double(want[i]));
    if (!(err <= tol)) ++bad;
    if (!(err <= worst_err) || std::isnan(err)) worst_err = err, worst = i;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements off; worst at " << worst
                     << ": got " << got[worst] << " want " << want[worst] << " (atol " << atol << ", rtol "
                     << rtol << ")";
}

// ---- device helpers (GPU tests only) ----

struct gpu_ctx {
  cuda_allocator alloc;
  cudaStream_t st = nullptr;
  gpu_ctx() { CUDA_CHECK(cudaStreamCreate(&st)); }
  ~gpu_ctx() {
    (void)cudaStreamSynchronize(st);
    (void)cudaStreamDestroy(st);
  }
  template <class T>
  cuda_buffer<T> up(const std::vector<T>& v) {
    cuda_buffer<T> b(alloc, std::max<size_t>(v.size(), 1), "test");
    if (!v.empty()) CUDA_CHECK(cudaMemcpy(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return b;
  }
  template <class T>
  std::vector<T> down(const cuda_buffer<T>& b, size_t n) {
    CUDA_CHECK(cudaStreamSynchronize(st));
    std::vector<T> v(n);
    if (n) CUDA_CHECK(cudaMemcpy(v.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

// ---- synthetic KV spans (kv-span-fixture.h) ----

// seq -> head -> spans; head (b, g) has N_b - 13*g tokens.
struct attn_case {
  int64_t n_seq = 1, n_kv = 2, group = 4, d = 64, n_q = 1;
  std::vector<int64_t> n_tokens;  // (n_seq,)
  layout lay = layout::fp16;
  std::vector<std::vector<std::vector<span_data>>> data;  // (n_seq, n_kv, spans)
  std::vector<float> q;                                   // (n_seq*n_q, n_heads*d)

  int64_t n_heads() const { return n_kv * group; }
  void build(uint32_t seed) {
    std::mt19937 rng(seed);
    data.assign(size_t(n_seq), {});
    for (int64_t b = 0; b < n_seq; ++b) {
      data[size_t(b)].resize(size_t(n_kv));
      for (int64_t g = 0; g < n_kv; ++g) {
        const int64_t N = std::max<int64_t>(n_q, n_tokens[size_t(b)] - 13 * g);
        for (auto [n, i8] : span_lengths(rng, lay, N)) data[size_t(b)][size_t(g)].push_back(make_span(rng, n, d, i8));
      }
    }
    q = uniform(rng, n_seq * n_q * n_heads() * d, -1.f, 1.f);
  }
  // Host-pointer table (for the references).
  cu::kv_span_table host_table(bool with_mass) {
    cu::kv_span_table t;
    for (auto& seq : data)
      for (auto& head : seq) {
        t.begin_head();
        for (span_data& s : head) t.add_span(dev_span(s, with_mass));
      }
    return t;
  }
  static cu::kv_span_dev dev_span(span_data& s, bool with_mass) {
    cu::kv_span_dev sp;
    sp.n = s.n;
    if (s.int8) {
      sp.kq = s.kq.data(), sp.vq = s.vq.data(), sp.block = s.block.data();
      sp.k_scale = s.ks.data(), sp.v_scale = s.vs.data();
    } else {
      sp.k16 = s.k16.data(), sp.v16 = s.v16.data();
    }
    sp.mass = with_mass ? s.mass.data() : nullptr;
    return sp;
  }
  std::vector<float> masses() const {
    std::vector<float> m;
    for (const auto& seq : data)
      for (const auto& h : seq)
        for (const span_data& s : h) m.insert(m.end(), s.mass.begin(), s.mass.end());
    return m;
  }
  void reset_mass() {
    for (auto& seq : data)
      for (auto& h : seq)
        for (span_data& s : h) s.mass.assign(size_t(s.n), 0.25f);
  }
  // ref::kv_attend per sequence: out (n_seq*n_q, n_heads*d); masses added.
  std::vector<float> reference(bool with_mass) {
    const int64_t H = n_heads();
    std::vector<float> out(size_t(n_seq * n_q * H * d));
    cu::kv_span_table t = host_table(with_mass);
    for (int64_t b = 0; b < n_seq; ++b) {
      std::vector<kv_attn_head> heads = cuda_ref::attn_heads(t, b, n_kv);
      ref::kv_attend(heads, d, q.data() + b * n_q * H * d, H * d, n_q, H, scale(), out.data() + b * n_q * H * d,
                     H * d);
    }
    return out;
  }
  float scale() const { return 1.f / std::sqrt(float(d)); }
  cu::span_attention_args args(float* out) const {
    cu::span_attention_args a;
    a.n_seq = n_seq, a.n_kv = n_kv, a.n_heads = n_heads(), a.head_dim = d, a.n_q = n_q;
    a.q = q.data(), a.ldq = n_heads() * d, a.out = out, a.ldo = n_heads() * d, a.scale = scale();
    return a;
  }
};

inline std::string case_name(const attn_case& c) {
  return "seq=" + std::to_string(c.n_seq) + " kv=" + std::to_string(c.n_kv) + " group=" + std::to_string(c.group) +
         " d=" + std::to_string(c.d) + " n_q=" + std::to_string(c.n_q) + " N=" + std::to_string(c.n_tokens[0]) +
         " layout=" + layout_name(c.lay);
}

inline std::vector<attn_case> attention_cases() {
  std::vector<attn_case> cs;
  auto add = [&](int64_t n_seq, int64_t n_kv, int64_t group, int64_t d, int64_t n_q, std::vector<int64_t> n,
                 layout l) {
    attn_case c;
    c.n_seq = n_seq, c.n_kv = n_kv, c.group = group, c.d = d, c.n_q = n_q, c.n_tokens = std::move(n), c.lay = l;
    cs.push_back(std::move(c));
  };
  add(1, 2, 4, 64, 1, {1}, layout::fp16);                 // a single token
  add(1, 2, 4, 64, 1, {100}, layout::fp16);               // decode, one partial tile
  add(1, 1, 8, 128, 1, {777}, layout::int8_fp16);         // INT8 + FP16 segments
  add(1, 2, 4, 128, 1, {1500}, layout::pages);            // FreeKV page slots + window
  add(1, 4, 1, 64, 5, {300}, layout::int8_fp16);          // MHA, a chunk of 5 queries
  add(3, 2, 2, 64, 1, {40, 333, 1030}, layout::fp16);     // a batch of unequal sequences
  add(2, 2, 4, 64, 3, {97, 500}, layout::pages);          // batch of chunks over pages
  return cs;
}

// ---- a kv_store head as host arrays ----

// A kv_store head as plain host arrays (what the device holds).
struct host_head {
  int64_t n8 = 0, n16 = 0, nb = 0, d = 0;
  std::vector<int8_t> kq, vq;
  std::vector<int32_t> block, pos;
  std::vector<float> ks, vs;
  std::vector<uint16_t> k16, v16;
};

inline host_head copy_head(kv_store& s, int64_t layer, int64_t g) {
  const kv_head_view v = s.head_view(layer, g);
  host_head h;
  h.d = v.head_dim, h.n8 = v.n_int8, h.n16 = v.n_fp16_all();
  for (int64_t t = 0; t < v.n_int8; ++t) h.nb = std::max<int64_t>(h.nb, v.block[t] + 1);
  h.kq.assign(v.k_q, v.k_q + h.n8 * h.d), h.vq.assign(v.v_q, v.v_q + h.n8 * h.d);
  h.block.assign(v.block, v.block + h.n8), h.pos.assign(v.pos, v.pos + h.n8 + h.n16);
  h.ks.assign(v.k_scale, v.k_scale + h.nb * h.d), h.vs.assign(v.v_scale, v.v_scale + h.nb * h.d);
  h.k16.assign(v.k16, v.k16 + v.n_fp16 * h.d), h.v16.assign(v.v16, v.v16 + v.n_fp16 * h.d);
  h.k16.insert(h.k16.end(), v.k16b, v.k16b + v.n_fp16b * h.d);  // the ring's wrapped part
  h.v16.insert(h.v16.end(), v.v16b, v.v16b + v.n_fp16b * h.d);
  return h;
}

inline void expect_same_head(const host_head& a, const host_head& b, const std::string& what) {
  EXPECT_EQ(a.n8, b.n8) << what;
  EXPECT_EQ(a.n16, b.n16) << what;
  EXPECT_EQ(a.nb, b.nb) << what;
  EXPECT_EQ(a.pos, b.pos) << what;
  EXPECT_EQ(a.block, b.block) << what;
  EXPECT_EQ(a.kq, b.kq) << what;
  EXPECT_EQ(a.vq, b.vq) << what;
  EXPECT_EQ(a.ks, b.ks) << what;
  EXPECT_EQ(a.vs, b.vs) << what;
  EXPECT_EQ(a.k16, b.k16) << what;
  EXPECT_EQ(a.v16, b.v16) << what;
}

// Random ascending subset of [0, n) of about `frac` of it.
inline std::vector<int32_t> random_keep(std::mt19937& rng, int64_t n, double frac) {
  std::vector<int32_t> k;
  std::bernoulli_distribution keep(frac);
  for (int64_t i = 0; i < n; ++i)
    if (keep(rng)) k.push_back(int32_t(i));
  return k;
}

inline // CPU logits of every position of `tokens` (plain F32 cache).
std::vector<float> cpu_logits_all(const model& m, const std::vector<int32_t>& tokens) {
  forward_options fo;
  fo.max_chunk = int64_t(tokens.size());
  fo.max_tokens = int64_t(tokens.size());
  forward_state st(m, fo);
  std::vector<float> out(tokens.size() * size_t(m.config.n_vocab));
  forward(m, st, tokens.data(), int64_t(tokens.size()), 0, logits_mode::all, out.data());
  return out;
}

}  // namespace kvarena::test
