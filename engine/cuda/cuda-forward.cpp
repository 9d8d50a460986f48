// cuda-forward.cpp: the forward pass on the GPU, sequences and sessions (see the header).
// The per-layer sequence mirrors model-forward-llama.cpp and model-forward-gpt2.cpp,
// including skipping the work the requested logits do not need (last layer: only the last
// row goes on).
#include "cuda-forward.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "cuda-check.h"
#include "kv/kv-confidence.h"
#include "engine-error.h"

namespace kvarena {

bool cuda_keep_quantized(const cuda_engine_options& opt) {
  const char* e = std::getenv("KVARENA_CUDA_WEIGHTS");
  if (!e || !*e) return opt.keep_quantized;
  const std::string v = e;
  if (v == "f16") return false;
  if (v == "native") return true;
  throw engine_error("KVARENA_CUDA_WEIGHTS=" + v + ": expected f16 (every matrix widened to F16) or native");
}

cuda_engine::cuda_engine(const model& m, const cuda_engine_options& opt) : opt_(opt) {
  if (cuda_device_count() == 0)
    throw engine_error("cuda: no CUDA device found (run on a machine with an NVIDIA GPU, or use the CPU backend)");
  check_cuda_model_config(m.config);
  if (opt_.max_chunk < 1 || opt_.max_batch < 1 || opt_.max_batch > 65535)
    throw engine_error("cuda: max_chunk and max_batch must be >= 1 (max_batch <= 65535)");
  alloc_ = std::make_unique<cuda_allocator>();
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  gemm_ = std::make_unique<cuda_gemm>(stream_);
  w_ = std::make_unique<cuda_model>(m, *alloc_, cuda_keep_quantized(opt_));
  // The weights went up with cudaMemcpy on the legacy default stream, which a non-blocking
  // stream does not wait for, and from pageable memory cudaMemcpy may return before its DMA
  // has finished: wait for every copy once here, before any kernel on stream_ reads them.
  CUDA_CHECK(cudaDeviceSynchronize());

  const model_config& c = m.config;
  const int64_t D = c.dim, QD = c.q_dim(), KV = c.kv_dim(), F = c.ffn_dim;
  const int64_t R = std::max(opt_.max_chunk, opt_.max_batch);
  rows_max_ = R;
  cuda_allocator& a = *alloc_;
  x_ = cuda_buffer<float>(a, size_t(R * D), "activations");
  xn_ = cuda_buffer<float>(a, size_t(R * D), "activations");
  xh_ = cuda_buffer<uint16_t>(a, size_t(R * std::max({D, QD, F})), "activations (f16)");
  qkv_ = cuda_buffer<float>(a, size_t(R * (QD + 2 * KV)), "q/k/v");
  att_ = cuda_buffer<float>(a, size_t(R * QD), "attention output");
  gu_ = cuda_buffer<float>(a, size_t(R * 2 * F), "ffn gate/up");
  logits_ = cuda_buffer<float>(a, size_t(opt_.max_batch * c.n_vocab), "logits");
  if (const int64_t qc = w_->max_quantized_cols(); qc > 0) {  // prefill tiles: 16M F16 elements at most
    deq_rows_ = std::max<int64_t>(64, (int64_t(16) << 20) / qc);
    deq_ = cuda_buffer<uint16_t>(a, size_t(deq_rows_ * qc), "dequantised weight tile (f16)");
  }
  tok_ = cuda_buffer<int32_t>(a, size_t(R), "tokens");
  pos_ = cuda_buffer<int32_t>(a, size_t(R), "positions");
  slot_ = cuda_buffer<int32_t>(a, size_t(R), "kv slots");
  best_ = cuda_buffer<int32_t>(a, size_t(opt_.max_batch), "greedy tokens");
  kdst_ = cuda_buffer<uint16_t*>(a, size_t(c.n_layers * opt_.max_batch), "batch kv pointers");
  vdst_ = cuda_buffer<uint16_t*>(a, size_t(c.n_layers * opt_.max_batch), "batch kv pointers");
  a.snapshot();
}

cuda_engine::~cuda_engine() {
  if (stream_) (void)cudaStreamSynchronize(stream_);
  gemm_.reset();  // its handle is bound to the stream
  if (stream_) (void)cudaStreamDestroy(stream_);
}

size_t cuda_engine::scratch_bytes() const {
  return x_.bytes() + xn_.bytes() + xh_.bytes() + deq_.bytes() + qkv_.bytes() + att_.bytes() + gu_.bytes() + logits_.bytes() +
         tok_.bytes() + pos_.bytes() + slot_.bytes() + best_.bytes() + kdst_.bytes() + vdst_.bytes() +
         attn_.partial.bytes() + attn_.stats.bytes();
}

void cuda_engine::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

void cuda_engine::check_tokens(const int32_t* tokens, int64_t n) const {
  const int64_t V = config().n_vocab;
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= V)
      throw engine_error("cuda: token id " + std::to_string(tokens[i]) + " out of range [0, " + std::to_string(V) + ")");
}

void cuda_engine::check_positions(int64_t end) const {
  if (w_->pos_embd() && end > config().n_ctx)
    throw engine_error("cuda: position " + std::to_string(end - 1) + " is past the model's learned positions (n_ctx " +
                       std::to_string(config().n_ctx) + "): use a context of at most n_ctx tokens");
}

void cuda_engine::upload_ints(const std::vector<int32_t>& host, int32_t* dev) {
  // Through the pinned ring: asynchronous, and host_ints_ may be refilled right after.
  stage_.upload(dev, host.data(), host.size() * 4, *alloc_, stream_);
}

void cuda_engine::mm(const cuda_matrix& W, const uint16_t* x, int64_t ldx, int64_t n, float* y, int64_t ldy,
                     float beta) {
  int64_t r0 = 0;  // the part's first output column in y
  for (const cuda_matrix_part& p : W.parts) {
    if (p.type == ggml_type::f16) {
      gemm_->matmul_f16(reinterpret_cast<const uint16_t*>(p.data), p.rows, p.cols, x, ldx, n, y + r0, ldy, beta);
    } else if (n <= cu::k_qmatvec_max_tokens) {
      cu::qmatvec(p.type, p.data, p.rows, p.cols, x, ldx, n, y + r0, ldy, beta, stream_);
    } else {
      for (int64_t t0 = 0; t0 < p.rows; t0 += deq_rows_) {  // row tiles through deq_
        const int64_t tr = std::min(deq_rows_, p.rows - t0);
        cu::dequant_rows_f16(p.type, p.data, t0, tr, p.cols, deq_.data(), stream_);
        gemm_->matmul_f16(deq_.data(), tr, p.cols, x, ldx, n, y + r0 + t0, ldy, beta);
      }
    }
    r0 += p.rows;
  }
}

void cuda_engine::layer_body(int64_t l, int64_t n_rows, const float* att, float* x_rows) {
  const model_config& c = config();
  const int64_t D = c.dim, QD = c.q_dim(), F = c.ffn_dim;
  const cuda_layer_weights& W = w_->layer(l);
  cu::f32_to_f16(att, QD, xh_.data(), QD, n_rows, QD, stream_);  // att: (n_rows, QD)
  mm(W.wo, xh_.data(), QD, n_rows, x_rows, D, 1.f);
  if (W.bo.data()) cu::add_bias(x_rows, D, W.bo.data(), n_rows, D, stream_);
  norm(x_rows, W.ffn_norm.data(), W.ffn_norm_b.data(), xn_.data(), n_rows);
  cu::f32_to_f16(xn_.data(), D, xh_.data(), D, n_rows, D, stream_);
  if (c.arch == model_arch::gpt2) {  // up (+ bias), GELU, down (+ bias)
    mm(W.w_up, xh_.data(), D, n_rows, gu_.data(), F);
    cu::add_bias(gu_.data(), F, W.b_up.data(), n_rows, F, stream_);
    cu::gelu(gu_.data(), n_rows * F, stream_);
    cu::f32_to_f16(gu_.data(), F, xh_.data(), F, n_rows, F, stream_);
  } else {
    mm(W.w_gate_up, xh_.data(), D, n_rows, gu_.data(), 2 * F);
    cu::silu_mul(gu_.data(), 2 * F, gu_.data() + F, 2 * F, n_rows, F, stream_);
    cu::f32_to_f16(gu_.data(), 2 * F, xh_.data(), F, n_rows, F, stream_);
  }
  mm(W.w_down, xh_.data(), F, n_rows, x_rows, D, 1.f);
  if (W.b_down.data()) cu::add_bias(x_rows, D, W.b_down.data(), n_rows, D, stream_);
}

void cuda_engine::norm(const float* x, const float* w, const float* b, float* y, int64_t n) {
  const model_config& c = config();
  if (c.arch == model_arch::gpt2) {
    cu::layernorm(x, w, b, y, n, c.dim, c.norm_eps, stream_);
  } else {
    cu::rmsnorm(x, w, y, n, c.dim, c.norm_eps, stream_);
  }
}

void cuda_engine::embed(int64_t n) {
  const int64_t D = config().dim;
  cu::embed_f16(w_->tok_embd(), D, tok_.data(), n, x_.data(), stream_);
  if (w_->pos_embd()) {  // gpt2: learned position embeddings of pos_ (xn_ is free here)
    cu::embed_f16(w_->pos_embd(), D, pos_.data(), n, xn_.data(), stream_);
    cu::add(x_.data(), xn_.data(), n * D, stream_);
  }
}

void cuda_engine::qkv(int64_t l, int64_t n) {
  const model_config& c = config();
  const int64_t D = c.dim, QD = c.q_dim(), hd = c.head_dim, ldq = QD + 2 * c.kv_dim();
  const cuda_layer_weights& W = w_->layer(l);
  norm(x_.data(), W.attn_norm.data(), W.attn_norm_b.data(), xn_.data(), n);
  cu::f32_to_f16(xn_.data(), D, xh_.data(), D, n, D, stream_);
  mm(W.wqkv, xh_.data(), D, n, qkv_.data(), ldq);  // (n, QD | KV | KV)
  if (W.bqkv.data()) cu::add_bias(qkv_.data(), ldq, W.bqkv.data(), n, ldq, stream_);
  if (W.q_norm.data()) {  // qwen3: each q and k head RMS-normalised before RoPE
    cu::rmsnorm_heads(qkv_.data(), ldq, n, c.n_heads, hd, W.q_norm.data(), c.norm_eps, stream_);
    cu::rmsnorm_heads(qkv_.data() + QD, ldq, n, c.n_kv_heads, hd, W.k_norm.data(), c.norm_eps, stream_);
  }
  if (c.rope_dims > 0) {  // gpt2 has none
    const float* ff = w_->rope_freq_factors();
    cu::rope(qkv_.data(), ldq, n, c.n_heads, hd, c.rope_dims, pos_.data(), c.rope_freq_base, c.rope_freq_scale, ff,
             c.rope_neox, stream_);
    cu::rope(qkv_.data() + QD, ldq, n, c.n_kv_heads, hd, c.rope_dims, pos_.data(), c.rope_freq_base,
             c.rope_freq_scale, ff, c.rope_neox, stream_);
  }
}

void cuda_engine::output_logits(float* x_rows, int64_t n) {
  const model_config& c = config();
  const int64_t D = c.dim;
  norm(x_rows, w_->output_norm(), w_->output_norm_b(), xn_.data(), n);
  cu::f32_to_f16(xn_.data(), D, xh_.data(), D, n, D, stream_);
  mm(w_->output(), xh_.data(), D, n, logits_.data(), c.n_vocab);
}

void cuda_engine::attend_chunk(cuda_sequence& s, int64_t l, int64_t n, int64_t r0, float scale) {
  const model_config& c = config();
  const int64_t QD = c.q_dim(), hd = c.head_dim, ldq = QD + 2 * c.kv_dim(), nq = n - r0;
  const float* q = qkv_.data() + r0 * ldq;
  cu::span_attention_args a;
  a.n_seq = 1, a.n_kv = c.n_kv_heads, a.n_heads = c.n_heads, a.head_dim = hd, a.n_q = nq;
  a.q = q, a.ldq = ldq, a.out = att_.data(), a.ldo = QD, a.scale = scale;
  if (!s.kvr_) {
    const int64_t N = s.n_past_ + n;
    if (nq > 1) {
      cu::attend_prefill(s.keys(l, 0), s.values(l, 0), s.cap_ * hd, N, c.n_kv_heads, c.n_heads, hd, q, ldq, nq,
                         scale, att_.data(), QD, stream_);
      return;
    }
    table_.clear();
    for (int64_t g = 0; g < c.n_kv_heads; ++g) {
      table_.begin_head();
      cu::kv_span_dev sp;
      sp.n = N;
      sp.k16 = s.keys(l, g);
      sp.v16 = s.values(l, g);
      table_.add_span(sp);
    }
  } else {
    cuda_kv_runtime& r = *s.kvr_;
    int64_t N = 0, hs = 0;
    const uint16_t *k16 = nullptr, *v16 = nullptr;
    if (r.needs().queries) r.select_pages(l, q + (nq - 1) * ldq);  // freekv: pages for this attention
    if (!r.needs_all_rows() && !r.needs().host_offload && nq > 1 &&
        r.store().uniform_fp16(l, &N, &k16, &v16, &hs)) {
      // Every head holds the same FP16 tokens contiguously: the tiled prefill kernel.
      cu::attend_prefill(k16, v16, hs, N, c.n_kv_heads, c.n_heads, hd, q, ldq, nq, scale, att_.data(), QD, stream_);
      r.after_attention(l);
      return;
    }
    table_.clear();
    r.add_spans(l, table_);
    a.mass = r.needs_all_rows();
    a.mass_decay = r.policy().mass_decay();  // confkv: the EMA per row of the chunk
  }
  table_.upload(*alloc_, stream_);
  a.heads = table_.d_heads(), a.spans = table_.d_spans(), a.max_tokens = table_.max_tokens();
  cu::attend_spans(a, attn_, *alloc_, stream_);
  if (s.kvr_) s.kvr_->after_attention(l);
}

void cuda_engine::forward(cuda_sequence& s, const int32_t* tokens, int64_t n, bool want_logits,
                          const step_signals* sig) {
  if (n < 1 || n > std::min(opt_.max_chunk, s.max_chunk()))
    throw engine_error("cuda: forward of " + std::to_string(n) + " tokens (1.." +
                       std::to_string(std::min(opt_.max_chunk, s.max_chunk())) + ")");
  if (s.n_past_ + n > s.cap_)
    throw engine_error("cuda: context full: " + std::to_string(s.n_past_) + " + " + std::to_string(n) +
                       " tokens exceed the sequence's capacity " + std::to_string(s.cap_));
  check_tokens(tokens, n);
  check_positions(s.n_past_ + n);
  const model_config& c = config();
  const int64_t D = c.dim, QD = c.q_dim(), KV = c.kv_dim(), hd = c.head_dim, ldq = QD + 2 * KV, pos0 = s.n_past_;
  const float scale = 1.f / std::sqrt(float(hd));
  cuda_kv_runtime* kvr = s.kvr_.get();
  if (kvr) {
    step_signals def;
    def.decode = n == 1 && pos0 > 0;
    kvr->begin_forward(sig ? *sig : def, pos0, n);
  }

  host_ints_.assign(tokens, tokens + n);
  upload_ints(host_ints_, tok_.data());
  for (int64_t i = 0; i < n; ++i) host_ints_[size_t(i)] = int32_t(pos0 + i);
  upload_ints(host_ints_, pos_.data());
  embed(n);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const bool last = l == c.n_layers - 1;
    qkv(l, n);
    if (kvr) {
      kvr->append(l, qkv_.data() + QD, qkv_.data() + QD + KV, ldq);
    } else {
      cu::kv_write_f16(qkv_.data() + QD, qkv_.data() + QD + KV, ldq, n, c.n_kv_heads, hd, s.keys(l, 0),
                       s.values(l, 0), s.cap_ * hd, pos0, stream_);
    }
    // The first row whose attention is needed (as detail::first_attention_row): in the last
    // layer only the last row goes on, unless the policy ranks by every row's attention;
    // a policy runs in every layer, so its attention always runs.
    int64_t r0 = 0;
    if (last) {
      if (!kvr && !want_logits) break;  // a prefill chunk that is not the last: only its KV
      r0 = kvr && kvr->needs_all_rows() ? 0 : n - 1;
    }
    attend_chunk(s, l, n, r0, scale);  // att_ rows 0.. = rows r0..n-1
    if (last && !want_logits) break;
    const int64_t rk = last ? n - 1 : 0, nr = n - rk;
    float* xr = x_.data() + rk * D;
    layer_body(l, nr, att_.data() + (rk - r0) * QD, xr);
    if (last) output_logits(xr, 1);
  }
  s.n_past_ += n;
  if (kvr) kvr->end_forward(0.0, step_confidence(s, 0, want_logits));
}

// The confidence of a decode step's logits (row `row` of the last output), for a policy
// gated on it; -1 when the sequence's policy does not gate or this was no decode step.
float cuda_engine::step_confidence(const cuda_sequence& s, int64_t row, bool have_logits) {
  const cuda_kv_runtime* kvr = s.kvr_.get();
  if (!kvr || !have_logits || !kvr->needs().logits_confidence || !kvr->decoding()) return -1.f;
  std::vector<float>& lg = conf_logits_;
  lg.resize(size_t(config().n_vocab));
  logits(row, lg.data());
  return confidence_from_logits(lg.data(), int64_t(lg.size()));
}

void cuda_engine::forward_batch(const std::vector<cuda_sequence*>& seqs, const int32_t* tokens, bool want_logits,
                                const std::vector<step_signals>* sigs) {
  const int64_t B = int64_t(seqs.size());
  if (B < 1 || B > opt_.max_batch)
    throw engine_error("cuda: batch of " + std::to_string(B) + " sequences (1.." + std::to_string(opt_.max_batch) + ")");
  const bool policy = seqs[0]->kvr_ != nullptr;
  for (int64_t b = 0; b < B; ++b) {
    const cuda_sequence& sb = *seqs[size_t(b)];
    if ((sb.kvr_ != nullptr) != policy)
      throw engine_error("cuda: forward_batch needs all sequences plain or all under a policy");
    if (!policy && sb.cap_ != seqs[0]->cap_) throw engine_error("cuda: forward_batch needs plain caches of equal capacity");
    if (sb.n_past_ + 1 > sb.cap_) throw engine_error("cuda: context full in batch sequence " + std::to_string(b));
    for (int64_t o = 0; o < b; ++o)
      if (seqs[size_t(o)] == seqs[size_t(b)]) throw engine_error("cuda: a sequence appears twice in one batch");
  }
  if (sigs && int64_t(sigs->size()) != B) throw engine_error("cuda: forward_batch needs one step_signals per sequence");
  check_tokens(tokens, B);
  for (const cuda_sequence* sb : seqs) check_positions(sb->n_past_ + 1);
  const model_config& c = config();
  const int64_t QD = c.q_dim(), KV = c.kv_dim(), hd = c.head_dim, ldq = QD + 2 * KV, cap = seqs[0]->cap_;
  const float scale = 1.f / std::sqrt(float(hd));
  bool mass = false;
  for (int64_t b = 0; b < B; ++b)
    if (cuda_kv_runtime* r = seqs[size_t(b)]->kvr_.get()) {
      step_signals def;
      def.decode = seqs[size_t(b)]->n_past_ > 0;
      r->begin_forward(sigs ? (*sigs)[size_t(b)] : def, seqs[size_t(b)]->n_past_, 1);
      mass = mass || r->needs_all_rows();
    }

  host_ints_.assign(tokens, tokens + B);
  upload_ints(host_ints_, tok_.data());
  for (int64_t b = 0; b < B; ++b) host_ints_[size_t(b)] = int32_t(seqs[size_t(b)]->n_past_);
  upload_ints(host_ints_, pos_.data());
  if (!policy) {
    upload_ints(host_ints_, slot_.data());
    std::vector<uint16_t*> kp(size_t(c.n_layers * B)), vp(kp.size());
    for (int64_t l = 0; l < c.n_layers; ++l)
      for (int64_t b = 0; b < B; ++b) {
        kp[size_t(l * B + b)] = seqs[size_t(b)]->keys(l, 0);
        vp[size_t(l * B + b)] = seqs[size_t(b)]->values(l, 0);
      }
    stage_.upload(kdst_.data(), kp.data(), kp.size() * sizeof(uint16_t*), *alloc_, stream_);
    stage_.upload(vdst_.data(), vp.data(), vp.size() * sizeof(uint16_t*), *alloc_, stream_);
  }
  embed(B);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const bool last = l == c.n_layers - 1;
    qkv(l, B);
    table_.clear();
    int64_t max_tokens = 0;
    if (policy) {
      for (int64_t b = 0; b < B; ++b) {
        cuda_kv_runtime& r = *seqs[size_t(b)]->kvr_;
        r.append(l, qkv_.data() + b * ldq + QD, qkv_.data() + b * ldq + QD + KV, ldq);
        if (r.needs().queries) r.select_pages(l, qkv_.data() + b * ldq);  // freekv
        r.add_spans(l, table_);
      }
      max_tokens = table_.max_tokens();
    } else {
      cu::kv_write_f16_rows(qkv_.data() + QD, qkv_.data() + QD + KV, ldq, B, c.n_kv_heads, hd, kdst_.data() + l * B,
                            vdst_.data() + l * B, slot_.data(), cap * hd, stream_);
      if (last && !want_logits) break;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t g = 0; g < c.n_kv_heads; ++g) {
          table_.begin_head();
          cu::kv_span_dev sp;
          sp.n = seqs[size_t(b)]->n_past_ + 1;
          sp.k16 = seqs[size_t(b)]->keys(l, g);
          sp.v16 = seqs[size_t(b)]->values(l, g);
          table_.add_span(sp);
          max_tokens = std::max(max_tokens, sp.n);
        }
    }
    table_.upload(*alloc_, stream_);
    cu::span_attention_args a;
    a.heads = table_.d_heads(), a.spans = table_.d_spans();
    a.n_seq = B, a.n_kv = c.n_kv_heads, a.n_heads = c.n_heads, a.head_dim = hd, a.n_q = 1, a.max_tokens = max_tokens;
    a.q = qkv_.data(), a.ldq = ldq, a.out = att_.data(), a.ldo = QD, a.scale = scale, a.mass = mass;
    cu::attend_spans(a, attn_, *alloc_, stream_);
    if (policy)
      for (int64_t b = 0; b < B; ++b) seqs[size_t(b)]->kvr_->after_attention(l);
    if (last && !want_logits) break;
    layer_body(l, B, att_.data(), x_.data());
    if (last) output_logits(x_.data(), B);
  }
  for (int64_t b = 0; b < B; ++b) {
    cuda_sequence* s = seqs[size_t(b)];
    s->n_past_ += 1;
    if (s->kvr_) s->kvr_->end_forward(0.0, step_confidence(*s, b, want_logits));
  }
}

void cuda_engine::logits(int64_t row, float* host) const {
  const int64_t V = config().n_vocab;
  KV_ASSERT(row >= 0 && row < opt_.max_batch);
  CUDA_CHECK(cudaMemcpyAsync(host, logits_.data() + row * V, size_t(V) * 4, cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

std::vector<int32_t> cuda_engine::argmax(int64_t rows) {
  KV_ASSERT(rows >= 1 && rows <= opt_.max_batch);
  const int64_t V = config().n_vocab;
  cu::argmax(logits_.data(), rows, V, V, best_.data(), stream_);
  std::vector<int32_t> out(static_cast<size_t>(rows));
  CUDA_CHECK(cudaMemcpyAsync(out.data(), best_.data(), out.size() * 4, cudaMemcpyDeviceToHost, stream_));
  synchronize();
  return out;
}

// ---- cuda_sequence ----

cuda_sequence::cuda_sequence(cuda_engine& e, int64_t max_tokens)
    : e_(&e), cap_(max_tokens), n_kv_(e.config().n_kv_heads), hd_(e.config().head_dim) {
  if (max_tokens < 1) throw engine_error("cuda: a sequence needs a capacity of at least 1 token");
  const size_t n = size_t(e.config().n_layers * n_kv_ * cap_ * hd_);
  k_ = cuda_buffer<uint16_t>(e.allocator(), n, "KV cache (keys)");
  v_ = cuda_buffer<uint16_t>(e.allocator(), n, "KV cache (values)");
  e.allocator().snapshot();
}

cuda_sequence::cuda_sequence(cuda_engine& e, int64_t max_tokens, const std::string& policy,
                             const kv_policy_options& o, bool overlap)
    : e_(&e), cap_(max_tokens), n_kv_(e.config().n_kv_heads), hd_(e.config().head_dim) {
  if (max_tokens < 1) throw engine_error("cuda: a sequence needs a capacity of at least 1 token");
  kv_runtime_config rc = cuda_kv_config(e.config(), policy, o, std::min(e.options().max_chunk, max_tokens));
  rc.overlap = overlap;
  kvr_ = std::make_unique<cuda_kv_runtime>(rc, e.allocator(), e.stream());
}

size_t cuda_sequence::kv_logical_bytes() const {
  if (kvr_) return kvr_->logical_bytes();
  return size_t(n_past_ * e_->config().n_layers * n_kv_) * kv_logical_fp16_token_bytes(hd_);
}

int64_t cuda_sequence::max_chunk() const { return kvr_ ? kvr_->max_chunk() : e_->options().max_chunk; }

void cuda_sequence::reset() {
  n_past_ = 0;
  if (kvr_) kvr_->reset();
}

void cuda_sequence::copy_from(const cuda_sequence& o) {
  if (kvr_ || o.kvr_) throw engine_error("cuda: copy_from is for plain caches (a policy's state cannot be copied)");
  KV_ASSERT(o.cap_ == cap_ && o.n_kv_ == n_kv_ && o.hd_ == hd_);
  CUDA_CHECK(cudaMemcpyAsync(k_.data(), o.k_.data(), k_.bytes(), cudaMemcpyDeviceToDevice, e_->stream()));
  CUDA_CHECK(cudaMemcpyAsync(v_.data(), o.v_.data(), v_.bytes(), cudaMemcpyDeviceToDevice, e_->stream()));
  n_past_ = o.n_past_;
}

// ---- cuda_session ----

cuda_session::cuda_session(cuda_engine& e, const cuda_session_options& opt)
    : e_(e), opt_(opt),
      seq_(opt.kv_policy.empty()
               ? cuda_sequence(e, opt.n_ctx > 0 ? opt.n_ctx : e.config().n_ctx)
               : cuda_sequence(e, opt.n_ctx > 0 ? opt.n_ctx : e.config().n_ctx, opt.kv_policy, opt.kv,
                               opt.kv_overlap)) {
  opt_.prefill_chunk = std::clamp<int64_t>(opt_.prefill_chunk, 1, seq_.max_chunk());
  opt_.prefill_chunk = std::min(opt_.prefill_chunk, e.options().max_chunk);
}

void cuda_session::check_room(int64_t n) const {
  if (seq_.n_past() + n > seq_.capacity())
    throw engine_error("cuda session: context full: " + std::to_string(seq_.n_past()) + " + " + std::to_string(n) +
                       " tokens exceed n_ctx " + std::to_string(seq_.capacity()));
}

// As session::forward_chunks: chunks; a decode step's policy gated on confidence sees that
// of the logits the step produces (the engine downloads them only then: step_confidence).
void cuda_session::run(std::span<const int32_t> tokens, bool decode) {
  const int64_t n = int64_t(tokens.size());
  for (int64_t i = 0; i < n; i += opt_.prefill_chunk) {
    const int64_t m = std::min(opt_.prefill_chunk, n - i);
    step_signals sig;
    sig.decode = decode;
    e_.forward(seq_, tokens.data() + i, m, i + m == n, &sig);
  }
  logits_fresh_ = false;
}

void cuda_session::append(std::span<const int32_t> tokens) {
  if (tokens.empty()) return;
  check_room(int64_t(tokens.size()));
  run(tokens, false);
}

void cuda_session::append_decode(int32_t token) {
  check_room(1);
  run(std::span<const int32_t>(&token, 1), true);
}

int32_t cuda_session::greedy_next() {
  if (seq_.n_past() == 0) throw engine_error("cuda session: no logits before the first token");
  const int32_t t = e_.argmax(1)[0];
  append_decode(t);
  return t;
}

const std::vector<float>& cuda_session::logits() {
  if (seq_.n_past() == 0) throw engine_error("cuda session: no logits before the first token");
  if (!logits_fresh_) {
    logits_.resize(size_t(e_.config().n_vocab));
    e_.logits(0, logits_.data());
    logits_fresh_ = true;
  }
  return logits_;
}

memory_stats cuda_session::memory() const {
  memory_stats m;
  m.weights_bytes = e_.weight_bytes();
  m.kv_bytes = seq_.kv_bytes();
  m.kv_peak_bytes = seq_.kv_peak_bytes();
  m.kv_logical_bytes = seq_.kv_logical_bytes();
  m.kv_logical_peak_bytes = seq_.kv_logical_peak_bytes();
  if (const cuda_kv_runtime* r = seq_.kv()) m.kv_host_bytes = m.kv_host_peak_bytes = r->host_bytes();  // grows only
  m.scratch_bytes = e_.scratch_bytes();
  m.peak_total_bytes = e_.allocator().peak_bytes();
  return m;
}

void cuda_session::reset() {
  seq_.reset();
  logits_fresh_ = false;
}

}  // namespace kvarena
