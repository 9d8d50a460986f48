// model-forward-gemma.cpp: the gemma2 and gemma3 forward pass, as llama.cpp v0.4.0 builds
// them (src/models/gemma2.cpp, gemma3.cpp): the token embedding scaled by sqrt(dim); per
// block RMSNorm, Q/K/V (queries n_heads * head_dim wide, head_dim from the file), gemma3:
// RMSNorm of each q and k head, NEOX RoPE (sliding-window layers with their own base, global layers with the file's
// base and linear scaling), queries scaled by attn_scale, attention over the KV cache (a
// sliding-window layer sees only the last sliding_window positions: the KV runtime applies
// the window, kv-attention-window.h; gemma2's scores soft-capped there too), RMSNorm of the attention output before the residual
// add, RMSNorm, GeGLU FFN (GELU as gelu(): ggml's F16 table when asked), RMSNorm of the FFN
// output before its residual add; final RMSNorm, tied or separate output, logits
// soft-capped when the file sets final_logit_softcapping. Norm weights are used as stored
// (llama.cpp's converter added Gemma's 1). Skips the work the requested logits do not need.
#include <cmath>

#include "model-forward.h"

namespace kvarena::detail {

void forward_gemma(const model& m, forward_state& st, const int32_t* tokens, int64_t n,
                   int64_t pos0, logits_mode mode, float* logits) {
  const model_config& c = m.config;
  const int64_t D = c.dim, QD = c.q_dim(), KV = c.kv_dim();
  // llama.cpp scales the queries and then attends with scale 1: the same product here.
  const float scale = c.attn_scale > 0 ? c.attn_scale : 1.0f / std::sqrt(float(c.head_dim));
  forward_ops ops(st.pool, st.options());

  float* x = st.x.data();  // (n, D)
  ops.embed(m.tok_embd, tokens, n, x);
  if (c.embed_scale != 1.0f)
    for (int64_t i = 0; i < n * D; ++i) x[i] *= c.embed_scale;
  ops.rope_cos_sin(c, pos0, n, st.rope_cs.data());
  if (!c.layer_swa.empty()) ops.rope_cos_sin(st.rope_swa, pos0, n, st.rope_cs_swa.data());

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const layer_weights& L = m.layers[size_t(l)];
    const bool last_layer = l == c.n_layers - 1;
    const bool swa = c.is_swa(l);

    ops.rmsnorm(x, L.attn_norm, st.xn.data(), n, D, c.norm_eps);
    float* q = st.q.data();  // (n, QD)
    float* k = st.k.data();  // (n, KV)
    float* v = st.v.data();  // (n, KV)
    ops.matmul_same_input({{&L.wq, q}, {&L.wk, k}, {&L.wv, v}}, st.xn.data(), n);
    if (L.q_norm) {  // gemma3: each head of q and k, in place
      ops.rmsnorm(q, L.q_norm, q, n * c.n_heads, c.head_dim, c.norm_eps);
      ops.rmsnorm(k, L.k_norm, k, n * c.n_kv_heads, c.head_dim, c.norm_eps);
    }
    if (swa) {
      ops.rope(q, QD, k, KV, n, st.rope_swa, pos0, st.rope_cs_swa.data());
    } else {
      ops.rope(q, QD, k, KV, n, c, pos0, st.rope_cs.data());
    }
    detail::store_kv(st, l, k, v, KV);
    const int64_t r0 = detail::first_attention_row(st, last_layer, mode, n);
    float* att = st.att.data();  // (n - r0, QD)
    detail::attend_layer(st, l, n, r0, q + r0 * QD, QD, scale, att, QD);
    if (last_layer && mode == logits_mode::none) return;

    // In the last layer only the rows whose logits are wanted go on (as llama.cpp does).
    const int64_t rk = last_layer && mode == logits_mode::last ? n - 1 : 0;
    const int64_t nr = n - rk;
    float* xr = x + rk * D;  // (nr, D) rows still in play
    float* t = st.tmp.data();  // (nr, D)
    ops.matmul(L.wo, att + (rk - r0) * QD, nr, t);
    ops.rmsnorm(t, L.attn_post_norm, t, nr, D, c.norm_eps);
    ops.add(xr, t, nr, D);

    ops.rmsnorm(xr, L.ffn_norm, st.xn.data(), nr, D, c.norm_eps);
    ops.geglu(L.w_gate, L.w_up, st.xn.data(), nr, st.gate.data(), st.up.data());  // (nr, F)
    ops.matmul(L.w_down, st.gate.data(), nr, t);
    ops.rmsnorm(t, L.ffn_post_norm, t, nr, D, c.norm_eps);
    ops.add(xr, t, nr, D);

    if (last_layer) {
      ops.rmsnorm(xr, m.output_norm, st.xn.data(), nr, D, c.norm_eps);
      ops.matmul(m.output, st.xn.data(), nr, logits);  // (nr, n_vocab)
      if (c.final_logit_softcap > 0) ops.softcap(logits, nr * c.n_vocab, c.final_logit_softcap);
    }
  }
}

}  // namespace kvarena::detail
