// Invocation: one run of an mqadmin subcommand (command.h).
#include <memory>
#include <ostream>

#include "broker/admin_cli/command.h"

namespace mqlab::admin_cli {
namespace {

// Cleanups and the instance's shutdown answer within their own timeouts
// (3 s requests); this bounds a peer that never answers at all.
constexpr Nanos kTearDownLimit = seconds(10);

}  // namespace

Invocation::Invocation(CommandIo& io, std::string command_name, ParsedOptions options, client::ClientConfig config)
    : io_(io),
      command_name_(std::move(command_name)),
      options_(std::move(options)),
      instance_(std::make_unique<client::MQClientInstance>(io.env, std::move(config))) {
  MQ_ASSERT(io_.run_until != nullptr);
  MQ_ASSERT(!command_name_.empty());
}

Invocation::~Invocation() = default;

void Invocation::fail(const Status& status) {
  MQ_ASSERT(!status.ok());
  if (finished()) return;
  io_.err << "mqadmin " << command_name_ << ": " << status.message() << "\n";
  finish(kExitFailed);
}

void Invocation::usage_error(const std::string& message) {
  if (finished()) return;
  io_.err << "mqadmin " << command_name_ << ": " << message << "\n"
          << "Run 'mqadmin help " << command_name_ << "' for its options.\n";
  finish(kExitUsage);
}

void Invocation::finish(int exit_code) {
  if (finished()) return;  // the first outcome stands
  exit_code_ = exit_code;
}

void Invocation::tear_down() {
  for (auto step = cleanups_.rbegin(); step != cleanups_.rend(); ++step) {
    auto stopped = std::make_shared<bool>(false);  // shared: a late done must not write to a dead frame
    (*step)([stopped] { *stopped = true; });
    io_.run_until([stopped] { return *stopped; }, kTearDownLimit);
  }
  cleanups_.clear();
  auto stopped = std::make_shared<bool>(false);
  instance_->shutdown([stopped] { *stopped = true; });
  io_.run_until([stopped] { return *stopped; }, kTearDownLimit);
  held_.clear();
}

}  // namespace mqlab::admin_cli
