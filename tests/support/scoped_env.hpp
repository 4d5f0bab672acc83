// scoped_env.hpp - an environment variable set (or unset) for one scope.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace cg_test {

/// Sets `name` to `value` (nullptr: unsets it) and restores what it was when
/// the scope ends.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  const char* name_;
  std::optional<std::string> old_;
};

} // namespace cg_test
