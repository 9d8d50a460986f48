// kv-page-bounds.h: FreeKV's page scoring arithmetic. Quest's upper bound of q.k over the keys
// of a page, from the page's digest: sum_c max(q_c * max_c, q_c * min_c). Digests are FP16
// (the keys they bound are FP16, so their per-channel min and max are exact in FP16) and laid
// out per KV head, page after page, so scoring a head's candidate pages reads one contiguous
// run (half the bytes of float digests; scoring is memory-bound: every step reads the
// digests of every candidate page of every layer).
// Not here: softmax over pages, group mean, top-k (kv-policy-freekv.cpp).
#pragma once
#include <cstdint>

namespace kvarena {

// out[h * ld + j] = scale * sum_c max(q[h, c] * kmax_j[c], q[h, c] * kmin_j[c]) for the G query
// heads h < G and pages j < n.
// q: (G, hd) floats. dig: (n, 2, hd) fp16, per page its key minima then maxima.
// AVX-512 when cpu-kernels' variant is "avx512" and hd % 16 == 0; portable loops otherwise.
void kv_page_bounds(const float* q, int64_t G, const uint16_t* dig, int64_t n, int64_t hd, float scale,
                    float* out, int64_t ld);

namespace ref {
// Same contract: plain loops, double accumulation.
void kv_page_bounds(const float* q, int64_t G, const uint16_t* dig, int64_t n, int64_t hd, float scale,
                    float* out, int64_t ld);
}  // namespace ref

}  // namespace kvarena
