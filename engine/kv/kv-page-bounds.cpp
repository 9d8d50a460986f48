// kv-page-bounds.cpp: the portable page bounds, the reference, and the dispatch to the
// AVX-512 version (kv-page-bounds-avx512.cpp).
#include "kv-page-bounds.h"

#include <algorithm>
#include <vector>

#include "cpu-kernels.h"
#include "ggml-types.h"

namespace kvarena {

namespace kv_page_bounds_avx512 {
bool built();  // false where that file is compiled without AVX-512
void bounds(const float* q, int64_t G, const uint16_t* dig, int64_t n, int64_t hd, float scale, float* out,
            int64_t ld);
}  // namespace kv_page_bounds_avx512

namespace {
// Portable: each page's digest is widened once into f (2, hd) for all G query heads, then 16
// independent partial sums per head so the compiler vectorises without reassociating one sum.
void bounds_generic(const float* q, int64_t G, const uint16_t* dig, int64_t n, int64_t hd, float scale,
                    float* out, int64_t ld) {
  std::vector<float> f(size_t(2 * hd));  // (2, hd): minima, maxima
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t c = 0; c < 2 * hd; ++c) f[size_t(c)] = fp16_to_fp32(dig[j * 2 * hd + c]);
    const float* mn = f.data();
    const float* mx = f.data() + hd;
    for (int64_t h = 0; h < G; ++h) {
      const float* qh = q + h * hd;
      float acc[16] = {};
      int64_t c = 0;
      for (; c + 16 <= hd; c += 16)
        for (int l = 0; l < 16; ++l) acc[l] += std::max(qh[c + l] * mx[c + l], qh[c + l] * mn[c + l]);
      for (; c < hd; ++c) acc[c % 16] += std::max(qh[c] * mx[c], qh[c] * mn[c]);
      float b = 0;
      for (float a : acc) b += a;
      out[h * ld + j] = scale * b;
    }
  }
}
}  // namespace

void kv_page_bounds(const float* q, int64_t G, const uint16_t* dig, int64_t n, int64_t hd, float scale,
                    float* out, int64_t ld) {
  if (hd % 16 == 0 && kv_page_bounds_avx512::built() && cpu_kernel_variant() == "avx512")
    return kv_page_bounds_avx512::bounds(q, G, dig, n, hd, scale, out, ld);
  bounds_generic(q, G, dig, n, hd, scale, out, ld);
}

namespace ref {
void kv_page_bounds(const float* q, int64_t G, const uint16_t* dig, int64_t n, int64_t hd, float scale,
                    float* out, int64_t ld) {
  for (int64_t h = 0; h < G; ++h)
    for (int64_t j = 0; j < n; ++j) {
      double b = 0;
      for (int64_t c = 0; c < hd; ++c) {
        const double x = q[h * hd + c];
        b += std::max(x * fp16_to_fp32(dig[(j * 2 + 1) * hd + c]), x * fp16_to_fp32(dig[j * 2 * hd + c]));
      }
      out[h * ld + j] = float(scale * b);
    }
}
}  // namespace ref

}  // namespace kvarena
