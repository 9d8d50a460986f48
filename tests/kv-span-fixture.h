// kv-span-fixture.h: synthetic KV spans for the attention tests (test-kv-attention, test-cuda, test-cuda-kernels):
// FP16 or INT8 runs of tokens with their own memory and a mass column, and span layouts of
// a head (FP16 only; INT8 + FP16 segments as the store has them; FreeKV's 32-token pages with
// empty slots and a window; random ragged cuts).
#pragma once
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "ggml-types.h"
#include "kv/kv-attention-cpu.h"
#include "kv/kv-store.h"

namespace kvarena::test {

inline std::vector<float> uniform(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& f : x) f = u(rng);
  return x;
}

// n rows of `row` floats, uniform in [-1, 1): the K or V rows a store or pool is fed.
inline std::vector<float> random_rows(std::mt19937& rng, int64_t n, int64_t row) { return uniform(rng, n * row, -1.f, 1.f); }

// x as FP16 stores it.
inline float fp16_round(float x) { return fp16_to_fp32(fp32_to_fp16(x)); }

inline std::vector<uint16_t> to_f16(const std::vector<float>& x) {
  std::vector<uint16_t> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = fp32_to_fp16(x[i]);
  return h;
}

// The memory of one synthetic span (FP16 or INT8) and its mass column.
struct span_data {
  int64_t n = 0;
  bool int8 = false;
  std::vector<uint16_t> k16, v16;  // (n, hd)
  std::vector<int8_t> kq, vq;      // (n, hd)
  std::vector<int32_t> block;      // (n,)
  std::vector<float> ks, vs;       // (n_blocks, hd)
  std::vector<float> mass;         // (n,) starts at 0.25 so "adds" is checked, not "writes"

  kv_span span(bool with_mass) {
    kv_span s;
    s.n = n;
    if (int8) {
      s.kq = kq.data(), s.vq = vq.data(), s.block = block.data(), s.k_scale = ks.data(), s.v_scale = vs.data();
    } else {
      s.k16 = k16.data(), s.v16 = v16.data();
    }
    s.mass = with_mass ? mass.data() : nullptr;
    return s;
  }
};

// INT8 spans hold real quantised blocks (kv_quantize_block) whose ids run backwards and skip
// id 0, as compaction can leave them, so a kernel must follow the block indirection.
inline span_data make_span(std::mt19937& rng, int64_t n, int64_t hd, bool int8) {
  span_data s;
  s.n = n, s.int8 = int8;
  if (int8) {
    const int64_t nb = (n + 31) / 32;
    s.kq.resize(size_t(n * hd)), s.vq.resize(size_t(n * hd)), s.block.resize(size_t(n));
    s.ks.assign(size_t((nb + 1) * hd), 0.f), s.vs.assign(size_t((nb + 1) * hd), 0.f);
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t t0 = b * 32, tn = std::min<int64_t>(32, n - t0), id = nb - b;
      const std::vector<float> k = uniform(rng, tn * hd, -2.5f, 2.5f), v = uniform(rng, tn * hd, -1.f, 1.f);
      kv_quantize_block(k.data(), tn, hd, &s.kq[size_t(t0 * hd)], &s.ks[size_t(id * hd)]);
      kv_quantize_block(v.data(), tn, hd, &s.vq[size_t(t0 * hd)], &s.vs[size_t(id * hd)]);
      for (int64_t t = t0; t < t0 + tn; ++t) s.block[size_t(t)] = int32_t(id);
    }
  } else {
    s.k16 = to_f16(uniform(rng, n * hd, -2.5f, 2.5f));
    s.v16 = to_f16(uniform(rng, n * hd, -1.f, 1.f));
  }
  s.mass.assign(size_t(n), 0.25f);
  return s;
}

// Span layouts: (length, int8) per span of a head of N tokens.
enum class layout { fp16, int8_fp16, pages, ragged };
inline const char* layout_name(layout l) {
  switch (l) {
    case layout::fp16: return "fp16";
    case layout::int8_fp16: return "int8+fp16";
    case layout::pages: return "pages";
    default: return "ragged";
  }
}

inline std::vector<std::pair<int64_t, bool>> span_lengths(std::mt19937& rng, layout l, int64_t N) {
  std::vector<std::pair<int64_t, bool>> out;
  switch (l) {
    case layout::fp16:
      out.push_back({N, false});
      break;
    case layout::int8_fp16: {
      const int64_t w = std::min<int64_t>(N, 69);
      out.push_back({N - w, true});
      out.push_back({w, false});
      break;
    }
    case layout::pages: {  // FreeKV: 32-token pages of either kind, empty slots, a window
      int64_t left = N, i = 0;
      for (; left > 45; ++i) {
        if (i % 5 == 2) out.push_back({0, i % 2 == 0});
        out.push_back({32, i % 3 != 0});
        left -= 32;
      }
      out.push_back({left, false});
      out.push_back({0, false});
      break;
    }
    case layout::ragged: {  // random cuts, lengths 0..50, either kind
      std::uniform_int_distribution<int64_t> len(0, 50);
      for (int64_t left = N; left > 0;) {
        const int64_t n = std::min(left, len(rng));
        out.push_back({n, rng() % 2 == 0});
        left -= n;
      }
      break;
    }
  }
  return out;
}

}  // namespace kvarena::test
