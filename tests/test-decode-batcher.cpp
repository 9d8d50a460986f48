// test-decode-batcher.cpp: the decode batcher (engine/decode-batcher.h) with a stand-in run
// function: every request runs exactly once and its caller returns after it; concurrent
// members share batches; a lone member is not held past its wait; a batch's exception
// reaches each of its callers and no other.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <stdexcept>
#include <thread>
#include <vector>

#include "decode-batcher.h"

namespace kvarena {
namespace {

using namespace std::chrono_literals;

struct slot {
  std::atomic<int> runs{0};
  int32_t last = -1;
};

TEST(DecodeBatcher, EveryRequestRunsOnceAndMembersShareBatches) {
  constexpr int n = 4, steps = 50;
  std::vector<slot> slots(n);
  std::atomic<int> max_seen{0};
  decode_batcher b(8, 500ms, [&](const std::vector<decode_batcher::request>& batch) {
    max_seen = std::max<int>(max_seen, int(batch.size()));
    for (const auto& r : batch) {
      slot& s = *static_cast<slot*>(r.seq);
      s.runs++;
      s.last = r.token;
    }
  });
  for (int i = 0; i < n; ++i) b.join();
  std::barrier sync(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      for (int t = 0; t < steps; ++t) {
        sync.arrive_and_wait();  // all four decode at once, as lock-stepped sequences do
        b.decode(&slots[i], int32_t(1000 * i + t));
        EXPECT_EQ(slots[i].last, 1000 * i + t);  // our request ran before decode returned
      }
      b.leave();
    });
  for (auto& t : threads) t.join();
  for (const slot& s : slots) EXPECT_EQ(s.runs, steps);
  EXPECT_EQ(b.requests(), n * steps);
  // With a 500 ms wait and every member decoding together, each step is one batch of 4.
  EXPECT_EQ(max_seen, n);
  EXPECT_EQ(b.batches(), steps);
}

TEST(DecodeBatcher, ALoneMemberIsNotHeldPastItsWait) {
  int runs = 0;
  decode_batcher b(8, 2ms, [&](const std::vector<decode_batcher::request>& batch) { runs += int(batch.size()); });
  b.join();
  b.join();  // a second member that never decodes (busy elsewhere)
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) b.decode(nullptr, i);
  EXPECT_EQ(runs, 5);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);  // five waits of 2 ms, not forever
  b.leave();
  b.leave();
}

TEST(DecodeBatcher, ABatchErrorReachesItsCallersOnly) {
  std::atomic<int> calls{0};
  decode_batcher b(4, 1ms, [&](const std::vector<decode_batcher::request>& batch) {
    ++calls;
    for (const auto& r : batch)
      if (r.token < 0) throw std::runtime_error("device lost");
  });
  b.join();
  EXPECT_THROW(b.decode(nullptr, -1), std::runtime_error);
  EXPECT_NO_THROW(b.decode(nullptr, 1));
  EXPECT_EQ(calls, 2);
  b.leave();
}

}  // namespace
}  // namespace kvarena
