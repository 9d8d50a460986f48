// kv-confidence.cpp: confidence_from_logits (see the header). Double accumulation so a
// 150K vocabulary sums without drift.
#include "kv-confidence.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine-error.h"

namespace kvarena {

confidence_parts confidence_parts_from_logits(const float* x, int64_t n) {
  KV_ASSERT(n >= 2);
  // top two logits: log p1 - log p2 = l1 - l2 (the normaliser cancels)
  double l1 = -std::numeric_limits<double>::infinity(), l2 = l1;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] > l1) l2 = l1, l1 = x[i];
    else if (x[i] > l2) l2 = x[i];
  }
  double z = 0, ez = 0;  // z = sum e^(x-l1); ez = sum e^(x-l1) * (x-l1)
  for (int64_t i = 0; i < n; ++i) {
    const double u = double(x[i]) - l1, e = std::exp(u);
    z += e;
    ez += e * u;
  }
  // H = -sum p log p with log p = u - log z: H = log z - ez/z
  const double H = std::log(z) - ez / z;
  confidence_parts r;
  r.entropy_norm = float(std::clamp(H / std::log(double(n)), 0.0, 1.0));
  r.margin = float(l1 - l2);
  r.p1 = float(1.0 / z);
  const double sig = 1.0 / (1.0 + std::exp(-double(r.margin)));
  r.c = float(0.4 * (1.0 - r.entropy_norm) + 0.3 * sig + 0.3 * r.p1);
  return r;
}

}  // namespace kvarena
