// model-forward-llama.cpp: the llama-family forward pass (llama, qwen2, qwen3): RMSNorm, Q/K/V
// (qwen2: with biases; qwen3: RMSNorm of each q and k head before RoPE), RoPE (adjacent pairs; qwen2: NEOX halves), GQA attention over the
// KV cache, SwiGLU FFN, tied or separate output. Matches llama.cpp's graph for these
// architectures, including skipping the work the requested logits do not need.
#include <cmath>

#include "model-forward.h"

namespace kvarena::detail {

void forward_llama(const model& m, forward_state& st, const int32_t* tokens, int64_t n,
                   int64_t pos0, logits_mode mode, float* logits) {
  const model_config& c = m.config;
  const int64_t D = c.dim, QD = c.q_dim(), KV = c.kv_dim();
  const float scale = 1.0f / std::sqrt(float(c.head_dim));
  forward_ops ops(st.pool, st.options());

  float* x = st.x.data();  // (n, D)
  ops.embed(m.tok_embd, tokens, n, x);
  ops.rope_cos_sin(c, pos0, n, st.rope_cs.data());

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const layer_weights& L = m.layers[size_t(l)];
    const bool last_layer = l == c.n_layers - 1;

    ops.rmsnorm(x, L.attn_norm, st.xn.data(), n, D, c.norm_eps);
    float* q = st.q.data();  // (n, QD)
    float* k = st.k.data();  // (n, KV)
    float* v = st.v.data();  // (n, KV)
    ops.matmul_same_input({{&L.wq, q}, {&L.wk, k}, {&L.wv, v}}, st.xn.data(), n);
    ops.add_bias(q, QD, L.bq, n, QD);
    ops.add_bias(k, KV, L.bk, n, KV);
    ops.add_bias(v, KV, L.bv, n, KV);
    if (L.q_norm) {  // qwen3: each head of q and k RMS-normalised (in place), as llama.cpp
      ops.rmsnorm(q, L.q_norm, q, n * c.n_heads, c.head_dim, c.norm_eps);
      ops.rmsnorm(k, L.k_norm, k, n * c.n_kv_heads, c.head_dim, c.norm_eps);
    }
    ops.rope(q, QD, k, KV, n, c, pos0, st.rope_cs.data());
    detail::store_kv(st, l, k, v, KV);
    const int64_t r0 = detail::first_attention_row(st, last_layer, mode, n);
    float* att = st.att.data();  // (n - r0, QD)
    detail::attend_layer(st, l, n, r0, q + r0 * QD, QD, scale, att, QD);
    if (last_layer && mode == logits_mode::none) return;

    // In the last layer only the rows whose logits are wanted go on (as llama.cpp does).
    const int64_t rk = last_layer && mode == logits_mode::last ? n - 1 : 0;
    const int64_t nr = n - rk;
    float* xr = x + rk * D;      // (nr, D) rows still in play
    ops.matmul(L.wo, att + (rk - r0) * QD, nr, st.tmp.data());
    ops.add(xr, st.tmp.data(), nr, D);

    ops.rmsnorm(xr, L.ffn_norm, st.xn.data(), nr, D, c.norm_eps);
    ops.swiglu(L.w_gate, L.w_up, st.xn.data(), nr, st.gate.data(), st.up.data());  // (nr, F)
    ops.matmul(L.w_down, st.gate.data(), nr, st.tmp.data());
    ops.add(xr, st.tmp.data(), nr, D);

    if (last_layer) {
      ops.rmsnorm(xr, m.output_norm, st.xn.data(), nr, D, c.norm_eps);
      ops.matmul(m.output, st.xn.data(), nr, logits);  // (nr, n_vocab)
    }
  }
}

}  // namespace kvarena::detail
