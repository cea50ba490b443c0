// The real file system's lock (flock, released with the process) and the PowerLossFileSystem over it: what a
// power cut keeps (bytes covered by a completed sync, entries covered by a directory sync) and what it undoes.
#include "broker/env/power_loss_file_system.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "broker/env/path.h"
#include "broker/env/posix_env.h"
#include "broker/env/test/temp_dir.h"

namespace mqlab::env::power_loss_file_system_test {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kLimit(10'000);

std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

class PowerLossFileSystemTest : public ::testing::Test {
 protected:
  std::string path(std::string_view name) const { return join_path(dir_, name); }

  std::shared_ptr<File> open(FileSystem& files, std::string_view name, OpenOptions options = {.create = true}) {
    Result<std::shared_ptr<File>> file = files.open(path(name), options);
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    return file.ok() ? *file : nullptr;
  }
  Status wait(const std::function<void(SyncCallback)>& start) {
    std::optional<Status> result;
    start([&](Status status) { result = std::move(status); });
    EXPECT_TRUE(env_.run_until([&] { return result.has_value(); }, kLimit));
    return result.value_or(Status::Timeout("sync never completed"));
  }
  // The file's bytes as the OS has them now (what a restarted process reads).
  std::optional<std::string> on_disk(std::string_view name) {
    if (!std::filesystem::exists(path(name))) return std::nullopt;
    std::shared_ptr<File> file = open(posix(), name, OpenOptions{});
    std::string text(static_cast<size_t>(*file->size()), '\0');
    EXPECT_TRUE(file->pread(0, {reinterpret_cast<uint8_t*>(text.data()), text.size()}).ok());
    return text;
  }
  FileSystem& posix() { return posix_; }

  testing::TempDir temp_{"mqlab_power_loss_test"};
  const std::string dir_ = temp_.path();
  PosixEnv env_{1};
  PosixFileSystem posix_{env_.io_context()};
};

// --- flock --------------------------------------------------------------------------

TEST_F(PowerLossFileSystemTest, LockIsExclusiveWithinAProcessAndNamesTheHolderPid) {
  Result<std::unique_ptr<FileLock>> first = posix().lock(path("lock"));
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(on_disk("lock"), "pid " + std::to_string(::getpid()) + "\n");
  const Result<std::unique_ptr<FileLock>> second = posix().lock(path("lock"));
  ASSERT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(path("lock") + ": locked by another process (pid " +
                                           std::to_string(::getpid()) + ")"),
            std::string::npos)
      << second.status().to_string();
  first->reset();
  EXPECT_TRUE(posix().lock(path("lock")).ok()) << "dropping the lock releases it";
}

TEST_F(PowerLossFileSystemTest, LockHeldByAnotherProcessIsRefusedAndReleasedWhenItDies) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const std::string lock_path = path("lock");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // only async-signal-safe calls until _exit
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) ::_exit(1);
    char text[32] = "pid ";
    int length = 4;
    char digits[16];
    int count = 0;
    for (pid_t pid = ::getpid(); pid > 0; pid /= 10) digits[count++] = static_cast<char>('0' + pid % 10);
    while (count > 0) text[length++] = digits[--count];
    text[length++] = '\n';
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text, static_cast<size_t>(length), 0) != length) ::_exit(1);
    if (::write(ready[1], "x", 1) != 1) ::_exit(1);
    for (;;) ::pause();
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  const Result<std::unique_ptr<FileLock>> refused = posix().lock(lock_path);
  ASSERT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("(pid " + std::to_string(child) + ")"), std::string::npos)
      << refused.status().to_string();
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_TRUE(posix().lock(lock_path).ok()) << "a dead holder's lock is gone";
}

// --- power loss ------------------------------------------------------------------------

TEST_F(PowerLossFileSystemTest, SyncedBytesSurviveAndUnsyncedWritesAreUndone) {
  ASSERT_TRUE(wait([&](SyncCallback done) { posix().sync_dir(dir_, std::move(done)); }).ok());
  PowerLossFileSystem files(posix());
  std::shared_ptr<File> file = open(files, "log");
  ASSERT_TRUE(wait([&](SyncCallback done) { files.sync_dir(dir_, std::move(done)); }).ok());
  ASSERT_TRUE(file->pwrite(0, bytes_of("durable-")).ok());
  ASSERT_TRUE(wait([&](SyncCallback done) { file->sync(std::move(done)); }).ok());
  ASSERT_TRUE(file->pwrite(8, bytes_of("lost tail")).ok());  // extends: undone by a truncate
  ASSERT_TRUE(file->pwrite(0, bytes_of("DUR")).ok());        // overwrites synced bytes: old bytes return
  EXPECT_EQ(on_disk("log"), "DURable-lost tail");
  EXPECT_EQ(files.undo_bytes(), 3);

  Result<PowerLossStats> cut = files.cut_power();
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  EXPECT_EQ(cut->files_reverted, 1);
  EXPECT_EQ(cut->undo_entries_applied, 2);
  EXPECT_EQ(cut->files_removed, 0);
  EXPECT_EQ(on_disk("log"), "durable-");
}

// Its files decline the mapping hint: a copy into a mapping would reach the
// page cache without the pwrite this layer records, and the cut could not
// undo it. So the CommitLog writes with pwrite under powerLossInjection.
TEST_F(PowerLossFileSystemTest, ItsFilesAreNeverMapped) {
  PowerLossFileSystem files(posix());
  std::shared_ptr<File> file = open(files, "segment");
  ASSERT_TRUE(file->allocate(1 << 20).ok());
  EXPECT_FALSE(file->map_for_appends(1 << 20));
}

TEST_F(PowerLossFileSystemTest, AWriteMadeAfterASyncBeganIsNotCoveredByIt) {
  PowerLossFileSystem files(posix());
  std::shared_ptr<File> file = open(files, "log");
  ASSERT_TRUE(wait([&](SyncCallback done) { files.sync_dir(dir_, std::move(done)); }).ok());
  ASSERT_TRUE(file->pwrite(0, bytes_of("first")).ok());
  std::optional<Status> synced;
  file->sync([&](Status status) { synced = status; });
  ASSERT_TRUE(file->pwrite(5, bytes_of("second")).ok());  // before the sync reports
  ASSERT_TRUE(env_.run_until([&] { return synced.has_value(); }, kLimit));
  ASSERT_TRUE(synced->ok());
  ASSERT_TRUE(files.cut_power().ok());
  EXPECT_EQ(on_disk("log"), "first");
}

TEST_F(PowerLossFileSystemTest, FilesWhoseEntryWasNeverSyncedVanish) {
  PowerLossFileSystem files(posix());
  std::shared_ptr<File> kept = open(files, "kept");
  ASSERT_TRUE(kept->pwrite(0, bytes_of("k")).ok());
  ASSERT_TRUE(wait([&](SyncCallback done) { kept->sync(std::move(done)); }).ok());
  ASSERT_TRUE(wait([&](SyncCallback done) { files.sync_dir(dir_, std::move(done)); }).ok());
  std::shared_ptr<File> vanished = open(files, "vanished");  // created after the directory sync
  ASSERT_TRUE(vanished->pwrite(0, bytes_of("v")).ok());
  ASSERT_TRUE(wait([&](SyncCallback done) { vanished->sync(std::move(done)); }).ok());  // bytes, not the entry

  Result<PowerLossStats> cut = files.cut_power();
  ASSERT_TRUE(cut.ok()) << cut.status().to_string();
  EXPECT_EQ(cut->files_removed, 1);
  EXPECT_EQ(on_disk("kept"), "k");
  EXPECT_EQ(on_disk("vanished"), std::nullopt);
}

TEST_F(PowerLossFileSystemTest, UnsyncedTruncatesAllocatesAndOpenTruncateAreUndone) {
  std::shared_ptr<File> setup = open(posix(), "a");
  ASSERT_TRUE(setup->pwrite(0, bytes_of("0123456789")).ok());
  std::shared_ptr<File> setup_b = open(posix(), "b");
  ASSERT_TRUE(setup_b->pwrite(0, bytes_of("bbbb")).ok());
  PowerLossFileSystem files(posix());  // what existed before is durable
  std::shared_ptr<File> a = open(files, "a", OpenOptions{});
  ASSERT_TRUE(a->truncate(3).ok());
  ASSERT_TRUE(a->allocate(64).ok());
  ASSERT_TRUE(a->pwrite(40, bytes_of("x")).ok());
  std::shared_ptr<File> b = open(files, "b", OpenOptions{.truncate = true});
  EXPECT_EQ(on_disk("b"), "");
  ASSERT_TRUE(files.cut_power().ok());
  EXPECT_EQ(on_disk("a"), "0123456789");
  EXPECT_EQ(on_disk("b"), "bbbb");
}

}  // namespace
}  // namespace mqlab::env::power_loss_file_system_test
