// model-forward-gpt2.cpp: the GPT-2 forward pass: token + learned position embeddings,
// pre-LayerNorm blocks with biases everywhere, fused Q|K|V projection, GELU (tanh
// approximation) FFN, final LayerNorm, tied or separate output. Matches llama.cpp's gpt2
// graph, including skipping the work the requested logits do not need.
#include <cmath>

#include "model-forward.h"

namespace kvarena::detail {

void forward_gpt2(const model& m, forward_state& st, const int32_t* tokens, int64_t n,
                  int64_t pos0, logits_mode mode, float* logits) {
  const model_config& c = m.config;
  const int64_t D = c.dim, KV = c.kv_dim(), F = c.ffn_dim, QKV = D + 2 * KV;
  const float scale = 1.0f / std::sqrt(float(c.head_dim));
  forward_ops ops(st.pool, st.options());

  float* x = st.x.data();  // (n, D)
  ops.embed(m.tok_embd, tokens, n, x);
  float* pe = st.tmp.data();  // (n, D) position embeddings of pos0..pos0+n-1
  for (int64_t i = 0; i < n; ++i) {
    const int32_t p = int32_t(pos0 + i);
    ops.embed(m.pos_embd, &p, 1, pe + i * D);
  }
  ops.add(x, pe, n, D);

  for (int64_t l = 0; l < c.n_layers; ++l) {
    const layer_weights& L = m.layers[size_t(l)];
    const bool last_layer = l == c.n_layers - 1;

    ops.layernorm(x, L.attn_norm, L.attn_norm_b, st.xn.data(), n, D, c.norm_eps);
    float* qkv = st.q.data();  // (n, QKV): q | k | v per row
    ops.matmul(L.wqkv, st.xn.data(), n, qkv);
    ops.add_bias(qkv, QKV, L.bqkv, n, QKV);
    detail::store_kv(st, l, qkv + D, qkv + D + KV, QKV);
    const int64_t r0 = detail::first_attention_row(st, last_layer, mode, n);
    float* att = st.att.data();  // (n - r0, D)
    detail::attend_layer(st, l, n, r0, qkv + r0 * QKV, QKV, scale, att, D);
    if (last_layer && mode == logits_mode::none) return;

    const int64_t rk = last_layer && mode == logits_mode::last ? n - 1 : 0;
    const int64_t nr = n - rk;
    float* xr = x + rk * D;
    ops.matmul(L.wo, att + (rk - r0) * D, nr, st.tmp.data());
    ops.add_bias(st.tmp.data(), D, L.bo, nr, D);
    ops.add(xr, st.tmp.data(), nr, D);

    ops.layernorm(xr, L.ffn_norm, L.ffn_norm_b, st.xn.data(), nr, D, c.norm_eps);
    float* h = st.gate.data();  // (nr, F)
    ops.matmul(L.w_up, st.xn.data(), nr, h);
    ops.add_bias(h, F, L.b_up, nr, F);
    ops.gelu(h, nr * F);
    ops.matmul(L.w_down, h, nr, st.tmp.data());
    ops.add_bias(st.tmp.data(), D, L.b_down, nr, D);
    ops.add(xr, st.tmp.data(), nr, D);

    if (last_layer) {
      ops.layernorm(xr, m.output_norm, m.output_norm_b, st.xn.data(), nr, D, c.norm_eps);
      ops.matmul(m.output, st.xn.data(), nr, logits);  // (nr, n_vocab)
    }
  }
}

}  // namespace kvarena::detail
