// cuda-backend.h: the CUDA backend behind the engine's sequence interface (sequence.h):
// register_cuda_backend() adds "cuda" to the backend table, so make_sequence("cuda", ...)
// gives a cuda_session (one cuda_engine, i.e. one upload of the weights, per model,
// shared by its sequences). Call it once at start-up in builds with KVARENA_CUDA.
#pragma once

namespace kvarena {

void register_cuda_backend();

}  // namespace kvarena
