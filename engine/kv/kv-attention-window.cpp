// kv-attention-window.cpp: sliding-window attention by cutting spans (see the header).
#include "kv-attention-window.h"

#include <algorithm>
#include <cmath>

#include "engine-error.h"

namespace kvarena {

void kv_cut_head(const kv_attn_head& h, int64_t hd, int64_t t0, int64_t t1, kv_attn_head& out) {
  out.spans.clear();
  int64_t start = 0;  // first token of the current span in the head
  for (const kv_span& s : h.spans) {
    const int64_t a = std::max<int64_t>(t0 - start, 0), b = std::min<int64_t>(t1 - start, s.n);
    start += s.n;
    if (a >= b) continue;
    kv_span c = s;
    c.n = b - a;
    const int64_t off = a * hd;
    if (c.k16) c.k16 += off, c.v16 += off;
    if (c.k32) c.k32 += off, c.v32 += off;
    if (c.kq) c.kq += off, c.vq += off, c.block += a;  // scales are indexed by block: unchanged
    if (c.mass) c.mass += a;
    out.spans.push_back(c);
  }
}

void kv_attend_window(thread_pool& pool, const std::vector<kv_attn_head>& heads,
                      const std::vector<const int32_t*>& pos, int64_t window, int64_t q_pos0,
                      int64_t hd, const float* q, int64_t ldq, int64_t n_q, int64_t n_heads,
                      float scale, float* out, int64_t ldo, kv_attend_scratch& scratch,
                      kv_window_scratch& ws, float mass_decay, bool reference, float softcap) {
  KV_ASSERT(window > 0 && n_q >= 1 && pos.size() == heads.size());
  const size_t n_kv = heads.size();
  ws.cut.resize(n_kv);
  ws.lo.resize(n_kv);
  ws.lo_next.resize(n_kv);
  // First token of head g that query i sees: the first position > q_pos0 + i - window.
  auto first_visible = [&](int64_t i, std::vector<int64_t>& lo) {
    for (size_t g = 0; g < n_kv; ++g) {
      const int32_t* p = pos[g];
      const int64_t N = heads[g].n_tokens();
      lo[g] = std::upper_bound(p, p + N, int32_t(q_pos0 + i - window)) - p;
    }
  };
  first_visible(0, ws.lo);
  for (int64_t a = 0; a < n_q;) {
    // The run [a, b]: queries whose visible ranges all start where query a's do.
    int64_t b = a;
    while (b + 1 < n_q) {
      first_visible(b + 1, ws.lo_next);
      if (ws.lo_next != ws.lo) break;
      ++b;
    }
    for (size_t g = 0; g < n_kv; ++g) {
      const int64_t N = heads[g].n_tokens();
      kv_cut_head(heads[g], hd, ws.lo[g], N - n_q + b + 1, ws.cut[g]);  // ends at query b's own token
    }
    const int64_t m = b - a + 1;
    // Row a + r's weight in the chunk is decay^(n_q-1-a-r) = decay^(n_q-1-b) * decay^(m-1-r).
    const float mass_scale = mass_decay == 1.0f ? 1.0f : std::pow(mass_decay, float(n_q - 1 - b));
    if (reference) {
      ref::kv_attend(ws.cut, hd, q + a * ldq, ldq, m, n_heads, scale, out + a * ldo, ldo, mass_decay, mass_scale,
                     softcap);
    } else {
      kv_attend(pool, ws.cut, hd, q + a * ldq, ldq, m, n_heads, scale, out + a * ldo, ldo, scratch, mass_decay,
                mass_scale, softcap);
    }
    a = b + 1;
    if (a < n_q) std::swap(ws.lo, ws.lo_next);  // lo_next holds query a's ranges
  }
}

}  // namespace kvarena
