// bench-kernels.cpp: Google Benchmark microbenchmarks of the CPU matmul at the shapes of a
// 125M llama-shaped model (dim 768, ffn 2048, vocab 32000), 1 and 2 threads.
//   read_bw/threads:N          plain streaming read of 256 MB: the bandwidth to compare with
//   matvec/<type>/<in>x<out>    decode (n_tok 1); weights cycle through >= 192 MB of copies so
//                               they come from DRAM as in a real decode; GB/s of weights read
//   gemm/<type>/<in>x<out>/<n>  prefill; GFLOP/s = 2 in out n_tok / time
//   model_decode / model_prefill512  the 125M model's matmuls for 1 / 512 tokens: tok/s (an
//                               upper bound for the whole forward pass, attention excluded)
// Not a test: run by hand, e.g.
//   build/tests/bench-kernels --benchmark_filter='matvec/f16' --benchmark_repetitions=5
// Numbers drift with other load on the machine: alternate runs, compare medians.
#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu-kernels.h"

namespace kvarena {
namespace {

thread_pool& pool_of(int n) {
  static thread_pool p1(1), p2(2);
  return n == 1 ? p1 : p2;
}

size_t row_bytes(ggml_type t, int64_t n) {
  switch (t) {
    case ggml_type::f32: return size_t(n) * 4;
    case ggml_type::f16:
    case ggml_type::bf16: return size_t(n) * 2;
    case ggml_type::q8_0: return size_t(n / 32) * 34;
    case ggml_type::q4_0: return size_t(n / 32) * 18;
    default: break;  // the K-quants are not benchmarked here
  }
  return 0;
}

// Random but finite weights: fp16 / fp16 scales with moderate exponents, random int8.
struct weight_copies {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<tensor_view> views;
};

weight_copies make_weights(ggml_type t, int64_t in, int64_t out, size_t min_total_bytes) {
  weight_copies w;
  const size_t nbytes = row_bytes(t, in) * size_t(out);
  const size_t copies = std::max<size_t>(1, (min_total_bytes + nbytes - 1) / nbytes);
  std::mt19937 rng(42);
  for (size_t c = 0; c < copies; ++c) {
    std::vector<uint8_t> b(nbytes);
    for (size_t i = 0; i + 1 < nbytes; i += 2) {
      const uint32_t r = rng();
      uint16_t v = uint16_t(r & 0x83ff) | uint16_t((9 + (r >> 16) % 6) << 10);  // half in ~[2^-6, 1)
      if (t == ggml_type::f32) v = uint16_t(r);
      std::memcpy(&b[i], &v, 2);
    }
    if (t == ggml_type::f32)  // exponent byte of every float: ~[2^-8, 1)
      for (size_t i = 3; i < nbytes; i += 4) b[i] = uint8_t((b[i] & 0x80) | 0x3b);
    w.bytes.push_back(std::move(b));
    tensor_view v;
    v.name = "bench";
    v.type = t;
    v.n_dims = 2;
    v.ne[0] = in;
    v.ne[1] = out;
    v.data = w.bytes.back().data();
    v.nbytes = nbytes;
    w.views.push_back(v);
  }
  return w;
}

std::vector<float> random_x(size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

const char* tname(ggml_type t) {
  return t == ggml_type::f32 ? "f32" : t == ggml_type::f16 ? "f16" : t == ggml_type::bf16 ? "bf16"
         : t == ggml_type::q8_0 ? "q8_0" : "q4_0";
}

void bm_read_bw(benchmark::State& state) {
  const int threads = int(state.range(0));
  const size_t n = (256u << 20) / sizeof(float);
  static std::vector<float> a(n, 1.0f);
  thread_pool& pool = pool_of(threads);
  float sink = 0.0f;
  for (auto _ : state) {
    float partial[2] = {};
    pool.run([&](int ith, int nth) {
      int64_t i0, i1;
      split_range(int64_t(n), ith, nth, i0, i1);
      // dot() with a vector of ones: a bandwidth-bound read through the same SIMD kernels.
      partial[ith] = dot(a.data() + i0, a.data() + i0, i1 - i0);
    });
    sink += partial[0] + partial[1];
  }
  benchmark::DoNotOptimize(sink);
  state.counters["GB/s"] = benchmark::Counter(double(n * 4) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void bm_matvec(benchmark::State& state, ggml_type t, int64_t in, int64_t out) {
  const int threads = int(state.range(0));
  static std::map<std::string, std::unique_ptr<weight_copies>> cache;
  auto& w = cache[std::string(tname(t)) + std::to_string(in) + "x" + std::to_string(out)];
  if (!w) w = std::make_unique<weight_copies>(make_weights(t, in, out, 192u << 20));
  const std::vector<float> x = random_x(size_t(in));
  std::vector<float> y(static_cast<size_t>(out));
  size_t c = 0;
  for (auto _ : state) {
    matmul(pool_of(threads), w->views[c], x.data(), 1, y.data());
    c = (c + 1) % w->views.size();
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(double(w->views[0].nbytes) / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}

void bm_gemm(benchmark::State& state, ggml_type t, int64_t in, int64_t out) {
  const int threads = int(state.range(0));
  const int64_t n_tok = state.range(1);
  const weight_copies w = make_weights(t, in, out, 0);
  const std::vector<float> x = random_x(size_t(in * n_tok));
  std::vector<float> y(static_cast<size_t>(out * n_tok));
  for (auto _ : state) {
    matmul(pool_of(threads), w.views[0], x.data(), n_tok, y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(in * out * n_tok) / 1e9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// Every matmul of the 125M model (12 layers of q, k, v, o 768x768, gate/up 768->2048,
// down 2048->768) for n_tok tokens, then the 32000x768 output for the last token.
void bm_model(benchmark::State& state, ggml_type t, int64_t n_tok) {
  const int threads = int(state.range(0));
  struct shape { int64_t in, out; };
  const shape layer[] = {{768, 768}, {768, 768}, {768, 768}, {768, 768}, {768, 2048}, {768, 2048}, {2048, 768}};
  static std::map<std::string, std::unique_ptr<std::vector<weight_copies>>> cache;
  auto& ws = cache[tname(t)];
  if (!ws) {
    ws = std::make_unique<std::vector<weight_copies>>();
    for (int l = 0; l < 12; ++l)
      for (const shape& s : layer) ws->push_back(make_weights(t, s.in, s.out, 0));
    ws->push_back(make_weights(t, 768, 32000, 0));
  }
  size_t bytes = 0;
  for (const auto& w : *ws) bytes += w.views[0].nbytes;
  const std::vector<float> x = random_x(size_t(2048 * n_tok));
  std::vector<float> y(static_cast<size_t>(32000 * n_tok));
  for (auto _ : state) {
    for (size_t i = 0; i + 1 < ws->size(); ++i) matmul(pool_of(threads), (*ws)[i].views[0], x.data(), n_tok, y.data());
    // Logits only for the last token, as llama.cpp's prompt processing does.
    matmul(pool_of(threads), ws->back().views[0], x.data(), 1, y.data());
    benchmark::ClobberMemory();
  }
  state.counters["tok/s"] = benchmark::Counter(double(n_tok), benchmark::Counter::kIsIterationInvariantRate);
  if (n_tok == 1)
    state.counters["GB/s"] = benchmark::Counter(double(bytes) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  benchmark::RegisterBenchmark("read_bw", bm_read_bw)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime();
  struct shape { int64_t in, out; };
  const shape shapes[] = {{768, 768}, {768, 2048}, {2048, 768}, {768, 32000}};
  for (ggml_type t : {ggml_type::f16, ggml_type::q8_0, ggml_type::f32}) {
    for (const shape& s : shapes) {
      const std::string dims = std::to_string(s.in) + "x" + std::to_string(s.out);
      benchmark::RegisterBenchmark(("matvec/" + std::string(tname(t)) + "/" + dims).c_str(),
                                   [=](benchmark::State& st) { bm_matvec(st, t, s.in, s.out); })
          ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();
    }
    for (const shape& s : shapes) {
      const std::string dims = std::to_string(s.in) + "x" + std::to_string(s.out);
      benchmark::RegisterBenchmark(("gemm/" + std::string(tname(t)) + "/" + dims).c_str(),
                                   [=](benchmark::State& st) { bm_gemm(st, t, s.in, s.out); })
          ->ArgNames({"threads", "n_tok"})->ArgsProduct({{1, 2}, {64, 512}})->UseRealTime();
    }
    benchmark::RegisterBenchmark(("model_decode/" + std::string(tname(t))).c_str(),
                                 [=](benchmark::State& st) { bm_model(st, t, 1); })
        ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();
    benchmark::RegisterBenchmark(("model_prefill512/" + std::string(tname(t))).c_str(),
                                 [=](benchmark::State& st) { bm_model(st, t, 512); })
        ->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace kvarena

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  kvarena::register_all();
  std::fprintf(stderr, "kernel variant: %s\n", kvarena::cpu_kernel_variant().c_str());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
