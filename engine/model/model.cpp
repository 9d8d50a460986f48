// model.cpp: small model helpers shared by every loader: architecture names and the
// weight byte count. Loading lives in model-loader.cpp (GGUF) and model-llama2c.cpp.
#include "model.h"

#include <set>

namespace kvarena {

const char* model_arch_name(model_arch a) {
  switch (a) {
    case model_arch::llama: return "llama";
    case model_arch::qwen2: return "qwen2";
    case model_arch::gpt2: return "gpt2";
    case model_arch::qwen3: return "qwen3";
    case model_arch::gemma3: return "gemma3";
    case model_arch::gemma2: return "gemma2";
    case model_arch::phi3: return "phi3";
  }
  return "unknown";
}

namespace {
constexpr model_arch k_archs[] = {model_arch::llama, model_arch::qwen2, model_arch::qwen3, model_arch::gemma2,
                                  model_arch::gemma3, model_arch::phi3, model_arch::gpt2};
}

std::optional<model_arch> model_arch_from_name(const std::string& name) {
  for (model_arch a : k_archs)
    if (name == model_arch_name(a)) return a;
  return std::nullopt;
}

std::string model_arch_names() {
  std::string s;
  for (model_arch a : k_archs) s += (s.empty() ? "" : ", ") + std::string(model_arch_name(a));
  return s;
}

size_t model::weight_bytes() const {
  // Count each distinct tensor once: a tied output aliases the token embedding.
  std::set<const uint8_t*> seen;
  size_t total = 0;
  auto count = [&](const tensor_view& t) {
    if (t && seen.insert(t.data).second) total += t.nbytes;
  };
  count(tok_embd);
  count(pos_embd);
  count(output_norm);
  count(output_norm_b);
  count(output);
  for (const auto& l : layers) {
    for (const tensor_view* t : {&l.attn_norm, &l.attn_norm_b, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk,
                                 &l.bv, &l.q_norm, &l.k_norm, &l.wqkv, &l.bqkv, &l.wo, &l.bo, &l.attn_post_norm, &l.ffn_norm, &l.ffn_norm_b, &l.ffn_post_norm,
                                 &l.w_gate, &l.w_up, &l.b_up, &l.w_down, &l.b_down}) {
      count(*t);
    }
  }
  return total;
}

}  // namespace kvarena
