// cuda-launch.cpp: launch-configuration math (see the header).
#include "cuda-launch.h"

#include <algorithm>

namespace kvarena::cu {

attn_split_plan plan_attention_splits(int64_t max_tokens, int64_t base_blocks, int64_t n_sm) {
  attn_split_plan p;
  const int64_t n_tiles = std::max<int64_t>(1, ceil_div(max_tokens, k_attn_tile));
  const int64_t target = std::max<int64_t>(1, 2 * n_sm);
  int64_t splits = ceil_div(target, std::max<int64_t>(1, base_blocks));
  splits = std::min(splits, std::max<int64_t>(1, max_tokens / k_min_split_tokens));
  splits = std::clamp<int64_t>(splits, 1, n_tiles);
  const int64_t tiles_per_split = ceil_div(n_tiles, splits);
  p.split_len = tiles_per_split * k_attn_tile;
  p.n_splits = ceil_div(n_tiles, tiles_per_split);  // no empty trailing split
  return p;
}

size_t span_attention_smem_bytes(int64_t group, int64_t head_dim) {
  const int64_t T = k_attn_tile, D = head_dim;
  const int64_t floats = group * D + T * (D + 1) + T * D + group * T + group * D + 3 * group;
  return size_t(floats) * 4 + size_t(2 * T) * 8;
}

size_t prefill_attention_smem_bytes(int64_t rows, int64_t head_dim) {
  const int64_t T = k_attn_tile, D = head_dim;
  const int64_t floats = rows * D + T * (D + 1) + T * D + rows * T + rows * D + 3 * rows;
  return size_t(floats) * 4;
}

int64_t prefill_positions_per_block(int64_t group, int64_t head_dim, size_t max_smem) {
  int64_t pos = std::max<int64_t>(1, 64 / std::max<int64_t>(1, group));
  while (pos > 0 && prefill_attention_smem_bytes(pos * group, head_dim) > max_smem) pos /= 2;
  return pos;
}

}  // namespace kvarena::cu
