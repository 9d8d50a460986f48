// cuda-kernels.h: host-callable launchers of the CUDA kernels (cuda-kernels.cu: row and
// element kernels; cuda-attention.cu: attention). Every pointer argument is device memory
// unless a comment says otherwise; F16 data is passed as its uint16_t bits. All launches go
// on the given stream and return at once; a bad configuration throws (CUDA_CHECK_LAUNCH).
// Each kernel's CPU reference is named next to it (cuda-ref.h or the engine's ref::).
// Not here: which tokens a policy keeps, GEMMs (cuda-gemm.h), the forward pass.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "cuda-launch.h"
#include "cuda-memory.h"
#include "ggml-types.h"

namespace kvarena::cu {

// ---- rows and elements (cuda-kernels.cu) ----

// y: (n, dim) = rmsnorm(x) * w, row by row. ref::rmsnorm
void rmsnorm(const float* x, const float* w, float* y, int64_t n, int64_t dim, float eps, cudaStream_t st);
// y: (n, dim) = layernorm(x) * w + b (b may be null). ref::layernorm
void layernorm(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t dim,
               float eps, cudaStream_t st);
// Rotates the first rope_dims dims of each of n_heads heads of n rows of x (rows ld floats
// apart), row i at position pos[i] (device array); adjacent pairs, or NEOX halves.
// theta_j = pos * freq_scale * base^(-2j/rope_dims) / freq_factors[j] in double
// (freq_factors: device, (rope_dims/2,), or null). cu::rope_pair (cuda-rowmath.h);
// ref::rope_adjacent, detail::rope_neox (cuda_ref::rope)
void rope(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, int64_t rope_dims,
          const int32_t* pos, float freq_base, float freq_scale, const float* freq_factors, bool neox,
          cudaStream_t st);
// In place: each of the n_heads heads (head_dim floats) of n rows of x (rows ld apart) =
// rmsnorm(head) * w (w: (head_dim,)), qwen3's q/k norm. One warp per head. ref::rmsnorm per
// head (cuda_ref::rmsnorm_heads_emulated runs the kernel's arithmetic on the CPU)
void rmsnorm_heads(float* x, int64_t ld, int64_t n, int64_t n_heads, int64_t head_dim, const float* w, float eps,
                   cudaStream_t st);
// gate[i, j] = silu(gate[i, j]) * up[i, j] over (n, width), rows ld_gate / ld_up apart. ref::silu_mul
void silu_mul(float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n, int64_t width,
              cudaStream_t st);
// x = gelu(x) (tanh form) over n elements. ref::gelu
void gelu(float* x, int64_t n, cudaStream_t st);
// y += x over n elements.
void add(float* y, const float* x, int64_t n, cudaStream_t st);
// y[i, :] += b over (n, width), rows ld apart.
void add_bias(float* y, int64_t ld, const float* b, int64_t n, int64_t width, cudaStream_t st);
// x: (n, dim) F32 = rows tokens[i] of an F16 table (n_vocab, dim). cuda_ref::embed_f16
void embed_f16(const uint16_t* table, int64_t dim, const int32_t* tokens, int64_t n, float* x,
               cudaStream_t st);
// dst (n, width) = src converted to F16, rows ld_* elements apart: saturating (values beyond
// +-65504, the largest finite F16, infinities included, become +-65504; NaN stays NaN), then
// round to nearest even. Every GEMM input goes through it: an activation above 65504 (real
// models' SwiGLU outputs reach that) must not become inf and poison the GEMM.
// cuda_ref::f32_to_f16_sat
void f32_to_f16(const float* src, int64_t ld_src, uint16_t* dst, int64_t ld_dst, int64_t n,
                int64_t width, cudaStream_t st);
void f16_to_f32(const uint16_t* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t n,
                int64_t width, cudaStream_t st);
// out[r] = index of the largest of row r of x (n_rows, n_cols), rows ld apart; ties: the
// lowest index (greedy sampling, as kvarena::argmax).
void argmax(const float* x, int64_t n_rows, int64_t n_cols, int64_t ld, int32_t* out, cudaStream_t st);

// ---- weights kept quantized (cuda-quant.cu; types: cu::quant_on_device) ----

// Most tokens cu::qmatvec takes; more go through dequant_rows_f16 + the F16 GEMM.
constexpr int64_t k_qmatvec_max_tokens = 8;
// y: (n, rows) rows ldy apart = beta*y + x @ w^T, w: (rows, cols) quantized rows of type t as
// stored in the file, x: (n, cols) F16 rows ldx apart, 1 <= n <= 8. One warp per row decodes
// its blocks in registers (cu::dequant8). cols % 8 == 0. Reference: the rows dequantised
// (dequantize_row_ref) dotted with x.
void qmatvec(ggml_type t, const uint8_t* w, int64_t rows, int64_t cols, const uint16_t* x, int64_t ldx, int64_t n,
             float* y, int64_t ldy, float beta, cudaStream_t st);
// dst: (n_rows, cols) F16 = rows r0..r0+n_rows of w dequantised (cu::dequant8), rounded to
// nearest even: the prefill tile a GEMM then reads.
void dequant_rows_f16(ggml_type t, const uint8_t* w, int64_t r0, int64_t n_rows, int64_t cols, uint16_t* dst,
                      cudaStream_t st);

// ---- KV memory ----

// Writes n token rows of keys and values (F32, (n, n_kv*head_dim), rows ld apart) as F16
// into head-major caches: head g's row i at k16[g*head_stride + t*head_dim] with
// t = tok0 + i, or t = head_tok0[g] + i when head_tok0 (device, (n_kv,)) is given (heads of
// a policy's store hold different numbers of tokens).
void kv_write_f16(const float* k, const float* v, int64_t ld, int64_t n, int64_t n_kv, int64_t head_dim,
                  uint16_t* k16, uint16_t* v16, int64_t head_stride, int64_t tok0, cudaStream_t st,
                  const int32_t* head_tok0 = nullptr);
// The same for a batch: row i (one token of its own sequence) goes to head g at
// k_dst[i] + g*head_stride + slot[i]*head_dim (device arrays of n pointers and slots).
void kv_write_f16_rows(const float* k, const float* v, int64_t ld, int64_t n, int64_t n_kv, int64_t head_dim,
                       uint16_t* const* k_dst, uint16_t* const* v_dst, const int32_t* slot, int64_t head_stride,
                       cudaStream_t st);
// INT8 blocks: for each of n_units units u, the n_tok (<= 32) F16 rows src[u] (n_tok, D) are
// quantised with a symmetric per-channel scale: scale[u][c] = max_t |x| / 127,
// q = round_half_even(x / scale), clamped to [-127, 127]. Unit u reads src + u*src_stride,
// writes q + u*q_stride and scale + u*scale_stride. kv_quantize_block
void kv_quantize_f16(const uint16_t* src, int64_t src_stride, int64_t n_units, int64_t n_tok,
                     int64_t head_dim, int8_t* q, int64_t q_stride, float* scale, int64_t scale_stride,
                     cudaStream_t st);
// dst row dst_idx[j] (or j when dst_idx is null) = src row src_idx[j] (or j when src_idx is
// null), for j < n (row_bytes each). dst and src must not overlap (compaction gathers into a
// scratch buffer).
// cuda_ref::gather_rows
void gather_rows(const void* src, void* dst, int64_t row_bytes, const int32_t* src_idx, const int32_t* dst_idx,
                 int64_t n, cudaStream_t st);

// ---- FreeKV pages ----

// Per unit (page, KV head): keys (page, D) F16 at keys + u*unit_stride -> per-channel
// kmin/kmax (n_units, D). cuda_ref::page_digest
void page_digest(const uint16_t* keys, int64_t unit_stride, int64_t n_units, int64_t page,
                 int64_t head_dim, float* kmin, float* kmax, cudaStream_t st);
// Page scores of candidate pages cand (n_cand) under query q (n_heads, D):
// b[h][j] = scale * sum_c max(q_hc * kmax[cand_j, g, c], q_hc * kmin[cand_j, g, c]) (Quest),
// softmax over j per query head, mean over the group: out (n_kv, n_cand).
// kmin/kmax: (n_pages, n_kv, D). bounds: scratch (n_heads, n_cand). cuda_ref::page_scores
void page_scores(const float* q, const float* kmin, const float* kmax, const int32_t* cand,
                 int64_t n_cand, int64_t n_heads, int64_t n_kv, int64_t head_dim, float scale,
                 float* bounds, float* out, cudaStream_t st);

// ---- attention (cuda-attention.cu) ----

// One contiguous run of tokens of one KV head on the device, FP16 or INT8 (kv_span's layout:
// token-major rows of head_dim; INT8 x = q * scale[block[t]][c]). Pointers 16-byte aligned.
struct kv_span_dev {
  int64_t n = 0;                   // tokens
  int64_t tok0 = 0;                // index of its first token within its head (set by finish())
  const uint16_t* k16 = nullptr;   // fp16: (n, D)
  const uint16_t* v16 = nullptr;
  const int8_t* kq = nullptr;      // int8 when set: (n, D)
  const int8_t* vq = nullptr;
  const int32_t* block = nullptr;  // int8: (n,) scale block of each token
  const float* k_scale = nullptr;  // int8: (n_blocks, D)
  const float* v_scale = nullptr;
  float* mass = nullptr;           // (n,) or null: probability mass is added here
};
// The spans [span0, span0 + n_spans) of a span table, in position order; n_tokens in all.
struct kv_head_dev {
  int32_t span0 = 0, n_spans = 0;
  int64_t n_tokens = 0;
};

// Host-built table of heads and spans, uploaded before each attention call. Head index =
// seq * n_kv + g (sequences of a batch after one another).
class kv_span_table {
 public:
  void clear();
  void begin_head();               // the next head's spans follow
  void add_span(const kv_span_dev& s);  // empty spans are dropped
  int64_t n_heads() const { return int64_t(heads_.size()); }
  int64_t max_tokens() const;
  const std::vector<kv_head_dev>& heads() const { return heads_; }
  const std::vector<kv_span_dev>& spans() const { return spans_; }
  // Copies both arrays to the device (grown on demand) on stream st, staged through a pinned
  // ring (cuda_upload_ring): asynchronous, and the host arrays may change at once. One
  // stream per table.
  void upload(cuda_allocator& a, cudaStream_t st);
  const kv_head_dev* d_heads() const { return d_heads_.data(); }
  const kv_span_dev* d_spans() const { return d_spans_.data(); }

 private:
  std::vector<kv_head_dev> heads_;
  std::vector<kv_span_dev> spans_;
  cuda_buffer<kv_head_dev> d_heads_;
  cuda_buffer<kv_span_dev> d_spans_;
  cuda_upload_ring stage_;
};

struct span_attention_args {
  const kv_head_dev* heads = nullptr;  // device (n_seq * n_kv)
  const kv_span_dev* spans = nullptr;  // device
  int64_t n_seq = 1, n_kv = 0, n_heads = 0, head_dim = 0;
  int64_t n_q = 1;           // query rows per sequence (1: decode)
  int64_t max_tokens = 0;    // most tokens of any head
  const float* q = nullptr;  // row r = seq*n_q + i at q + r*ldq; head h at + h*head_dim
  int64_t ldq = 0;
  float* out = nullptr;      // same layout, ldo
  int64_t ldo = 0;
  float scale = 1.f;
  bool mass = false;         // add probability mass into the spans' mass columns
  float mass_decay = 1.f;    // query i's mass weighted mass_decay^(n_q - 1 - i) (kv_attend's)
  int64_t force_splits = 0;  // tests: >0 overrides the split plan's n_splits
};

// Scratch of the attention calls, grown on demand and kept (decode allocates nothing once warm).
struct attention_scratch {
  cuda_buffer<float> partial;  // (rows*n_heads, n_splits, head_dim + 2): acc, m, l per split
  cuda_buffer<float> stats;    // (rows*n_heads, 2): final max and normaliser
};

// out[r, h] = sum_t softmax_t(scale * q[r,h] . k[g,t]) v[g,t] over the tokens row i of its
// sequence sees (causal by index, as ref::kv_attend), g = h / (n_heads / n_kv). GQA: one
// block per (split, KV head, row) handles the group's query heads; INT8 dequantised in the
// load; split-K partials merged by a second kernel; mass by a third pass (recomputes the
// scores with the final max and normaliser). head_dim % 8 == 0, <= 256. ref::kv_attend
void attend_spans(const span_attention_args& a, attention_scratch& scratch, cuda_allocator& alloc,
                  cudaStream_t st);

// Causal prefill attention over contiguous FP16 head-major caches: k16/v16 head g at
// + g*head_stride, (n_tokens, D) token-major; the n_q queries are the last n_q positions.
// q/out: (n_q, n_heads, D) rows ldq/ldo apart. Tiled online softmax; no mass.
// ref::kv_attend with one FP16 span per head.
void attend_prefill(const uint16_t* k16, const uint16_t* v16, int64_t head_stride, int64_t n_tokens,
                    int64_t n_kv, int64_t n_heads, int64_t head_dim, const float* q, int64_t ldq,
                    int64_t n_q, float scale, float* out, int64_t ldo, cudaStream_t st);

// Device facts the launchers need (cached per device).
int sm_count();
size_t max_smem_optin();

}  // namespace kvarena::cu
