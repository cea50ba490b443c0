// RecordRing (SpilledRecords' tail) against a std::deque under random
// appends, block pops, writes and reads, through growth and wrap-around.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "sim/record_ring.h"

namespace mqlab::sim::record_ring_test {
namespace {

struct Row {
  uint64_t index = 0;
  int32_t value = 0;
};

void expect_same(const RecordRing<Row>& ring, const std::deque<Row>& model) {
  RC_ASSERT(ring.size() == model.size());
  for (size_t i = 0; i < model.size(); ++i) {
    RC_ASSERT(ring[i].index == model[i].index);
    RC_ASSERT(ring[i].value == model[i].value);
  }
  // The spans hold the same records in the same order, in at most two runs.
  std::vector<Row> spanned;
  int spans = 0;
  ring.for_each_span([&](std::span<const Row> span) {
    RC_ASSERT(!span.empty());
    ++spans;
    spanned.insert(spanned.end(), span.begin(), span.end());
  });
  RC_ASSERT(spans <= 2);
  RC_ASSERT(spanned.size() == model.size());
  for (size_t i = 0; i < model.size(); ++i) {
    RC_ASSERT(spanned[i].index == model[i].index);
    RC_ASSERT(spanned[i].value == model[i].value);
  }
}

RC_GTEST_PROP(RecordRing, RandomOperationsMatchADeque, ()) {
  // A small bound, so growth stops at it, wrap-around comes early, and a
  // ring that is never popped grows past it.
  const size_t bound = *rc::gen::inRange<size_t>(1, 40);
  RecordRing<Row> ring(bound);
  std::deque<Row> model;
  uint64_t next = 0;
  size_t peak = 0;  // the most records held at once
  const int steps = *rc::gen::inRange(1, 300);
  for (int step = 0; step < steps; ++step) {
    const int op = *rc::gen::inRange(0, 10);
    if (op < 5) {
      const Row row{next++, *rc::gen::arbitrary<int32_t>()};
      ring.push_back(row);
      model.push_back(row);
      peak = std::max(peak, model.size());
      if (peak <= bound) RC_ASSERT(ring.capacity() <= bound);  // doublings stop at the bound
    } else if (op < 7 && !model.empty()) {
      const size_t count = *rc::gen::inRange<size_t>(0, model.size() + 1);
      std::vector<Row> out(count);
      ring.copy_front(count, out.data());
      for (size_t i = 0; i < count; ++i) RC_ASSERT(out[i].index == model[i].index);
      // The same records as one or two runs of slots (what a spill writes).
      std::vector<Row> spanned;
      size_t runs = 0;
      ring.for_each_front_span(count, [&](std::span<const Row> run) {
        RC_ASSERT(!run.empty());
        ++runs;
        spanned.insert(spanned.end(), run.begin(), run.end());
      });
      RC_ASSERT(runs <= 2u);
      RC_ASSERT(spanned.size() == count);
      for (size_t i = 0; i < count; ++i) RC_ASSERT(spanned[i].index == model[i].index);
      ring.pop_front(count);
      model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(count));
    } else if (!model.empty()) {
      const size_t at = *rc::gen::inRange<size_t>(0, model.size());
      const int32_t value = *rc::gen::arbitrary<int32_t>();
      ring[at].value = value;
      model[at].value = value;
    }
    expect_same(ring, model);
  }
}

TEST(RecordRing, KeepsOrderAcrossTheWrapAndAGrowthWhileWrapped) {
  RecordRing<Row> ring(8);
  for (uint64_t i = 0; i < 8; ++i) ring.push_back(Row{i, 0});
  ASSERT_EQ(ring.capacity(), 8u);
  ring.pop_front(5);  // head at slot 5
  for (uint64_t i = 8; i < 13; ++i) ring.push_back(Row{i, 0});  // wraps: slots 0..4
  ASSERT_EQ(ring.capacity(), 8u);
  ring.push_back(Row{13, 0});  // full and wrapped: grows past the bound
  EXPECT_EQ(ring.capacity(), 16u);
  ASSERT_EQ(ring.size(), 9u);
  for (size_t i = 0; i < ring.size(); ++i) EXPECT_EQ(ring[i].index, 5 + i);
}

}  // namespace
}  // namespace mqlab::sim::record_ring_test
