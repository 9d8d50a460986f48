// memory-stats.h: what a session holds in memory, in bytes, as sessions and benchmarks
// report it. Live values plus the peaks seen since the sequence started (reset() starts a
// new one, with new peaks).
#pragma once
#include <cstddef>

namespace kvarena {

struct memory_stats {
  size_t weights_bytes = 0;     // model weight tensors (shared by all sessions of a model)
  size_t kv_bytes = 0;          // KV cache memory allocated now
  size_t kv_peak_bytes = 0;     // most KV cache memory allocated at any time (device side)
  size_t kv_host_bytes = 0;     // FreeKV's host pool now (0 for other policies)
  size_t kv_host_peak_bytes = 0;
  // Logical KV bytes (kv/kv-logical-bytes.h: live tokens at their precision + the policy's
  // state, independent of capacity and chunking) now, and the most after any forward call.
  size_t kv_logical_bytes = 0;
  size_t kv_logical_peak_bytes = 0;
  size_t scratch_bytes = 0;     // activation buffers, attention scratch, logits
  size_t peak_total_bytes = 0;  // weights + KV peak + scratch
};

}  // namespace kvarena
