// Checks the Scheduler (virtual time, ordering, cancellation, owners) and the
// per-process Env views built on it (SimClock, SimExecutor, SimEnv, SimProcess),
// by scheduling events and observing the order and instants they run at.
#include "sim/scheduler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/sim_disk.h"
#include "sim/sim_env.h"

namespace mqlab::sim::scheduler_test {
namespace {

TEST(Scheduler, StartsAtZeroAndIdle) {
  Scheduler scheduler;
  EXPECT_EQ(scheduler.now(), 0);
  EXPECT_EQ(scheduler.pending_count(), 0u);
  EXPECT_FALSE(scheduler.run_one());
  EXPECT_EQ(scheduler.run_until_idle(), 0u);
}

TEST(Scheduler, RunsInTimeOrderAndJumpsOverIdleTime) {
  Scheduler scheduler;
  std::vector<std::pair<int, Nanos>> ran;
  scheduler.schedule_at(seconds(30), [&] { ran.emplace_back(3, scheduler.now()); });
  scheduler.schedule_at(millis(5), [&] { ran.emplace_back(1, scheduler.now()); });
  scheduler.schedule_at(seconds(1), [&] { ran.emplace_back(2, scheduler.now()); });
  EXPECT_EQ(scheduler.pending_count(), 3u);
  EXPECT_EQ(scheduler.next_due(), millis(5));
  EXPECT_EQ(scheduler.run_until_idle(), 3u);
  const std::vector<std::pair<int, Nanos>> expected{{1, millis(5)}, {2, seconds(1)}, {3, seconds(30)}};
  EXPECT_EQ(ran, expected);
  EXPECT_EQ(scheduler.now(), seconds(30));
  EXPECT_EQ(scheduler.events_run(), 3u);
}

TEST(Scheduler, SameInstantRunsInSchedulingOrder) {
  Scheduler scheduler;
  std::string order;
  for (char c : std::string("abcdef")) scheduler.schedule_at(millis(1), [&order, c] { order += c; });
  // Scheduled from inside a task at the same instant: after the rest.
  scheduler.schedule_at(millis(1), [&] { scheduler.schedule_at(scheduler.now(), [&] { order += 'z'; }); });
  scheduler.schedule_at(millis(1), [&] { order += 'g'; });
  scheduler.run_until_idle();
  EXPECT_EQ(order, "abcdefgz");
}

TEST(Scheduler, RunUntilAdvancesEvenWhenIdleAndStopsAtTheLimit) {
  Scheduler scheduler;
  int ran = 0;
  scheduler.schedule_at(millis(10), [&] { ++ran; });
  scheduler.schedule_at(millis(20), [&] { ++ran; });
  scheduler.run_until(millis(10));  // due exactly at the limit: runs
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(scheduler.now(), millis(10));
  scheduler.run_until(millis(15));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(scheduler.now(), millis(15));
  scheduler.run_for(seconds(100));
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(scheduler.now(), millis(15) + seconds(100));
}

TEST(Scheduler, CancelDropsOnlyThatEvent) {
  Scheduler scheduler;
  std::string order;
  const EventId a = scheduler.schedule_after(millis(1), [&] { order += 'a'; });
  const EventId b = scheduler.schedule_after(millis(2), [&] { order += 'b'; });
  EXPECT_NE(a, kNoEvent);
  EXPECT_NE(a, b);
  EXPECT_TRUE(scheduler.cancel(a));
  EXPECT_FALSE(scheduler.cancel(a));
  EXPECT_FALSE(scheduler.is_pending(a));
  EXPECT_TRUE(scheduler.is_pending(b));
  scheduler.run_until_idle();
  EXPECT_EQ(order, "b");
  EXPECT_FALSE(scheduler.cancel(b));  // already ran
}

TEST(Scheduler, RunUntilIdleHonoursTheEventLimit) {
  Scheduler scheduler;
  // A task that reschedules itself forever: the limit is what stops it.
  std::function<void()> again = [&] { scheduler.schedule_after(millis(1), again); };
  scheduler.schedule_after(0, again);
  EXPECT_EQ(scheduler.run_until_idle(100), 100u);
  EXPECT_EQ(scheduler.pending_count(), 1u);
  EXPECT_EQ(scheduler.now(), millis(99));
}

TEST(Scheduler, KillOwnerDropsItsEventsAndRefusesNewOnes) {
  Scheduler scheduler;
  const OwnerId broker = scheduler.add_owner();
  const OwnerId client = scheduler.add_owner();
  std::string order;
  scheduler.schedule_at(millis(1), [&] { order += 'b'; }, broker);
  scheduler.schedule_at(millis(2), [&] { order += 'c'; }, client);
  scheduler.schedule_at(millis(3), [&] { order += 'B'; }, broker);
  scheduler.schedule_at(millis(4), [&] { order += 'w'; });
  EXPECT_EQ(scheduler.pending_count(), 4u);
  scheduler.kill_owner(broker);
  EXPECT_FALSE(scheduler.owner_alive(broker));
  EXPECT_TRUE(scheduler.owner_alive(client));
  EXPECT_EQ(scheduler.pending_count(), 2u);
  const EventId late = scheduler.schedule_at(millis(5), [&] { order += 'X'; }, broker);
  EXPECT_NE(late, kNoEvent);
  EXPECT_FALSE(scheduler.is_pending(late));
  EXPECT_FALSE(scheduler.cancel(late));
  scheduler.run_until_idle();
  EXPECT_EQ(order, "cw");
  scheduler.kill_owner(broker);  // twice is harmless
}

TEST(Scheduler, AKilledTaskDestructorCannotScheduleForItsOwner) {
  Scheduler scheduler;
  const OwnerId process = scheduler.add_owner();
  bool ran = false;
  // The lambda's captured guard schedules from its destructor, as a careless
  // broker destructor might; the scheduler must refuse it.
  struct Guard {
    Scheduler* scheduler;
    OwnerId owner;
    bool* ran;
    ~Guard() { scheduler->schedule_at(scheduler->now(), [r = ran] { *r = true; }, owner); }
  };
  auto guard = std::shared_ptr<Guard>(new Guard{&scheduler, process, &ran});
  scheduler.schedule_at(millis(1), [guard] {}, process);
  guard.reset();
  scheduler.kill_owner(process);
  scheduler.run_until_idle();
  EXPECT_FALSE(ran);
  EXPECT_EQ(scheduler.pending_count(), 0u);
}

TEST(SimClock, WallClockIsEpochPlusVirtualTimePlusSkew) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  EXPECT_EQ(clock.now_ns(), 0);
  EXPECT_EQ(clock.wall_ms(), kDefaultEpochWallMs);
  scheduler.run_until(seconds(2) + 999'999);
  EXPECT_EQ(clock.now_ns(), seconds(2) + 999'999);
  EXPECT_EQ(clock.wall_ms(), kDefaultEpochWallMs + 2000);
  clock.set_skew_ms(-5000);  // a machine whose clock is 5 s behind
  EXPECT_EQ(clock.wall_ms(), kDefaultEpochWallMs - 3000);
  EXPECT_EQ(clock.now_ns(), seconds(2) + 999'999);  // monotonic time is unaffected
}

TEST(SimExecutor, PostRunsAfterTheCurrentTaskInOrder) {
  Scheduler scheduler;
  SimExecutor executor(scheduler, scheduler.add_owner());
  std::string order;
  executor.post([&] {
    order += '1';
    executor.post([&] { order += '3'; });
    executor.post([&] { order += '4'; });
    order += '2';
  });
  scheduler.run_until_idle();
  EXPECT_EQ(order, "1234");
  EXPECT_EQ(scheduler.now(), 0);
}

TEST(SimExecutor, TimersFireAfterTheirDelayAndCancelOnlyOwnTimers) {
  Scheduler scheduler;
  SimExecutor mine(scheduler, scheduler.add_owner());
  SimExecutor theirs(scheduler, scheduler.add_owner());
  std::vector<Nanos> fired;
  const env::TimerId a = mine.run_after(millis(100), [&] { fired.push_back(scheduler.now()); });
  const env::TimerId b = theirs.run_after(millis(50), [&] { fired.push_back(scheduler.now()); });
  EXPECT_NE(a, env::kNoTimer);
  EXPECT_FALSE(mine.cancel(b));  // not our timer
  scheduler.run_until_idle();
  EXPECT_EQ(fired, (std::vector<Nanos>{millis(50), millis(100)}));
  EXPECT_FALSE(mine.cancel(a));  // already ran
  const env::TimerId c = mine.run_after(millis(1), [&] { fired.push_back(-1); });
  EXPECT_TRUE(mine.cancel(c));
  scheduler.run_until_idle();
  EXPECT_EQ(fired.size(), 2u);
}

TEST(SimProcess, KillDropsEverythingAndRestartIsAFreshIncarnation) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  SimDisk disk(scheduler, DiskProfile::instant(), SimDiskOptions{}, env::Random(1));
  SimProcess broker("broker-a", scheduler, clock, {Mount{"/", &disk}}, env::Random(42));
  int ticks = 0;
  SimEnv& first = broker.start();
  EXPECT_TRUE(broker.running());
  EXPECT_EQ(broker.incarnation(), 1u);
  std::function<void()> tick = [&] {
    ++ticks;
    first.executor().run_after(millis(10), tick);
  };
  first.executor().post(tick);
  scheduler.run_until(millis(35));
  EXPECT_EQ(ticks, 4);  // at 0, 10, 20, 30
  const OwnerId first_owner = first.owner();
  broker.kill();
  EXPECT_FALSE(broker.running());
  EXPECT_EQ(scheduler.pending_count(), 0u);
  scheduler.run_until(seconds(1));
  EXPECT_EQ(ticks, 4);
  first.executor().post([&] { ++ticks; });  // a dead incarnation's post is refused
  scheduler.run_until_idle();
  EXPECT_EQ(ticks, 4);

  SimEnv& second = broker.start();
  EXPECT_EQ(broker.incarnation(), 2u);
  EXPECT_NE(second.owner(), first_owner);
  second.executor().post([&] { ++ticks; });
  scheduler.run_until_idle();
  EXPECT_EQ(ticks, 5);
  EXPECT_EQ(second.clock().now_ns(), seconds(1));
}

TEST(SimProcess, IncarnationsDrawIndependentButReproducibleRandoms) {
  const auto draws = [](uint64_t seed) {
    Scheduler scheduler;
    SimClock clock(scheduler);
    SimDisk disk(scheduler, DiskProfile::instant(), SimDiskOptions{}, env::Random(1));
    SimProcess process("p", scheduler, clock, {Mount{"/", &disk}}, env::Random(seed));
    std::vector<uint64_t> out;
    out.push_back(process.start().random().next_u64());
    process.kill();
    out.push_back(process.start().random().next_u64());
    return out;
  };
  const std::vector<uint64_t> a = draws(7);
  EXPECT_EQ(a, draws(7));
  EXPECT_NE(a[0], a[1]);
  EXPECT_NE(a, draws(8));
}

TEST(SimEnv, DestroyingAnEnvKillsWhatItQueued) {
  Scheduler scheduler;
  SimClock clock(scheduler);
  SimDisk disk(scheduler, DiskProfile::instant(), SimDiskOptions{}, env::Random(1));
  bool ran = false;
  {
    SimEnv env(scheduler, clock, {Mount{"/", &disk}}, env::Random(3));
    env.executor().run_after(millis(1), [&] { ran = true; });
    EXPECT_EQ(scheduler.pending_count(), 1u);
  }
  scheduler.run_until_idle();
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace mqlab::sim::scheduler_test

namespace mqlab::sim::scheduler_test {
namespace {

// SIGSTOP / SIGCONT: a paused owner's events wait, then run in (due, id)
// order at the resume instant or later; other owners run on meanwhile.
TEST(SchedulerPause, HeldEventsRunAfterResumeInOrder) {
  Scheduler scheduler;
  const OwnerId paused = scheduler.add_owner();
  const OwnerId other = scheduler.add_owner();
  std::vector<std::string> ran;
  scheduler.schedule_at(millis(10), [&] { ran.push_back("a@" + std::to_string(scheduler.now() / kNanosPerMilli)); }, paused);
  scheduler.schedule_at(millis(20), [&] { ran.push_back("b@" + std::to_string(scheduler.now() / kNanosPerMilli)); }, paused);
  scheduler.schedule_at(millis(15), [&] { ran.push_back("other@15"); }, other);
  scheduler.pause_owner(paused);
  EXPECT_TRUE(scheduler.owner_paused(paused));
  scheduler.schedule_at(millis(5), [&] { ran.push_back("c@" + std::to_string(scheduler.now() / kNanosPerMilli)); }, paused);
  scheduler.run_until(millis(30));
  EXPECT_EQ(ran, (std::vector<std::string>{"other@15"}));
  scheduler.resume_owner(paused);
  scheduler.run_until(millis(40));
  EXPECT_EQ(ran, (std::vector<std::string>{"other@15", "a@30", "b@30", "c@30"}));
}

TEST(SchedulerPause, KillingAPausedOwnerDropsItsHeldEvents) {
  Scheduler scheduler;
  const OwnerId owner = scheduler.add_owner();
  bool ran = false;
  const EventId id = scheduler.schedule_after(millis(1), [&] { ran = true; }, owner);
  scheduler.pause_owner(owner);
  EXPECT_EQ(scheduler.pending_count(), 0u);
  EXPECT_TRUE(scheduler.is_pending(id));
  scheduler.kill_owner(owner);
  EXPECT_FALSE(scheduler.is_pending(id));
  scheduler.resume_owner(owner);
  scheduler.run_until(millis(5));
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace mqlab::sim::scheduler_test
