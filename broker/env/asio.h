// The one project header that includes Boost.Asio.
//
// Every mqlab file that needs Asio includes this header instead of
// <boost/asio.hpp>, so a workaround for the toolchain lives in one place.
// Only the real Env (broker/env/posix_*, asio_*) and the real network use
// Asio; the deterministic core never sees it.
#pragma once

// Boost 1.74's coroutine support (boost/asio/awaitable.hpp) calls
// std::exchange without including <utility>; libstdc++ 12 no longer pulls it
// in transitively, so under g++ 12 with -std=c++20 <boost/asio.hpp> fails to
// compile ("'exchange' is not a member of 'std'") unless <utility> comes first.
#include <utility>

#include <boost/asio.hpp>
