// Path helpers for '/'-separated Env paths.
#pragma once

#include <string>
#include <string_view>

namespace mqlab::env {

// join_path("/store", "commitlog") == "/store/commitlog"
inline std::string join_path(std::string_view dir, std::string_view name) {
  std::string path(dir);
  if (!path.empty() && path.back() != '/') path += '/';
  path += name;
  return path;
}

// parent_dir("/store/commitlog/0001") == "/store/commitlog"; "" when none.
inline std::string parent_dir(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

// base_name("/store/commitlog/0001") == "0001"
inline std::string base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace mqlab::env
