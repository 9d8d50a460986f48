// test-kv-meter.cpp: agent/kv-meter.h: the per-step KV trace stays small, keeps every prefill
// chunk, and the peak sees every forward call.
#include <gtest/gtest.h>

#include "kv-meter.h"

namespace kvarena {
namespace {

TEST(KvMeter, TraceStaysSmallAndKeepsEveryPrefillChunk) {
  kv_meter m(/*trace_every=*/2, /*max_points=*/16);
  m.begin_step(0);
  kv_step_stats s;
  s.kept = {10, 30};
  for (int i = 1; i <= 1000; ++i) {
    s.step = i;
    s.decode = i % 100 != 1;  // a prefill chunk every 100 calls
    s.n_tokens = s.decode ? 1 : 64;
    s.seq_len += s.n_tokens;
    s.kv_device_bytes = static_cast<size_t>(i == 500 ? 999999 : 1000 + i);
    m.on_forward(s);
  }
  EXPECT_LE(m.trace().size(), 16u);
  EXPECT_GE(m.trace().size(), 8u);
  for (size_t i = 1; i < m.trace().size(); ++i)
    EXPECT_GT(m.trace()[i].forward_call, m.trace()[i - 1].forward_call);
  EXPECT_EQ(m.trace()[0].kv_tokens, 30);  // max over layers
  EXPECT_EQ(m.peak_kv_bytes(), 999999u);  // peaks see every call, sampled or not
}

}  // namespace
}  // namespace kvarena
