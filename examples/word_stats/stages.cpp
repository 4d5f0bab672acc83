// stages.cpp - the methods of the actor classes in stages.hpp.
#include "stages.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

namespace words {

std::vector<std::string> Tokenizer::split(std::string text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string token; in >> token;) {
    std::string word;
    for (char c : token)
      if (std::isalnum(static_cast<unsigned char>(c)))
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!word.empty())
      words.push_back(std::move(word));
  }
  return words;
}

std::map<std::string, int> Counter::count(std::vector<std::string> words) {
  std::map<std::string, int> counts;
  for (const std::string& word : words)
    ++counts[word];
  return counts;
}

Report::Report(int top) : top_(top) {}

std::string Report::top_words(std::map<std::string, int> counts, std::string title) {
  std::vector<std::pair<std::string, int>> ranked(counts.begin(), counts.end());
  // Stable: the map's alphabetical order stays among equal counts.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out = title + ":";
  for (int i = 0; i < top_ && i < static_cast<int>(ranked.size()); ++i)
    out += (i == 0 ? " " : ", ") + ranked[i].first + " x" + std::to_string(ranked[i].second);
  return out;
}

} // namespace words
