// env::Task: the executor's move-only callable. Checks that captures up to
// kInlineBytes stay inline (the hot call sites' sizes among them), larger ones
// go to the heap and still run, moves carry the callable and destroy it once,
// and empty Tasks behave as empty std::functions do.
#include "broker/env/task.h"

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mqlab::env::task_test {
namespace {

// Counts live copies of itself, so a test sees every destruction.
struct Counted {
  explicit Counted(int* live_in) : live(live_in) { ++*live; }
  Counted(Counted&& other) noexcept : live(other.live) { ++*live; }
  Counted(const Counted& other) : live(other.live) { ++*live; }
  ~Counted() { --*live; }
  int* live;
};

TEST(Task, EmptyTasksCompareEqualToNullptr) {
  Task empty;
  EXPECT_TRUE(empty == nullptr);
  EXPECT_FALSE(static_cast<bool>(empty));
  Task from_null = nullptr;
  EXPECT_TRUE(from_null == nullptr);
  // An empty std::function or null function pointer makes an empty Task, as
  // it would make an empty std::function.
  EXPECT_TRUE(Task(std::function<void()>()) == nullptr);
  void (*no_function)() = nullptr;
  EXPECT_TRUE(Task(no_function) == nullptr);
  EXPECT_FALSE(Task([] {}) == nullptr);
}

TEST(Task, HotCapturesStayInline) {
  int runs = 0;
  // [this, shared_ptr, std::function]: the largest capture the simulator's
  // hot paths make (a delivery, a posted completion with its callback).
  auto shared = std::make_shared<int>(7);
  std::function<void()> callback = [&runs] { ++runs; };
  Task hot = [&runs, shared, callback] { runs += *shared; callback(); };
  EXPECT_FALSE(hot.on_heap());
  hot();
  EXPECT_EQ(runs, 8);
  // A weak_ptr alone (a connection's flush) heap-allocated in std::function,
  // which keeps only trivially copyable captures inline.
  std::weak_ptr<int> weak = shared;
  Task flush = [weak, &runs] { runs += weak.lock() ? 1 : 0; };
  EXPECT_FALSE(flush.on_heap());
  flush();
  EXPECT_EQ(runs, 9);
  static_assert(Task::fits_inline<std::array<char, Task::kInlineBytes>>);
  static_assert(!Task::fits_inline<std::array<char, Task::kInlineBytes + 1>>);
}

TEST(Task, LargeCapturesGoToTheHeapAndStillRun) {
  std::array<int, 32> big{};
  big[31] = 5;
  int seen = 0;
  Task task = [big, &seen] { seen = big[31]; };
  EXPECT_TRUE(task.on_heap());
  Task moved = std::move(task);
  EXPECT_TRUE(task == nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_TRUE(moved.on_heap());
  moved();
  EXPECT_EQ(seen, 5);
}

TEST(Task, MovesCarryTheCallableAndDestroyItOnce) {
  for (const bool large : {false, true}) {
    int live = 0;
    int runs = 0;
    {
      std::array<char, 100> padding{};
      Task first = large ? Task([counted = Counted(&live), padding, &runs] { runs += 1 + padding[0]; })
                         : Task([counted = Counted(&live), &runs] { ++runs; });
      EXPECT_EQ(first.on_heap(), large);
      EXPECT_EQ(live, 1);
      Task second = std::move(first);
      EXPECT_EQ(live, 1) << "a move relocates, it does not copy";
      std::vector<Task> tasks;
      tasks.push_back(std::move(second));
      for (int i = 0; i < 100; ++i) tasks.push_back([] {});  // reallocations move the first Task
      EXPECT_EQ(live, 1);
      tasks.front()();
      EXPECT_EQ(runs, 1);
      tasks.front() = nullptr;
      EXPECT_EQ(live, 0);
    }
    EXPECT_EQ(live, 0);
  }
}

TEST(Task, HoldsMoveOnlyCapturesAndOtherTasks) {
  auto owned = std::make_unique<int>(3);
  int seen = 0;
  Task inner = [owned = std::move(owned), &seen] { seen += *owned; };
  Task outer = [inner = std::move(inner)] { inner(); };
  EXPECT_TRUE(outer.on_heap()) << "a 64-byte Task does not fit in 56 bytes";
  outer();
  outer();
  EXPECT_EQ(seen, 6);
}

TEST(Task, ACallableMayChangeItsOwnCaptures) {
  int total = 0;
  Task accumulate = [step = 1, &total]() mutable { total += step++; };
  accumulate();
  accumulate();
  accumulate();
  EXPECT_EQ(total, 6);
}

TEST(Task, ClearingBeforeDestroyingLetsACaptureSeeItEmpty) {
  // A capture whose destructor looks at the Task holding it finds it empty.
  struct Probe {
    Task* holder;
    bool* saw_empty;
    Probe(Task* holder_in, bool* saw_empty_in) : holder(holder_in), saw_empty(saw_empty_in) {}
    Probe(Probe&& other) noexcept : holder(std::exchange(other.holder, nullptr)), saw_empty(other.saw_empty) {}
    ~Probe() {
      if (holder != nullptr) *saw_empty = (*holder == nullptr);
    }
    void operator()() const {}
  };
  bool saw_empty = false;
  Task task;
  task = Task(Probe(&task, &saw_empty));
  task = nullptr;
  EXPECT_TRUE(saw_empty);
}

TEST(TaskDeathTest, RunningAnEmptyTaskIsABug) {
  const Task empty{};  // {}: clang refuses default-initializing a const Task (its union has no initializer)
  EXPECT_DEATH(empty(), "empty InlineFunction");
}

}  // namespace
}  // namespace mqlab::env::task_test
