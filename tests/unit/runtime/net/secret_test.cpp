// secret_test.cpp - tests of the launch's secret (net/secret.hpp): where an
// actor process finds it, what it says when it cannot, and the proofs.
#include "../../../support/scoped_env.hpp"
#include "net/secret.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace {

using cg::detail::Secret;

const std::string hex64 = std::string(32, 'a') + std::string(32, '0');

using cg_test::ScopedEnv;

std::string written(const std::string& text, mode_t mode) {
  const std::string path = testing::TempDir() + "cg-secret-" + std::to_string(::getpid());
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(Secret, ProofsVerifyOnlyForTheSameSecretAndMessage) {
  const Secret a = Secret::generate();
  const Secret b = Secret::generate();
  const std::string proof = a.prove("cg-rendezvous/2 client g n1 n2");
  EXPECT_EQ(proof.size(), 64u);
  EXPECT_TRUE(a.verify("cg-rendezvous/2 client g n1 n2", proof));
  EXPECT_FALSE(a.verify("cg-rendezvous/2 client g n1 n3", proof));
  EXPECT_FALSE(b.verify("cg-rendezvous/2 client g n1 n2", proof));
  EXPECT_FALSE(a.verify("cg-rendezvous/2 client g n1 n2", proof.substr(1)));
  EXPECT_FALSE(a.verify("cg-rendezvous/2 client g n1 n2", std::string(64, 'z')));
  EXPECT_NE(a.hex(), b.hex());
  EXPECT_EQ(Secret::from_hex(a.hex())->prove("m"), a.prove("m"));
  EXPECT_NE(cg::detail::fresh_nonce(), cg::detail::fresh_nonce());
  EXPECT_EQ(cg::detail::fresh_nonce().size(), 32u);
}

TEST(Secret, ComesFromTheVariableOrAFileOnlyItsOwnerCanRead) {
  ScopedEnv file_unset(cg::detail::secret_file_variable, nullptr);
  std::string why;
  {
    ScopedEnv env(cg::detail::secret_variable, hex64.c_str());
    ASSERT_TRUE(Secret::from_environment(why).has_value()) << why;
    EXPECT_EQ(Secret::from_environment(why)->hex(), hex64);
  }
  {
    ScopedEnv env(cg::detail::secret_variable, "12345");
    EXPECT_FALSE(Secret::from_environment(why).has_value());
    EXPECT_EQ(why, "the launch's secret (CG_SECRET) is not 64 hexadecimal digits");
  }
  ScopedEnv unset(cg::detail::secret_variable, nullptr);
  EXPECT_FALSE(Secret::from_environment(why).has_value());
  EXPECT_EQ(why, "neither CG_SECRET nor CG_SECRET_FILE is set: this process cannot prove it "
                 "belongs to the launch (see net/secret.hpp, or the README on several hosts)");

  const std::string open_file = written(hex64 + "\n", 0644);
  {
    ScopedEnv file(cg::detail::secret_file_variable, open_file.c_str());
    EXPECT_FALSE(Secret::from_environment(why).has_value());
    EXPECT_EQ(why, "CG_SECRET_FILE names '" + open_file +
                       "', which others than its owner (you) may read or write: chmod 600 it");
    ::chmod(open_file.c_str(), 0600);
    ASSERT_TRUE(Secret::from_environment(why).has_value()) << why;
    EXPECT_EQ(Secret::from_environment(why)->hex(), hex64);
  }
  ::unlink(open_file.c_str());
  ScopedEnv missing(cg::detail::secret_file_variable, "/nonexistent/cg-secret");
  EXPECT_FALSE(Secret::from_environment(why).has_value());
  EXPECT_EQ(why, "CG_SECRET_FILE names '/nonexistent/cg-secret', which is not a file");
}

} // namespace
