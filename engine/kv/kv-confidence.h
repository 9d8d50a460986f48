// kv-confidence.h: CONF-KV's per-step confidence from the logits of a decode step
// (specs/kv-policies.md): c = 0.4*(1 - H_hat) + 0.3*sigmoid(m) + 0.3*p1, in [0,1], with
// H_hat = entropy of softmax(logits) / ln(n_vocab), m = log p(top1) - log p(top2),
// p1 = p(top1). High c: the model is sure, a tight KV budget will do.
#pragma once
#include <cstdint>

namespace kvarena {

struct confidence_parts {
  float entropy_norm = 0.f;  // H_hat in [0,1]
  float margin = 0.f;        // m = log p1 - log p2 >= 0
  float p1 = 0.f;
  float c = 0.f;
};

// logits: (n_vocab,), n_vocab >= 2.
confidence_parts confidence_parts_from_logits(const float* logits, int64_t n_vocab);
inline float confidence_from_logits(const float* logits, int64_t n_vocab) {
  return confidence_parts_from_logits(logits, n_vocab).c;
}

}  // namespace kvarena
