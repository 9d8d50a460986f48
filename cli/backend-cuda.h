// backend-cuda.h: the CLI's `--backend cpu|cuda` flag and the CUDA latency bench, the only
// place in cli/ that calls the CUDA backend (engine/cuda/) directly; everything else reaches
// it through make_sequence (sequence.h). In a build without
// KVARENA_CUDA the CUDA entries throw engine_error "this kvarena was built without CUDA
// (configure with -DKVARENA_CUDA=ON)"; with it but no device, an error naming the missing
// device. Not here: the CPU paths (cmd-generate.cpp, engine/bench/).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/bench-common.h"
#include "bench/bench-latency.h"
#include "memory-stats.h"
#include "model.h"
#include "sampler.h"
#include "session.h"
#include "tokenizer.h"

namespace kvarena::cli {

// Adds --backend (cpu|cuda, default cpu) to sub.
void add_backend_flag(CLI::App* sub, std::string& backend);
// Throws engine_error unless `backend` can run here (call before loading a model): cpu
// always; cuda needs a CUDA build and a device.
void check_backend(const std::string& backend);

// `kvarena bench latency --backend cuda`: run_bench_latency's protocol (same seeded
// prompts, steps interleaved round robin across the policies) on the device.
std::vector<bench_latency_result> cuda_bench_latency(const model& m, const tokenizer& tok,
                                                     const std::vector<kv_policy_spec>& policies,
                                                     const bench_common& common, const bench_latency_config& cfg);

}  // namespace kvarena::cli
