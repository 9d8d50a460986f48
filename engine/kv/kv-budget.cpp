// kv-budget.cpp: see kv-budget.h.
#include "kv-budget.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "engine-error.h"
#include "kv-logical-bytes.h"

namespace kvarena {

namespace {

const char* const k_forms = "give tokens per layer and KV head (512t) or bytes (1048576, 64KiB, 8MiB, 1GiB)";

kv_policy_options with_shape(kv_policy_options o, const kv_policy_options& shape) {
  o.n_layers = shape.n_layers, o.n_heads = shape.n_heads, o.n_kv_heads = shape.n_kv_heads;
  o.head_dim = shape.head_dim;
  return o;
}

}  // namespace

kv_budget parse_kv_budget(const std::string& text) {
  kv_budget b;
  b.text = text;
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + i, n);
  if (i == 0 || ec != std::errc() || n == 0)
    throw engine_error("--kv-budget '" + text + "': " + k_forms);
  std::string unit = text.substr(i);
  for (char& c : unit) c = char(std::tolower(static_cast<unsigned char>(c)));
  struct unit_scale {
    const char* name;
    uint64_t scale;
  };
  static const unit_scale units[] = {{"", 1},          {"b", 1},          {"kib", 1ull << 10}, {"mib", 1ull << 20},
                                     {"gib", 1ull << 30}, {"kb", 1000},      {"mb", 1000000},     {"gb", 1000000000}};
  if (unit == "t") {
    b.tokens = int64_t(n);
    return b;
  }
  for (const unit_scale& u : units)
    if (unit == u.name) {
      b.bytes = size_t(n * u.scale);
      return b;
    }
  throw engine_error("--kv-budget '" + text + "': unknown unit '" + text.substr(i) + "': " + k_forms);
}

std::vector<kv_budget> parse_kv_budgets(const std::string& list) {
  std::vector<kv_budget> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(parse_kv_budget(list.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

size_t kv_logical_peak_bound(const std::string& policy, const kv_policy_options& o, int64_t seq_len) {
  const std::unique_ptr<kv_policy> p = make_kv_policy(policy, o);
  kv_logical_layout L;
  L.head_dim = o.head_dim;
  L.page = o.page;
  L.state_bytes_per_token = p->needs().attention_mass ? sizeof(float) : 0;
  const bool int8 = o.int8 && kv_policy_supports_int8(policy);
  const bool freekv = p->needs().host_offload;
  size_t total = 0;
  for (int64_t l = 0; l < o.n_layers; ++l) {
    int64_t b = p->budget(l, seq_len);
    // freekv's budget makes room for one page of new tokens that only a forward call holds.
    if (freekv && b >= 0) b -= o.page;
    const int64_t tokens = b < 0 ? seq_len : std::min(seq_len, b);
    kv_head_counts c;
    c.fp16 = int8 ? std::min(tokens, o.int8_window + kv_logical_int8_block - 1) : tokens;
    c.int8 = tokens - c.fp16;
    c.int8_blocks = (c.int8 + kv_logical_int8_block - 1) / kv_logical_int8_block;
    if (freekv && b >= 0) c.digests = seq_len / std::max<int64_t>(1, o.page);
    total += size_t(o.n_kv_heads) * kv_logical_head_bytes(L, c);
  }
  return total;
}

kv_policy_spec apply_kv_budget(const kv_policy_spec& p, const kv_budget& b, const kv_policy_options& shape,
                               int64_t seq_len) {
  const kv_policy_desc& d = kv_policy_described(p.name);
  if (!d.spend_budget) return p;  // full: the reference
  kv_policy_spec out = resolve_kv_spec(p);
  const kv_policy_options base = with_shape(out.options, shape);
  auto spend = [&](int64_t tokens) {
    kv_policy_options o = base;
    d.spend_budget(o, tokens, seq_len);
    return o;
  };
  kv_policy_options chosen;
  if (b.tokens > 0) {
    chosen = spend(b.tokens);
  } else {
    // The most tokens whose bound fits: the bound grows with the tokens, so bisect.
    int64_t lo = 0, hi = std::max<int64_t>(1, seq_len);
    auto fits = [&](int64_t t) {
      try {
        return kv_logical_peak_bound(p.name, spend(t), seq_len) <= b.bytes;
      } catch (const engine_error&) {
        return false;  // too small for the policy
      }
    };
    if (fits(hi)) lo = hi;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    if (lo == 0)
      throw engine_error("--kv-budget " + b.text + ": too small for " + p.name + " on this model (" +
                         std::to_string(b.bytes) + " bytes hold no budget it can run with)");
    chosen = spend(lo);
  }
  make_kv_policy(p.name, chosen);  // the policy's own checks on what was spent
  out.options = chosen;
  out.options.n_layers = out.options.n_heads = out.options.n_kv_heads = out.options.head_dim = 0;
  return out;
}

}  // namespace kvarena
