#!/usr/bin/env bash
# rebuild_bench.sh - how long a build takes after an edit to a graph function.
#
# Writes a project of its own (a 5-actor graph: a tokenizer, an embedder, two
# statistics actors and a summariser, with a driver program), builds it
# against an installed CompiledGraph, then edits the graph function twice (a
# constant, then a comment line) and rebuilds after each edit. Prints each
# rebuild beside the full build and judges it by the `rebuild` target of
# targets.def. Two layouts of the same actors:
#   split    the actor classes declared in actors.hpp, defined in actors.cpp
#            (a library of their own); the graph source includes actors.hpp
#   single   everything in the graph source, methods defined in the classes
#
# Usage: rebuild_bench.sh --prefix <install prefix> [--layout split|single|both]
#                         [--work <dir>] [--jobs <n>] [--build-type <type>]
#   --prefix      a CompiledGraph install (cmake --install build --prefix ...)
#   --layout      which layouts to build (default both)
#   --work        where the project is written and built (default: a new
#                 temporary folder, removed afterwards)
#   --jobs        parallel build jobs (default 2, the CI machine's cores)
#   --build-type  CMAKE_BUILD_TYPE of the project (default RelWithDebInfo)
# The figures are the machine's, timed wall-clock: compare them only with
# figures taken on the same machine (check `uptime` for load).
set -euo pipefail

prefix="" layout=both work="" jobs=2 build_type=RelWithDebInfo
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --layout) layout=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build-type) build_type=$2; shift 2 ;;
    *) echo "rebuild_bench: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n $prefix ]] || { echo "rebuild_bench: --prefix <install prefix> is required" >&2; exit 2; }
[[ -f $prefix/lib/cmake/CompiledGraph/CompiledGraphConfig.cmake ]] ||
  { echo "rebuild_bench: no CompiledGraph install at $prefix" >&2; exit 2; }
case "$layout" in
  split) layouts=(split) ;; single) layouts=(single) ;; both) layouts=(split single) ;;
  *) echo "rebuild_bench: --layout must be split, single or both, not '$layout'" >&2; exit 2 ;;
esac
if [[ -z $work ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# The limit of the `rebuild` target, read from targets.def, its one home.
targets=$(dirname "$0")/targets.def
limit=$(sed -n 's/^CG_TARGET(rebuild, "[^"]*", at_most, \([0-9.]*\), "s".*/\1/p' "$targets")
[[ -n $limit ]] || { echo "rebuild_bench: no 'rebuild' target in $targets" >&2; exit 2; }

# The actor classes: each with the standard headers such a class uses.
classes_declared() {
  cat <<'EOF'
struct CG_ACTOR Tokenizer {
  std::vector<std::string> split(std::string text);
};

struct CG_ACTOR Embedder {
  explicit Embedder(int dimensions);
  std::vector<double> embed(std::vector<std::string> tokens);

private:
  int dimensions_;
  std::unordered_map<std::string, std::vector<double>> cache_;
};

struct CG_ACTOR Statistics {
  double mean(std::vector<double> values);
  std::map<int, int> histogram(std::vector<double> values, int buckets);
};

struct CG_ACTOR Summariser {
  std::string summarise(double mean, std::map<int, int> histogram);
};
EOF
}

# The methods' bodies; `prefix` is "Class::" out of the classes, "" inside.
method_bodies() {
  local t=$1 e=$2 s=$3 m=$4
  cat <<EOF
std::vector<std::string> ${t}split(std::string text) {
  std::vector<std::string> tokens;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    std::string clean;
    for (char c : word)
      if (std::isalnum(static_cast<unsigned char>(c)))
        clean += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!clean.empty())
      tokens.push_back(std::move(clean));
  }
  return tokens;
}

std::vector<double> ${e}embed(std::vector<std::string> tokens) {
  std::vector<double> out;
  for (const std::string& token : tokens) {
    auto [it, added] = cache_.try_emplace(token);
    if (added)
      for (int d = 0; d < dimensions_; ++d)
        it->second.push_back(std::sin(double(std::hash<std::string>{}(token) % 1000) + d));
    out.push_back(std::accumulate(it->second.begin(), it->second.end(), 0.0) / dimensions_);
  }
  return out;
}

double ${s}mean(std::vector<double> values) {
  return values.empty() ? 0 : std::accumulate(values.begin(), values.end(), 0.0) / values.size();
}

std::map<int, int> ${s}histogram(std::vector<double> values, int buckets) {
  std::map<int, int> counts;
  if (values.empty())
    return counts;
  auto [low, high] = std::minmax_element(values.begin(), values.end());
  double width = (*high - *low) / buckets + 1e-9;
  for (double v : values)
    ++counts[std::min(buckets - 1, static_cast<int>((v - *low) / width))];
  return counts;
}

std::string ${m}summarise(double mean, std::map<int, int> histogram) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << "mean " << mean << ", buckets";
  for (const auto& [bucket, count] : histogram)
    out << ' ' << bucket << ':' << count;
  return out.str();
}
EOF
}

standard_headers() {
  printf '#include <%s>\n' algorithm cctype cmath iomanip map numeric sstream string \
    unordered_map vector
}

graph_function() {
  cat <<'EOF'
// text -> tokens -> embeddings -> (mean, histogram) -> summary
CG_GRAPH void summary(cg::GraphBuilder& g) {
  auto text = g.input<std::string>();
  auto tokenizer = g.actor<Tokenizer>("tokenizer");
  auto embedder = g.actor<Embedder>("embedder", 16);
  auto means = g.actor<Statistics>("means");
  auto histograms = g.actor<Statistics>("histograms");
  auto summariser = g.actor<Summariser>("summariser");
  auto embedded = embedder.bind<&Embedder::embed>(tokenizer.bind<&Tokenizer::split>(text));
  g.output(summariser.bind<&Summariser::summarise>(
      means.bind<&Statistics::mean>(embedded),
      histograms.bind<&Statistics::histogram>(embedded, 8)));
}
EOF
}

write_project() {
  local dir=$1 kind=$2
  rm -rf "$dir" && mkdir -p "$dir"
  if [[ $kind == split ]]; then
    { echo "// actors.hpp - the actor classes of the summary graph."
      echo "#pragma once"; echo; echo "#include <cg/cg.hpp>"; echo
      printf '#include <%s>\n' map string unordered_map vector; echo
      classes_declared; } >"$dir/actors.hpp"
    { echo '// actors.cpp - the methods of the actor classes.'
      echo '#include "actors.hpp"'; echo; standard_headers; echo
      echo 'Embedder::Embedder(int dimensions) : dimensions_(dimensions) {}'; echo
      method_bodies Tokenizer:: Embedder:: Statistics:: Summariser::; } >"$dir/actors.cpp"
    { echo "// summary.cg.cpp - the summary graph; its actors are in actors.hpp."
      echo "#include <cg/cg.hpp>"; echo; echo '#include "actors.hpp"'; echo
      echo "#include <string>"; echo; graph_function; } >"$dir/summary.cg.cpp"
    local libraries="LINK_LIBRARIES summary_actor_classes"
    local classes_library="add_library(summary_actor_classes STATIC actors.cpp)
target_link_libraries(summary_actor_classes PUBLIC CompiledGraph::runtime)
target_include_directories(summary_actor_classes PUBLIC \${CMAKE_CURRENT_SOURCE_DIR})"
  else
    { echo "// summary.cg.cpp - the summary graph and its actors, in one file."
      echo "#include <cg/cg.hpp>"; echo; standard_headers; echo
      single_classes
      echo; graph_function; } >"$dir/summary.cg.cpp"
    local libraries="" classes_library=""
  fi
  cat >"$dir/main.cpp" <<'EOF'
// main.cpp - the driver: one text through the summary graph.
#include "summary.cg.hpp"

#include <iostream>

int main() {
  auto graph = cg::launch<&summary>();
  std::cout << graph.execute(std::string("the cat sat on the mat, the end")).get() << "\n";
}
EOF
  cat >"$dir/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(rebuild_bench CXX)
find_package(CompiledGraph 0.2 CONFIG REQUIRED)
$classes_library
add_compiled_graph(summary SOURCE summary.cg.cpp $libraries)
add_executable(summary_app main.cpp)
target_compile_features(summary_app PRIVATE cxx_std_20)
target_link_libraries(summary_app PRIVATE summary)
EOF
}

# The single-file layout: each class with its methods defined inside it.
single_classes() {
  local bodies
  bodies=$(method_bodies '' '' '' '' | sed 's/^/  /; s/^  $//')
  pick() { awk -v want="$1" 'BEGIN { RS = ""; ORS = "\n\n" } $0 ~ want' <<<"$bodies"; }
  echo "struct CG_ACTOR Tokenizer {"; pick " split\\("; echo "};"; echo
  echo "struct CG_ACTOR Embedder {"
  echo "  explicit Embedder(int dimensions) : dimensions_(dimensions) {}"; echo
  pick " embed\\("
  echo "private:"; echo "  int dimensions_;"
  echo "  std::unordered_map<std::string, std::vector<double>> cache_;"; echo "};"; echo
  echo "struct CG_ACTOR Statistics {"; pick " mean\\("; pick " histogram\\("; echo "};"; echo
  echo "struct CG_ACTOR Summariser {"; pick " summarise\\("; echo "};"
}

# Seconds the command takes, to a tenth.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >>"$log" 2>&1 || { cat "$log" >&2; echo "rebuild_bench: '$*' failed" >&2; exit 1; }
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }'
}

verdict() { awk -v t="$1" -v l="$limit" 'BEGIN { print (t <= l) ? "met" : "MISSED" }'; }

printf 'Rebuild after an edit to the graph function: 5 actors, %s, -j%s (%s)\n' \
  "$build_type" "$jobs" "$(uptime | sed 's/.*load/load/')"
printf '%-44s %10s %10s %14s\n' "layout / step" "time (s)" "target" "verdict"
for kind in "${layouts[@]}"; do
  dir=$work/$kind
  log=$work/$kind.log
  write_project "$dir" "$kind"
  cmake -S "$dir" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  full=$(seconds cmake --build "$dir/build" -j "$jobs")
  [[ $("$dir/build/summary_app") == "mean "* ]] ||
    { echo "rebuild_bench: $kind: the graph does not run" >&2; exit 1; }
  # A constant of the graph function: the histogram's buckets, 8 -> 9.
  sed -i 's/(embedded, 8)/(embedded, 9)/' "$dir/summary.cg.cpp"
  constant=$(seconds cmake --build "$dir/build" -j "$jobs")
  # A comment line in the graph function: the lines below it move.
  sed -i 's|^  auto text = g.input<std::string>();|  // the text to summarise\n&|' \
    "$dir/summary.cg.cpp"
  comment=$(seconds cmake --build "$dir/build" -j "$jobs")
  [[ $("$dir/build/summary_app") == "mean "* ]] ||
    { echo "rebuild_bench: $kind: the edited graph does not run" >&2; exit 1; }
  # The floor: the driver program alone recompiled and relinked.
  touch "$dir/main.cpp"
  driver=$(seconds cmake --build "$dir/build" -j "$jobs")
  name=$([[ $kind == split ]] && echo "classes in actors.hpp + actors.cpp" ||
         echo "everything in summary.cg.cpp")
  printf '%-44s %10s %10s %14s\n' "$name: full build" "$full" "" ""
  printf '%-44s %10s %10s %14s\n' "  rebuild after touching main.cpp (driver)" "$driver" "" ""
  printf '%-44s %10s %10s %14s\n' "  rebuild after editing a constant" "$constant" "<= $limit" \
    "$(verdict "$constant")"
  printf '%-44s %10s %10s %14s\n' "  rebuild after adding a comment line" "$comment" \
    "<= $limit" "$(verdict "$comment")"
done
