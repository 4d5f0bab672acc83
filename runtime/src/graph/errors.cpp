// errors.cpp - Messages of the driver API's exceptions.
#include <cg/errors.hpp>

#include <utility>

namespace cg {

TaskError::TaskError(ErrorRecord record)
    : Error("task " + record.actor + "." + record.method + " failed: " + record.exception_type +
            ": " + record.message),
      record_(std::move(record)) {}

ActorDiedError::ActorDiedError(std::string actor, const std::string& what, bool restarted)
    : Error(what), actor_(std::move(actor)), restarted_(restarted) {}

} // namespace cg
