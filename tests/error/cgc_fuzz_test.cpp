// cgc_fuzz_test.cpp - cgc never crashes on malformed input.
//
// Mutates the example graph sources (deletes, duplicates and swaps lines and
// tokens, drops characters) with a fixed seed and runs cgc on each mutant:
// it must exit 0, or 1 after printing a `file:line:col: error:`; never die
// by a signal, hang, or report an internal compiler error.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

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

std::string mutate(const std::string& source, std::mt19937& random) {
  std::vector<std::string> lines = splitLines(source);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random); };
  size_t at = pick(lines.size());
  switch (pick(5)) {
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
  default: // swap two lines
    std::swap(lines[at], lines[pick(lines.size())]);
    break;
  }
  std::string out;
  for (const std::string& line : lines)
    out += line + "\n";
  return out;
}

void fuzz(const fs::path& source, int mutants, unsigned seed) {
  std::mt19937 random(seed);
  std::string original = readFile(source);
  fs::path work = fs::temp_directory_path() / ("cgc-fuzz-" + std::to_string(getpid()));
  fs::create_directories(work);
  for (int i = 0; i < mutants; ++i) {
    fs::path mutant = work / source.filename();
    std::ofstream(mutant) << mutate(original, random);
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

} // namespace
