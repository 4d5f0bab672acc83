// cpu_binding_test.cpp - the binding plan, CPU sets of threads, CG_CPU_BINDING.
#include "../../../support/scoped_env.hpp"
#include <cg/cpu_binding.hpp>
#include <cg/errors.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using cg::CpuBinding;
using cg::detail::cpus_of;
using cg::detail::plan_cpu_binding;
using cg::detail::set_cpus;

using cg_test::ScopedEnv;

TEST(CpuBindingPlan, TheDriverThenEachActorTakeTheFirstCpusInOrder) {
  EXPECT_EQ(plan_cpu_binding(2, {0, 1, 2, 3}), (std::vector<int>{0, 1}));
  EXPECT_EQ(plan_cpu_binding(3, {2, 5, 7}), (std::vector<int>{2, 5, 7}));
  EXPECT_EQ(plan_cpu_binding(1, {4}), (std::vector<int>{4}));
}

TEST(CpuBindingPlan, MoreParticipantsThanCpusBindNobody) {
  EXPECT_EQ(plan_cpu_binding(3, {0, 1}), std::vector<int>{});
  EXPECT_EQ(plan_cpu_binding(1, {}), std::vector<int>{});
  EXPECT_EQ(plan_cpu_binding(0, {0, 1}), std::vector<int>{});
}

TEST(CpuSets, AThreadIsRestrictedAndGivenItsSetBack) {
  const std::vector<int> allowed = cpus_of(0);
  ASSERT_FALSE(allowed.empty());
  std::vector<int> inside, after;
  std::thread worker([&] {
    ASSERT_TRUE(set_cpus(0, {allowed.back()}));
    inside = cpus_of(0);
    ASSERT_TRUE(set_cpus(0, allowed));
    after = cpus_of(0);
  });
  worker.join();
  EXPECT_EQ(inside, std::vector<int>{allowed.back()});
  EXPECT_EQ(after, allowed);
  EXPECT_EQ(cpus_of(0), allowed) << "another thread's binding must not touch this one";
}

TEST(CpuSets, ACpuOutsideTheMachineIsRefused) {
  std::thread worker([] { EXPECT_FALSE(set_cpus(0, {8191})); });
  worker.join();
}

TEST(CpuBindingChoice, TheOptionWinsThenTheEnvironmentThenNone) {
  {
    ScopedEnv unset("CG_CPU_BINDING", nullptr);
    EXPECT_EQ(cg::launch_cpu_binding(std::nullopt), CpuBinding::none);
    EXPECT_EQ(cg::launch_cpu_binding(CpuBinding::cores), CpuBinding::cores);
  }
  {
    ScopedEnv cores("CG_CPU_BINDING", "cores");
    EXPECT_EQ(cg::launch_cpu_binding(std::nullopt), CpuBinding::cores);
    EXPECT_EQ(cg::launch_cpu_binding(CpuBinding::none), CpuBinding::none);
  }
  ScopedEnv none("CG_CPU_BINDING", "none");
  EXPECT_EQ(cg::launch_cpu_binding(std::nullopt), CpuBinding::none);
}

TEST(CpuBindingChoice, AnUnknownBindingInTheEnvironmentIsALaunchError) {
  ScopedEnv bad("CG_CPU_BINDING", "sockets");
  try {
    cg::launch_cpu_binding(std::nullopt);
    FAIL() << "no LaunchError";
  } catch (const cg::LaunchError& e) {
    EXPECT_STREQ(e.what(),
                 "the environment variable CG_CPU_BINDING is 'sockets'; it must be 'none' or "
                 "'cores' (or unset)");
  }
}

TEST(CpuBindingActor, CgActorCpuBindsTheCallingThread) {
  const std::vector<int> allowed = cpus_of(0);
  ASSERT_FALSE(allowed.empty());
  std::vector<int> bound;
  std::string error;
  std::thread actor([&] {
    ScopedEnv cpu("CG_ACTOR_CPU", std::to_string(allowed.back()).c_str());
    ScopedEnv spin("CG_ACTOR_SPIN", "0");
    cg::detail::bind_actor_from_environment();
    bound = cpus_of(0);
    EXPECT_FALSE(cg::detail::has_own_cpu()) << "bound, but told not to spin";
  });
  actor.join();
  EXPECT_EQ(bound, std::vector<int>{allowed.back()});
}

TEST(CpuBindingActor, CgActorSpinMarksTheThreadWithoutBindingIt) {
  const std::vector<int> allowed = cpus_of(0);
  std::vector<int> after;
  bool own = false;
  std::thread actor([&] {
    ScopedEnv cpu("CG_ACTOR_CPU", nullptr);
    ScopedEnv spin("CG_ACTOR_SPIN", "1");
    EXPECT_FALSE(cg::detail::has_own_cpu());
    cg::detail::bind_actor_from_environment();
    own = cg::detail::has_own_cpu();
    after = cpus_of(0);
  });
  actor.join();
  EXPECT_TRUE(own) << "its channel waits spin longer";
  EXPECT_EQ(after, allowed) << "and it may run on any CPU";
  EXPECT_FALSE(cg::detail::has_own_cpu()) << "another thread's flag is not this one's";
}

TEST(CpuBindingActor, AMalformedOrImpossibleCgActorCpuIsReported) {
  std::vector<std::string> errors;
  std::thread actor([&] {
    for (const char* value : {"one", "-1", "3x", "8191"}) {
      ScopedEnv cpu("CG_ACTOR_CPU", value);
      try {
        cg::detail::bind_actor_from_environment();
        errors.push_back("none");
      } catch (const std::runtime_error& e) {
        errors.push_back(e.what());
      }
    }
  });
  actor.join();
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0], "CG_ACTOR_CPU='one' is not a CPU number");
  EXPECT_EQ(errors[1], "CG_ACTOR_CPU='-1' is not a CPU number");
  EXPECT_EQ(errors[2], "CG_ACTOR_CPU='3x' is not a CPU number");
  EXPECT_EQ(errors[3], "cannot bind to CPU 8191: Invalid argument");
}

} // namespace
