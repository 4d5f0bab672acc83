// cgc_hostile_test.cpp - cgc trusts no file it is given: inputs that never
// end or are not files, a damaged or foreign prelude cache, and constants
// whose plain printf spelling is no C++ (the generated code is compiled).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status;
  std::string output; // stdout and stderr
};

Outcome run(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    output.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

const char* const kGraph = "#include <cg/cg.hpp>\n"
                           "struct CG_ACTOR E { int f(int x) { return x; } };\n"
                           "CG_GRAPH void g(cg::GraphBuilder& b) {\n"
                           "  b.output(b.actor<E>(\"a\").bind<&E::f>(b.input<int>()));\n"
                           "}\n";

class Hostile : public ::testing::Test {
protected:
  void SetUp() override {
    work = fs::temp_directory_path() / ("cgc-hostile-" + std::to_string(getpid()));
    fs::remove_all(work);
    fs::create_directories(work);
    std::ofstream(source()) << kGraph;
  }
  void TearDown() override {
    fs::permissions(work, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(work);
  }

  std::string source() const { return (work / "g.cg.cpp").string(); }
  // cgc on `path`, output in work/out (its prelude cache: work/.cgc-prelude);
  // `timeout` turns a read that blocks into exit status 124.
  Outcome cgc(const std::string& path, const std::string& options = "") const {
    return run("timeout 60 '" CG_CGC "' '" + path + "' -o '" + (work / "out").string() + "' " +
               options + " -fno-color-diagnostics -- -I'" CG_RUNTIME_INCLUDE "'");
  }

  fs::path work;
};

TEST_F(Hostile, ADirectoryGivenAsTheSourceIsCalledOne) {
  Outcome out = cgc(work.string());
  EXPECT_EQ(out.status, 2);
  EXPECT_EQ(out.output, "cgc: error: " + work.string() + " is a directory\n");
}

TEST_F(Hostile, ADeviceOrAFifoAsTheSourceIsRefusedWithoutReadingIt) {
  Outcome zero = cgc("/dev/zero");
  EXPECT_EQ(zero.status, 2);
  EXPECT_EQ(zero.output, "cgc: error: /dev/zero is not a regular file (a character device)\n");
  std::string fifo = (work / "fifo.cg.cpp").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Outcome pipe = cgc(fifo); // no writer: an open that waited would never return
  EXPECT_EQ(pipe.status, 2);
  EXPECT_EQ(pipe.output, "cgc: error: " + fifo + " is not a regular file (a pipe)\n");
}

TEST_F(Hostile, ASourceOverTheSizeBoundIsRefusedWithTheBound) {
  std::string huge = (work / "huge.cg.cpp").string();
  { std::ofstream(huge) << kGraph; }
  fs::resize_file(huge, (64u << 20) + 1); // sparse: no 64 MiB written
  Outcome out = cgc(huge);
  EXPECT_EQ(out.status, 2);
  EXPECT_EQ(out.output,
            "cgc: error: " + huge + " is 67108865 bytes, more than the 64 MiB cgc reads\n");
}

TEST_F(Hostile, CostsFromADeviceAFifoOrADirectoryAreRefused) {
  std::string fifo = (work / "costs.json").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Outcome zero = cgc(source(), "--costs=/dev/zero");
  EXPECT_EQ(zero.status, 2);
  EXPECT_EQ(zero.output,
            "cgc: error: --costs: /dev/zero is not a regular file (a character device)\n");
  Outcome pipe = cgc(source(), "--costs=" + fifo);
  EXPECT_EQ(pipe.status, 2);
  EXPECT_EQ(pipe.output, "cgc: error: --costs: " + fifo + " is not a regular file (a pipe)\n");
  Outcome directory = cgc(source(), "--costs=" + work.string());
  EXPECT_EQ(directory.status, 2);
  EXPECT_EQ(directory.output, "cgc: error: --costs: " + work.string() + " is a directory\n");
}

// Clang trusts a PCH it loads: damaged bytes crashed it on every later run.
TEST_F(Hostile, ADamagedPreludeIsBuiltAgainNotLoaded) {
  ASSERT_EQ(cgc(source()).status, 0);
  fs::path pch;
  for (const fs::directory_entry& entry : fs::directory_iterator(work / ".cgc-prelude"))
    if (entry.path().extension() == ".pch")
      pch = entry.path();
  ASSERT_FALSE(pch.empty());
  {
    std::fstream bytes(pch, std::ios::in | std::ios::out | std::ios::binary);
    const auto size = static_cast<std::streamoff>(fs::file_size(pch));
    // Bytes flipped all through the file, past its header.
    for (std::streamoff at = size / 8; at < size; at += size / 64) {
      bytes.seekg(at);
      char byte = 0;
      bytes.get(byte);
      bytes.seekp(at);
      bytes.put(static_cast<char>(~byte));
    }
  }
  Outcome again = cgc(source());
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_EQ(again.output, "");
  EXPECT_FALSE(fs::exists(pch)); // replaced by a new build
}

// Whoever can write the cache can put a PCH there that this user's cgc
// loads. A directory another user made cannot be made here without root:
// one of ours that others may write, or a link, is refused the same way.
TEST_F(Hostile, APreludeCacheOthersCanWriteIsPassedOverForTheUsersOwn) {
  fs::create_directories(work / ".cgc-prelude");
  fs::permissions(work / ".cgc-prelude", fs::perms::all);
  std::string own = (work / "home-cache").string();
  Outcome out = run("XDG_CACHE_HOME='" + own + "' timeout 60 '" CG_CGC "' '" + source() + "' -o '" +
                    (work / "out").string() + "' -- -I'" CG_RUNTIME_INCLUDE "'");
  EXPECT_EQ(out.status, 0);
  EXPECT_EQ(out.output,
            "cgc: note: not using the prelude cache " + (work / ".cgc-prelude").string() +
                ": it can be written by other users (mode 0777); using " + own + "/cgc\n");
  EXPECT_TRUE(fs::is_empty(work / ".cgc-prelude"));
  EXPECT_FALSE(fs::is_empty(own + "/cgc"));
  EXPECT_EQ(fs::status(own + "/cgc").permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
}

TEST_F(Hostile, APreludeCacheThatIsALinkIsNotUsed) {
  fs::create_directories(work / "elsewhere");
  fs::create_directory_symlink(work / "elsewhere", work / "cache");
  Outcome out = cgc(source(), "--prelude-cache=" + (work / "cache").string());
  EXPECT_EQ(out.status, 0);
  EXPECT_EQ(out.output, "cgc: note: not using the prelude cache " + (work / "cache").string() +
                            ": it is a symbolic link; parsing <cg/cg.hpp> afresh\n");
  EXPECT_TRUE(fs::is_empty(work / "elsewhere"));
}

// NaN, the infinities and -0.0 printed with "%g" are "nan", "inf" and "-0":
// names C++ does not have, and an integer zero. The generated code must
// compile, and keep the sign of zero.
TEST_F(Hostile, FloatingConstantsWithoutADecimalSpellingCompile) {
  std::ofstream(source())
      << "#include <cg/cg.hpp>\n"
         "#include <limits>\n"
         "struct CG_ACTOR Calc {\n"
         "  double add(double a, double b) { return a + b; }\n"
         "  float addf(float a, float b) { return a + b; }\n"
         "};\n"
         "CG_GRAPH void g(cg::GraphBuilder& b) {\n"
         "  auto c = b.actor<Calc>(\"c\");\n"
         "  auto x = c.bind<&Calc::add>(std::numeric_limits<double>::quiet_NaN(),\n"
         "                              std::numeric_limits<double>::infinity());\n"
         "  auto y = c.bind<&Calc::add>(x, -0.0);\n"
         "  auto z = c.bind<&Calc::addf>(-std::numeric_limits<float>::infinity(),"
         " -0.0f);\n"
         "  b.output(y, z);\n"
         "}\n";
  Outcome out = cgc(source());
  ASSERT_EQ(out.status, 0) << out.output;
  std::stringstream code;
  code << std::ifstream(work / "out" / "g.g.c.cpp").rdbuf();
  // The comment above each call spells the call on one line.
  for (const char* spelled :
       {"c.add#1(std::numeric_limits<double>::quiet_NaN(), "
        "std::numeric_limits<double>::infinity())",
        "c.add#2(c.add#1, static_cast<double>(-0.0))",
        "c.addf(-std::numeric_limits<float>::infinity(), static_cast<float>(-0.0))"})
    EXPECT_NE(code.str().find(spelled), std::string::npos) << spelled << " in\n" << code.str();
  for (const char* file : {"g.actors.cpp", "g.driver.cpp"}) {
    Outcome compiled = run("'" CG_CXX "' -std=c++20 -fsyntax-only -DCG_ACTOR_HOST='\"x\"' -I'" +
                           (work / "out").string() + "' -I'" CG_RUNTIME_INCLUDE "' '" +
                           (work / "out" / file).string() + "'");
    EXPECT_EQ(compiled.status, 0) << file << ":\n" << compiled.output;
  }
}

} // namespace
