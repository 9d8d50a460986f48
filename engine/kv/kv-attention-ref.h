// kv-attention-ref.h: the plain-loop reference attention over one layer of the kv_store
// (FP16 and INT8 segments, dequantised in the loop), and the semantics the optimised CPU and
// CUDA kernels must match: causal by original position, max-subtracted softmax, and the
// per-key probability mass (summed over the group's query heads and the queries) that
// policies such as h2o and confkv read. One thread, no scratch reuse: for tests.
#pragma once
#include <cstdint>

#include "kv-store.h"

namespace kvarena {

// out[i, h, :] = sum_t softmax_t(scale * q[i,h] . k[g,t]) * v[g,t] over kept tokens t of
// KV head g = h / group with pos[t] <= q_pos[i]; mass[g][t] += that probability.
// q: (n_q, n_heads, head_dim), rows q_stride floats apart; out: same, out_stride apart;
// q_pos: (n_q,) positions of the queries. add_mass: whether to add into view.mass.
void kv_attend_ref(kv_store& store, int64_t layer, const float* q, int64_t q_stride,
                   const int32_t* q_pos, int64_t n_q, int64_t n_heads, float scale, float* out,
                   int64_t out_stride, bool add_mass);

// Dequantised key/value of kept token t of a head view: dst (head_dim,).
void kv_load_key(const kv_head_view& v, int64_t t, float* dst);
void kv_load_value(const kv_head_view& v, int64_t t, float* dst);

}  // namespace kvarena
