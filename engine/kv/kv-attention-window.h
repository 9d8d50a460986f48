// kv-attention-window.h: attention of a sliding-window layer (gemma3's local layers) over
// the same spans kv_attend reads: a query at position p sees only the keys at positions
// > p - window (llama.cpp's standard SWA mask: p - p_key < window), besides the causal rule.
// The spans of each KV head are cut to each query's visible range and handed to kv_attend
// (or ref::kv_attend) in runs of consecutive queries whose ranges start at the same token,
// so the kernels themselves know nothing of windows; the attention mass a policy ranks by
// gets each query's weight in the whole chunk (kv_attend's mass_scale).
#pragma once
#include <cstdint>
#include <vector>

#include "kv-attention-cpu.h"

namespace kvarena {

// Per-call scratch (kept between calls: a decode step allocates nothing once warm).
struct kv_window_scratch {
  std::vector<kv_attn_head> cut;   // (n_kv_heads,) the spans one run of queries reads
  std::vector<int64_t> lo, lo_next;  // (n_kv_heads,) first visible token of a query per head
};

// kv_attend's contract, with the window: heads[g]'s tokens have the ascending positions
// pos[g] ((heads[g].n_tokens(),)); query i of n_q is at position q_pos0 + i and is the
// token at index N_g - n_q + i of every head (the chunk's rows were appended). window > 0.
// reference: ref::kv_attend's plain loops instead of the kernel.
void kv_attend_window(thread_pool& pool, const std::vector<kv_attn_head>& heads,
                      const std::vector<const int32_t*>& pos, int64_t window, int64_t q_pos0,
                      int64_t head_dim, const float* q, int64_t ldq, int64_t n_q, int64_t n_heads,
                      float scale, float* out, int64_t ldo, kv_attend_scratch& scratch,
                      kv_window_scratch& wscratch, float mass_decay, bool reference, float softcap = 0.0f);

// Tokens [t0, t1) of a head's spans, in order (mass pointers cut alike).
void kv_cut_head(const kv_attn_head& h, int64_t head_dim, int64_t t0, int64_t t1, kv_attn_head& out);

}  // namespace kvarena
