// TempDir: a fresh directory under /tmp for one test, removed with all it
// holds when the test ends (the real-file tests of the POSIX Env and the
// layers over it).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "broker/env/path.h"

namespace mqlab::env::testing {

class TempDir {
 public:
  // prefix names the test in the directory's name: /tmp/<prefix>_XXXXXX.
  explicit TempDir(std::string_view prefix) {
    std::string pattern = "/tmp/" + std::string(prefix) + "_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern << " failed";
    path_ = pattern;
  }
  ~TempDir() { remove_now(); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Removes the directory and all it holds now, for a process about to die
  // (a death test's child, whose destructors never run: each left a
  // directory in /tmp). Descriptors and mappings of its files stay valid.
  void remove_now() const {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }
  std::string join(std::string_view name) const { return join_path(path_, name); }

 private:
  std::string path_;
};

}  // namespace mqlab::env::testing
