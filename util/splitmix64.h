// splitmix64.h: the project's one splitmix64 (Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014; the constants of Vigna's splitmix64.c), the
// integer mix behind every deterministic stream: random model weights and benchmark prompts
// (engine), site content (envs), training data (agent). The same value on every machine and
// compiler. Header-only and dependent on nothing, so that the engine (which uses nothing else
// from the repository) and envs (which never includes the engine) may both include it.
#pragma once
#include <cstdint>

namespace kvarena {

// The generator's increment: 2^64 / the golden ratio, odd.
inline constexpr uint64_t k_splitmix64_gamma = 0x9E3779B97F4A7C15ull;

// splitmix64 as a function: the output of a generator whose state is x, i.e. x + gamma
// through the finaliser. A bijection of 64-bit values; used to hash a seed or a counter
// into a well-mixed value, or iterated (st = splitmix64(st)) as a cheap stream.
constexpr uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + k_splitmix64_gamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The generator: each next() adds gamma to the state and returns the mixed state. Full period
// (2^64); two streams of different states are as good as independent.
struct splitmix64_stream {
  uint64_t state = 0;
  constexpr uint64_t next() {
    const uint64_t out = splitmix64(state);
    state += k_splitmix64_gamma;
    return out;
  }
};

}  // namespace kvarena
