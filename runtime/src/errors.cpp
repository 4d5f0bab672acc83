// errors.cpp - Messages of the driver API's exceptions.
#include <cg/builder.hpp>
#include <cg/errors.hpp>

#include <stdexcept>

namespace cg {

TaskError::TaskError(ErrorRecord record)
    : Error("task " + record.actor + "." + record.method + " failed: " + record.exception_type +
            ": " + record.message),
      record_(std::move(record)) {}

ActorDiedError::ActorDiedError(std::string actor, const std::string& what)
    : Error(what), actor_(std::move(actor)) {}

namespace detail {
// Only ever called during constant evaluation, where calling it is the error;
// defined so that a graph function called at run time fails loudly too.
void graph_error(const char* message) { throw std::logic_error(message); }
} // namespace detail

} // namespace cg
