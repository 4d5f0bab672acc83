// cgc_fuzz_test.cpp - cgc never crashes on malformed input.
//
// Mutates the example graph sources with a fixed seed, by lines and tokens
// (deletes, duplicates and swaps lines and tokens, drops characters, adds a
// statement at file scope) and by bytes (truncates, inserts random bytes,
// or random bytes alone), and runs cgc on each mutant: it must exit 0, or 1
// after printing a `file:line:col: error:`; never die by a signal, hang, or
// report an internal compiler error. A mutant cgc accepts must give code
// that compiles: the C++ compiler (CG_CXX) checks its generated sources. And
// a crash, should one happen, is an internal compiler error (exit 70), never
// a death by the signal.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// Statements a compiler rejects at file scope; Clang's incremental mode, which
// cgc's frontend uses for its probe, crashed on most of them.
const char* const kFileScopeStatements[] = {
    "{}",        "for (;;) {}",     "if (1) {}", "return;", "while (0);",
    "goto end;", "end: ;",          "x = 1;",    "f();",    "try {} catch (...) {}",
    "[[]] {}",   "do {} while (0);"};

size_t pickBelow(size_t n, std::mt19937& random) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(random);
}

std::string randomBytes(size_t count, std::mt19937& random) {
  std::string bytes(count, '\0');
  for (char& byte : bytes)
    byte = static_cast<char>(pickBelow(256, random));
  return bytes;
}

// A byte-level mutant: truncated, random bytes inserted, or random bytes alone.
std::string mutateBytes(const std::string& source, std::mt19937& random) {
  size_t at = pickBelow(source.size(), random);
  switch (pickBelow(3, random)) {
  case 0:
    return source.substr(0, at);
  case 1:
    return source.substr(0, at) + randomBytes(1 + pickBelow(64, random), random) +
           source.substr(at);
  default:
    return randomBytes(pickBelow(4096, random), random);
  }
}

std::string mutate(const std::string& source, std::mt19937& random) {
  std::vector<std::string> lines = splitLines(source);
  auto pick = [&](size_t n) { return pickBelow(n, random); };
  size_t at = pick(lines.size());
  switch (pick(6)) {
  case 0: // delete a line
    lines.erase(lines.begin() + at);
    break;
  case 1: // duplicate a line
    lines.insert(lines.begin() + at, lines[at]);
    break;
  case 2: { // swap two tokens of a line
    std::vector<std::string> tokens;
    std::istringstream words(lines[at]);
    for (std::string word; words >> word;)
      tokens.push_back(word);
    if (tokens.size() >= 2) {
      size_t i = pick(tokens.size() - 1);
      std::swap(tokens[i], tokens[i + 1]);
      std::string joined;
      for (const std::string& token : tokens)
        joined += token + " ";
      lines[at] = joined;
    }
    break;
  }
  case 3: // drop a character
    if (!lines[at].empty())
      lines[at].erase(pick(lines[at].size()), 1);
    break;
  case 4: // a statement between two lines: at file scope, unless in a body
    lines.insert(lines.begin() + at, kFileScopeStatements[pick(std::size(kFileScopeStatements))]);
    break;
  default: // swap two lines
    std::swap(lines[at], lines[pick(lines.size())]);
    break;
  }
  std::string out;
  for (const std::string& line : lines)
    out += line + "\n";
  return out;
}

// What cgc accepted, it must be able to generate: the actor programs and
// the driver of the mutant's graphs (target "<name up to its first '.'>")
// pass the C++ compiler's syntax and type checks.
void expectGeneratedCodeCompiles(const fs::path& out, const fs::path& includes, int mutant,
                                 const std::string& text) {
  std::string target;
  for (const fs::directory_entry& entry : fs::directory_iterator(out)) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".actors.cpp"))
      target = name.substr(0, name.size() - std::string(".actors.cpp").size());
  }
  ASSERT_FALSE(target.empty()) << "cgc accepted mutant " << mutant << " but wrote no code";
  for (const std::string& file : {target + ".actors.cpp", target + ".driver.cpp"}) {
    std::string command = "'" CG_CXX "' -std=c++20 -fsyntax-only -DCG_ACTOR_HOST='\"x\"' -I'" +
                          out.string() + "' -I'" + includes.string() + "' -I'" +
                          CG_RUNTIME_INCLUDE + "' '" + (out / file).string() + "' > '" +
                          (out / "compile.txt").string() + "' 2>&1";
    int status = std::system(command.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the code cgc generated for mutant " << mutant << " does not compile (" << file << "):\n"
        << readFile(out / "compile.txt") << "\nthe mutant:\n"
        << text;
  }
}

enum class Level { lines, bytes };

void fuzz(const fs::path& source, int mutants, unsigned seed, Level level = Level::lines) {
  std::mt19937 random(seed);
  std::string original = readFile(source);
  fs::path work = fs::temp_directory_path() / ("cgc-fuzz-" + std::to_string(getpid()));
  fs::create_directories(work);
  for (int i = 0; i < mutants; ++i) {
    fs::path mutant = work / source.filename();
    std::ofstream(mutant) << (level == Level::lines ? mutate(original, random)
                                                    : mutateBytes(original, random));
    fs::path log = work / "stderr.txt";
    // A small step limit bounds runaway evaluation; `timeout` catches hangs.
    std::string command = "timeout 120 '" CG_CGC "' '" + mutant.string() + "' -o '" +
                          (work / "out").string() + "' --constexpr-steps=200000 -- -I'" +
                          CG_RUNTIME_INCLUDE + "' -I'" + source.parent_path().string() +
                          "' > /dev/null 2> '" + log.string() + "'";
    int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << "cgc died by a signal on mutant " << i;
    int code = WEXITSTATUS(status);
    std::string errors = readFile(log);
    ASSERT_TRUE(code == 0 || code == 1)
        << "cgc exited " << code << " on mutant " << i << " of " << source << ":\n"
        << readFile(mutant) << "\n"
        << errors;
    if (code == 1) {
      EXPECT_NE(errors.find(": error: "), std::string::npos)
          << "cgc failed without a diagnostic on mutant " << i << ":\n"
          << errors;
    } else {
      expectGeneratedCodeCompiles(work / "out", source.parent_path(), i, readFile(mutant));
    }
  }
  fs::remove_all(work);
}

TEST(CgcFuzz, MutatedQuickstartNeverCrashesTheCompiler) {
  fuzz(CG_EXAMPLES "/quickstart/quickstart.cg.cpp", 15, 1);
}

TEST(CgcFuzz, MutatedLanguageTourNeverCrashesTheCompiler) {
  fuzz(CG_EXAMPLES "/language/tour.cg.cpp", 15, 2);
}

TEST(CgcFuzz, ByteLevelMutantsNeverCrashTheCompiler) {
  fuzz(CG_EXAMPLES "/quickstart/quickstart.cg.cpp", 20, 3, Level::bytes);
}

TEST(CgcFuzz, EveryStatementAtFileScopeIsAnErrorAtItsLine) {
  fs::path work = fs::temp_directory_path() / ("cgc-statements-" + std::to_string(getpid()));
  fs::create_directories(work);
  fs::path source = work / "statement.cg.cpp";
  for (const char* statement : kFileScopeStatements) {
    std::ofstream(source) << "#include <cg/cg.hpp>\nint x;\nint f();\n" << statement << "\n";
    std::string command = "'" CG_CGC "' '" + source.string() + "' -o '" + (work / "out").string() +
                          "' -- -I'" CG_RUNTIME_INCLUDE "' 2> '" + (work / "err").string() + "'";
    int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << statement;
    EXPECT_EQ(WEXITSTATUS(status), 1) << statement;
    EXPECT_NE(readFile(work / "err").find(source.string() + ":4:"), std::string::npos)
        << statement << ": " << readFile(work / "err");
  }
  fs::remove_all(work);
}

// A crash signal (here sent from outside, while cgc evaluates a graph that
// never ends) is reported as an internal compiler error: exit 70, saying
// where cgc was, never a death by the signal.
TEST(CgcCrash, ACrashIsAnInternalCompilerErrorWithExitCode70) {
  fs::path work = fs::temp_directory_path() / ("cgc-crash-" + std::to_string(getpid()));
  fs::create_directories(work);
  fs::path source = work / "spin.cg.cpp";
  std::ofstream(source) << "#include <cg/cg.hpp>\n"
                           "constexpr int spin() { int n = 0; for (;;) ++n; return n; }\n"
                           "struct CG_ACTOR A { int f(int x) { return x; } };\n"
                           "CG_GRAPH void g(cg::GraphBuilder& b) {\n"
                           "  auto a = b.actor<A>(cg::indexed_name(\"a\", spin()));\n"
                           "  b.output(a.bind<&A::f>(b.input<int>()));\n"
                           "}\n";
  std::string out = (work / "out").string(), include = "-I" CG_RUNTIME_INCLUDE,
              path = source.string();
  // The precompiled prelude first (work/.cgc-prelude), so that the signal
  // below finds cgc evaluating the graph, not building the prelude.
  fs::path warm = work / "warm.cg.cpp";
  std::ofstream(warm) << "#include <cg/cg.hpp>\n"
                         "struct CG_ACTOR A { int f(int x) { return x; } };\n"
                         "CG_GRAPH void g(cg::GraphBuilder& b) {\n"
                         "  b.output(b.actor<A>(\"a\").bind<&A::f>(b.input<int>()));\n"
                         "}\n";
  ASSERT_EQ(std::system((std::string(CG_CGC) + " " + warm.string() + " -o " + out +
                         " --constexpr-steps=4000000000 -- " + include + " >/dev/null 2>&1")
                            .c_str()),
            0);
  const char* argv[] = {
      CG_CGC, path.c_str(),    "-o",   out.c_str(), "--constexpr-steps=4000000000",
      "--",   include.c_str(), nullptr};
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  std::string log = (work / "stderr.txt").string();
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT, 0644);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, CG_CGC, &files, nullptr, const_cast<char**>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&files);
  std::this_thread::sleep_for(std::chrono::seconds(2)); // well inside main
  kill(pid, SIGSEGV);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::string errors = readFile(log);
  ASSERT_TRUE(WIFEXITED(status)) << "cgc died by signal " << WTERMSIG(status) << ":\n" << errors;
  EXPECT_EQ(WEXITSTATUS(status), 70) << errors;
  EXPECT_NE(errors.find("cgc: internal compiler error: cgc crashed"), std::string::npos) << errors;
  EXPECT_NE(errors.find("Stack dump:"), std::string::npos) << errors;
  EXPECT_NE(errors.find(path), std::string::npos) << "where it was: " << errors;
  fs::remove_all(work);
}

} // namespace
