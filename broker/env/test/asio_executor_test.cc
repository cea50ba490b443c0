// The AsioExecutor's run queue: posted tasks run in one FIFO across turns and
// threads, a turn hands the thread back to Asio after kTasksPerTurn tasks (so
// sockets, timers and direct io_context posts are not starved), and a gone
// executor runs nothing more. Each test runs an io_context on this thread; a
// second thread posts where the test says so.
#include "broker/env/asio_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace mqlab::env::asio_executor_test {
namespace {

constexpr int kTurn = AsioExecutor::kTasksPerTurn;

TEST(AsioExecutor, TasksRunInPostOrderAcrossTurnsAndPostsFromTasksQueueBehind) {
  boost::asio::io_context io{1};
  AsioExecutor executor(io);
  // More than a few turns' worth, so the queue grows, wraps and yields.
  constexpr int kTasks = 7 * kTurn + 5;
  std::vector<int> order;
  // Setup code posts before the io_context runs (the inbox path); the tasks
  // post from the io thread (the run queue path).
  for (int i = 0; i < kTasks; ++i) {
    executor.post([&, i] {
      order.push_back(i);
      executor.post([&, i] { order.push_back(kTasks + i); });
    });
  }
  EXPECT_EQ(executor.queued_tasks(), static_cast<size_t>(kTasks));
  io.run();  // returns: no handler is left behind once the queue is empty
  ASSERT_EQ(order.size(), static_cast<size_t>(2 * kTasks));
  for (int i = 0; i < 2 * kTasks; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i) << "position " << i;
  EXPECT_EQ(executor.queued_tasks(), 0u);
}

TEST(AsioExecutor, ATaskRepostingItselfDoesNotStarveSocketsTimersOrDirectPosts) {
  boost::asio::io_context io{1};
  AsioExecutor executor(io);
  // A byte already waiting on a socket, a timer due at once, and a handler
  // posted to the io_context directly (as sync completions are): each must
  // get its turn within a few turns of posted tasks.
  boost::asio::local::stream_protocol::socket writer(io);
  boost::asio::local::stream_protocol::socket reader(io);
  boost::asio::local::connect_pair(writer, reader);
  const uint8_t byte = 7;
  ASSERT_EQ(boost::asio::write(writer, boost::asio::buffer(&byte, 1)), 1u);
  uint8_t received = 0;

  int runs = 0;
  std::optional<int> socket_at;
  std::optional<int> timer_at;
  std::optional<int> direct_at;
  constexpr int kGiveUp = 100 * kTurn;  // far past the bound checked below
  std::function<void()> again = [&] {
    ++runs;
    if (runs < kGiveUp && !(socket_at && timer_at && direct_at)) executor.post([&] { again(); });
  };
  executor.post([&] {
    again();
    reader.async_read_some(boost::asio::buffer(&received, 1),
                           [&](const boost::system::error_code& error, size_t) {
                             EXPECT_FALSE(error) << error.message();
                             socket_at = runs;
                           });
    executor.run_after(0, [&] { timer_at = runs; });
    boost::asio::post(io, [&] { direct_at = runs; });
  });
  io.run();
  ASSERT_TRUE(socket_at && timer_at && direct_at) << "runs " << runs;
  EXPECT_EQ(received, 7);
  // The direct post waits for the current turn only; the socket and the
  // timer for the reactor, which runs between turns.
  EXPECT_LE(*direct_at, 2 * kTurn);
  EXPECT_LE(*socket_at, 3 * kTurn);
  EXPECT_LE(*timer_at, 3 * kTurn);
  EXPECT_LT(runs, kGiveUp);
}

// Round r: the io thread posts "before r", then lets the other thread post
// "from r", and on seeing that post done, posts "after r". The log must be in
// exactly that order: a post from another thread runs after the io thread's
// posts that happened before it and before those that happened after it.
TEST(AsioExecutor, PostsFromAnotherThreadKeepTheOrderTheyHappenedIn) {
  boost::asio::io_context io{1};
  AsioExecutor executor(io);
  constexpr int kRounds = 300;
  std::vector<std::string> log;
  std::atomic<int> may_post{-1};  // the round the other thread may post in
  std::atomic<int> posted{-1};    // the last round it posted in
  int round = 0;
  std::thread other([&] {
    for (int r = 0; r < kRounds; ++r) {
      while (may_post.load(std::memory_order_acquire) < r) std::this_thread::yield();
      executor.post([&log, r] { log.push_back("from " + std::to_string(r)); });
      posted.store(r, std::memory_order_release);
    }
  });
  std::function<void()> poll = [&] {
    if (round == kRounds) return;
    if (posted.load(std::memory_order_acquire) == round) {
      executor.post([&log, r = round] { log.push_back("after " + std::to_string(r)); });
      ++round;
      if (round == kRounds) return;
      executor.post([&log, r = round] { log.push_back("before " + std::to_string(r)); });
      may_post.store(round, std::memory_order_release);
    }
    executor.post([&] { poll(); });
  };
  executor.post([&] {
    log.push_back("before 0");
    may_post.store(0, std::memory_order_release);
    poll();
  });
  io.run();
  other.join();
  ASSERT_EQ(log.size(), static_cast<size_t>(3 * kRounds));
  for (int r = 0; r < kRounds; ++r) {
    const size_t at = static_cast<size_t>(3 * r);
    EXPECT_EQ(log[at], "before " + std::to_string(r));
    EXPECT_EQ(log[at + 1], "from " + std::to_string(r));
    EXPECT_EQ(log[at + 2], "after " + std::to_string(r));
  }
}

TEST(AsioExecutor, ManyPostsFromAnotherThreadAllRunInOrderOnTheIoThread) {
  boost::asio::io_context io{1};
  AsioExecutor executor(io);
  constexpr int kTasks = 20'000;
  std::vector<int> order;
  std::atomic<bool> off_thread = false;
  const std::thread::id io_thread = std::this_thread::get_id();
  // Keeps io.run() going until the last task ran.
  auto work = boost::asio::make_work_guard(io);
  std::thread other([&] {
    for (int i = 0; i < kTasks; ++i) {
      executor.post([&, i] {
        if (std::this_thread::get_id() != io_thread) off_thread = true;
        order.push_back(i);
        if (i == kTasks - 1) work.reset();
      });
    }
  });
  // Meanwhile the io thread keeps posting its own tasks.
  int own = 0;
  std::function<void()> busy = [&] {
    if (++own < 5'000) executor.post([&] { busy(); });
  };
  executor.post([&] { busy(); });
  io.run();
  other.join();
  EXPECT_FALSE(off_thread.load());
  ASSERT_EQ(order.size(), static_cast<size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
}

// Posts when destroyed, as a capture's destructor may.
struct PostsWhenDestroyed {
  PostsWhenDestroyed(AsioExecutor* executor_in, bool* ran_in) : executor(executor_in), ran(ran_in) {}
  PostsWhenDestroyed(PostsWhenDestroyed&& other) noexcept
      : executor(std::exchange(other.executor, nullptr)), ran(other.ran) {}
  PostsWhenDestroyed& operator=(PostsWhenDestroyed&&) = delete;
  ~PostsWhenDestroyed() {
    if (executor != nullptr) executor->post([ran = ran] { *ran = true; });
  }
  void operator()() const { *ran = true; }
  AsioExecutor* executor;
  bool* ran;
};

TEST(AsioExecutor, ATaskDestroyingTheExecutorEndsTheTurnAndDropsTheRest) {
  boost::asio::io_context io{1};
  auto executor = std::make_unique<AsioExecutor>(io);
  int first_ran = 0;
  bool later_ran = false;
  bool posted_on_destroy_ran = false;
  executor->post([&] {
    executor->post([&] { later_ran = true; });  // queued behind, in this turn
    executor->post(PostsWhenDestroyed(executor.get(), &posted_on_destroy_ran));
    // A post from another thread waits in the inbox, and its wake in Asio.
    std::thread([&] { executor->post([&] { later_ran = true; }); }).join();
    ++first_ran;
    executor.reset();
  });
  io.run();
  EXPECT_EQ(first_ran, 1);
  EXPECT_FALSE(later_ran);
  EXPECT_FALSE(posted_on_destroy_ran);
}

TEST(AsioExecutor, DestroyedBeforeRunningDropsEveryQueuedTask) {
  boost::asio::io_context io{1};
  bool ran = false;
  {
    AsioExecutor executor(io);
    executor.post([&] { ran = true; });  // the inbox: posted outside io.run()
    executor.post(PostsWhenDestroyed(&executor, &ran));
    EXPECT_EQ(executor.queued_tasks(), 2u);
  }
  io.run();
  EXPECT_FALSE(ran);
}

TEST(AsioExecutor, StopBetweenTasksEndsTheTurnAndKeepsTheRestInOrder) {
  boost::asio::io_context io{1};
  AsioExecutor executor(io);
  std::vector<int> order;
  executor.post([&] {
    for (int i = 0; i < 10; ++i) executor.post([&, i] { order.push_back(i); });
  });
  const std::function<bool()> third = [&] { return order.size() == 3; };
  EXPECT_EQ(executor.set_stop_between_tasks(&third), nullptr);
  while (order.size() < 3) ASSERT_EQ(io.run_one(), 1u);
  EXPECT_EQ(order.size(), 3u);  // not the whole turn
  EXPECT_EQ(executor.queued_tasks(), 7u);
  EXPECT_EQ(executor.set_stop_between_tasks(nullptr), &third);
  io.run();
  ASSERT_EQ(order.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

}  // namespace
}  // namespace mqlab::env::asio_executor_test
