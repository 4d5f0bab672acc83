//===- prelude_test.cpp - Tests for the precompiled prelude ---------------===//
//
// Which sources may use the prelude, and its cache: built once, reused,
// rebuilt when a file it read changes or its entry or PCH is damaged, dropped
// when forgotten, and kept only in a directory no other user can write. The prelude here is a
// one-line stand-in for <cg/cg.hpp> in a temporary include directory, so that a build takes
// milliseconds.
//
//===----------------------------------------------------------------------===//
#include "frontend/Prelude.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace cg::frontend {
namespace {

TEST(StartsWithPrelude, AcceptsTheIncludeAfterCommentsAndBlankLines) {
  EXPECT_TRUE(startsWithPrelude("#include <cg/cg.hpp>\n"));
  EXPECT_TRUE(startsWithPrelude("// a graph\n\n/* more\n */\n  #  include  <cg/cg.hpp>  // why\n"
                                "int x;\n"));
  EXPECT_TRUE(startsWithPrelude("#include <cg/cg.hpp>"));
}

TEST(StartsWithPrelude, RejectsAnythingElseFirst) {
  EXPECT_FALSE(startsWithPrelude(""));
  EXPECT_FALSE(startsWithPrelude("#include \"cg/cg.hpp\"\n"));
  EXPECT_FALSE(startsWithPrelude("#define NDEBUG\n#include <cg/cg.hpp>\n"));
  EXPECT_FALSE(startsWithPrelude("#include <vector>\n#include <cg/cg.hpp>\n"));
  EXPECT_FALSE(startsWithPrelude("#include <cg/cg.hpp> extra\n"));
  EXPECT_FALSE(startsWithPrelude("/* never closed\n#include <cg/cg.hpp>\n"));
}

class PreludeCache : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("prelude-test", dir));
    root = dir.str().str();
    ASSERT_FALSE(llvm::sys::fs::create_directories(root + "/include/cg"));
    writeHeader("#pragma once\nint prelude_value = 1;\n");
    std::ofstream(source()) << "#include <cg/cg.hpp>\n";
    // The header reads no system header: any name of Clang will do.
    args = {"clang++", "-std=c++20", "-resource-dir=" CG_CLANG_RESOURCE_DIR,
            "-I" + root + "/include"};
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  void writeHeader(const std::string& text) { std::ofstream(root + "/include/cg/cg.hpp") << text; }
  std::string cache() const { return root + "/cache"; }
  std::string source() const { return root + "/graph.cg.cpp"; }

  std::string root;
  std::vector<std::string> args;
};

TEST_F(PreludeCache, IsBuiltOnceAndReused) {
  std::optional<Prelude> first = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(first);
  EXPECT_TRUE(llvm::sys::fs::exists(first->pch));
  llvm::SmallString<128> header;
  ASSERT_FALSE(llvm::sys::fs::real_path(root + "/include/cg/cg.hpp", header));
  EXPECT_NE(std::find(first->files.begin(), first->files.end(), header.str().str()),
            first->files.end());
  std::optional<Prelude> second = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(second);
  EXPECT_EQ(second->pch, first->pch);
  EXPECT_EQ(second->files, first->files);
}

TEST_F(PreludeCache, IsRebuiltWhenAFileItReadChanges) {
  std::optional<Prelude> first = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(first);
  writeHeader("#pragma once\nint prelude_value = 22;\n");
  std::optional<Prelude> second = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(second);
  EXPECT_NE(second->pch, first->pch);
  EXPECT_FALSE(llvm::sys::fs::exists(first->pch)); // the old entry's files are gone
}

TEST_F(PreludeCache, IsKeptPerSetOfFlags) {
  std::optional<Prelude> plain = findOrBuildPrelude(cache(), args, source());
  args.push_back("-DSOMETHING");
  std::optional<Prelude> defined = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(plain && defined);
  EXPECT_NE(plain->entry, defined->entry);
  EXPECT_TRUE(llvm::sys::fs::exists(plain->pch));
}

TEST_F(PreludeCache, IsKeptPerIncludePathFromTheEnvironment) {
  std::optional<Prelude> plain = findOrBuildPrelude(cache(), args, source());
  ASSERT_EQ(setenv("CPLUS_INCLUDE_PATH", root.c_str(), 1), 0);
  std::optional<Prelude> withPath = findOrBuildPrelude(cache(), args, source());
  unsetenv("CPLUS_INCLUDE_PATH");
  ASSERT_TRUE(plain && withPath);
  EXPECT_NE(plain->entry, withPath->entry);
}

TEST_F(PreludeCache, IsSharedBySourcesOfOneDirectory) {
  std::optional<Prelude> first = findOrBuildPrelude(cache(), args, source());
  std::ofstream(root + "/other.cg.cpp") << "#include <cg/cg.hpp>\n";
  std::optional<Prelude> other = findOrBuildPrelude(cache(), args, root + "/other.cg.cpp");
  ASSERT_TRUE(first && other);
  EXPECT_EQ(other->pch, first->pch);
}

TEST_F(PreludeCache, IsRebuiltWhenItsEntryIsDamaged) {
  std::optional<Prelude> first = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(first);
  std::ofstream(first->entry) << "not an entry\n";
  std::optional<Prelude> second = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(second);
  EXPECT_NE(second->pch, first->pch);
}

TEST_F(PreludeCache, IsRebuiltWhenItsPchIsDamaged) {
  std::optional<Prelude> first = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(first);
  {
    std::fstream pch(first->pch, std::ios::in | std::ios::out | std::ios::binary);
    pch.seekp(-1, std::ios::end);
    pch.put('\x5a'); // one byte: the size is the same, the hash is not
  }
  std::optional<Prelude> second = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(second);
  EXPECT_NE(second->pch, first->pch);
}

TEST_F(PreludeCache, IsMadeReadableByItsUserAlone) {
  ASSERT_TRUE(findOrBuildPrelude(cache(), args, source()));
  struct stat status;
  ASSERT_EQ(lstat(cache().c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 077, 0u);
}

TEST_F(PreludeCache, IsNotUsedInADirectoryOthersCanWriteOrALink) {
  ASSERT_FALSE(llvm::sys::fs::create_directories(cache()));
  ASSERT_EQ(chmod(cache().c_str(), 0777), 0);
  EXPECT_FALSE(findOrBuildPrelude(cache(), args, source()));
  ASSERT_EQ(chmod(cache().c_str(), 0700), 0);
  ASSERT_FALSE(llvm::sys::fs::create_link(cache(), root + "/link"));
  EXPECT_FALSE(findOrBuildPrelude(root + "/link", args, source()));
  EXPECT_TRUE(std::filesystem::is_empty(cache()));
}

// Another user's directory cannot be made without root: the check itself,
// on the status lstat would give.
TEST(CacheDirectoryProblem, RefusesAnotherUsersALinkOrOneOthersCanWrite) {
  struct stat status {};
  status.st_mode = S_IFDIR | 0755;
  status.st_uid = 1000;
  EXPECT_EQ(cacheDirectoryProblem(status, 1000), std::nullopt);
  EXPECT_EQ(cacheDirectoryProblem(status, 0), "belongs to user 1000, not to this user (0)");
  status.st_mode = S_IFDIR | 0777;
  EXPECT_EQ(cacheDirectoryProblem(status, 1000), "can be written by other users (mode 0777)");
  status.st_mode = S_IFDIR | 01770;
  EXPECT_EQ(cacheDirectoryProblem(status, 1000), "can be written by other users (mode 1770)");
  status.st_mode = S_IFLNK | 0777;
  EXPECT_EQ(cacheDirectoryProblem(status, 1000), "is a symbolic link");
  status.st_mode = S_IFREG | 0600;
  EXPECT_EQ(cacheDirectoryProblem(status, 1000), "is not a directory");
}

TEST_F(PreludeCache, ForgottenPreludeIsRemovedAndBuiltAgain) {
  std::optional<Prelude> first = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(first);
  forgetPrelude(*first);
  EXPECT_FALSE(llvm::sys::fs::exists(first->entry));
  EXPECT_FALSE(llvm::sys::fs::exists(first->pch));
  std::optional<Prelude> second = findOrBuildPrelude(cache(), args, source());
  ASSERT_TRUE(second);
  EXPECT_NE(second->pch, first->pch);
}

TEST_F(PreludeCache, IsNotBuiltFromAHeaderThatDoesNotCompile) {
  writeHeader("#pragma once\nint broken = ;\n");
  EXPECT_FALSE(findOrBuildPrelude(cache(), args, source()));
}

} // namespace
} // namespace cg::frontend
