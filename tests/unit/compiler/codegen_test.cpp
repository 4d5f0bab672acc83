//===- codegen_test.cpp - Tests for generated code and its layout --------===//
//
// Codegen lays out the spec tables and the actor programs itself instead of
// running the formatter on them (Layout.h). These tests hold it to that: on
// graphs of every shape the fixtures have, each generated file is one the
// formatter leaves as it is, and where codegen cannot be sure (a spelling
// the formatter would change, a row too wide) the formatter still lays it
// out.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/Supported.h"

#include "codegen/FormatCode.h"
#include "codegen/Layout.h"

#include "GraphFixtures.h"
#include "ScheduleHelpers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cg::codegen {
namespace {

using test::constant;
using test::GraphBuilder;
using test::scheduleOf;

// `layout` sets where the actor programs take their classes from and how
// many files they are compiled in; by default the source declares them.
std::vector<GeneratedFile> generateFor(const ir::Graph& graph,
                                       const schedule::ScheduleOptions& options = {},
                                       void (*layout)(CodegenInput&) = nullptr) {
  schedule::Schedule schedule = scheduleOf(graph, options);
  CodegenInput input{"echo",
                     "/src/examples/echo/echo.cg.cpp",
                     "../../../examples/echo/echo.cg.cpp",
                     "cgc echo.cg.cpp --target echo",
                     {{&graph, &schedule}},
                     {}};
  input.sourceNeededFor = "struct 'EchoActor' (echo.cg.cpp:6)";
  if (layout)
    layout(input);
  return generate(input);
}

// The actor classes in a header of their own, the programs in 4 files.
void classesInAHeader(CodegenInput& input) {
  input.actorIncludes =
      std::vector<std::string>{"#include <cg/cg.hpp>", "#include \"examples/echo/echo_actor.hpp\""};
  input.sourceNeededFor.clear();
  input.actorShards = 4;
}

const std::string& fileNamed(const std::vector<GeneratedFile>& files, const std::string& name) {
  for (const GeneratedFile& file : files)
    if (file.name == name)
      return file.contents;
  ADD_FAILURE() << "no file " << name;
  static const std::string kNone;
  return kNone;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// a.first(x, 3) and a.second(2.5): constant arguments, and a task that reads
// no value; the actor has constructor arguments.
ir::Graph constantsGraph(const char* firstConstant = "3") {
  GraphBuilder g("constants", 70);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 71, "::Adder", {constant("int", "7")});
  unsigned b = g.actor("b", 72, "::Adder");
  unsigned first = g.bind(a, "first", {x, constant("int", firstConstant)}, 73, "int");
  unsigned second =
      g.bind(b, "second", {constant("double", "static_cast<double>(2.5)")}, 74, "unsigned long");
  g.output(first).output(second);
  return g.build();
}

TEST(Codegen, EveryGeneratedFileIsLeftAsItIsByTheFormatter) {
  for (const ir::Graph& graph :
       {test::chainGraph(), test::fanOutGraph(), test::sameActorGraph(), test::sharedResultGraph(),
        test::tupleGraph(), test::gpuGraph(), constantsGraph()}) {
    for (const GeneratedFile& file : generateFor(graph))
      EXPECT_EQ(formatCode(file.contents, file.name), file.contents)
          << "graph " << graph.name << ", " << file.name;
  }
}

TEST(Codegen, TheSpecTablesHaveOneRowPerActorAndChannelWithAlignedComments) {
  std::string header = fileNamed(generateFor(test::fanOutGraph()), "echo.cg.hpp");
  EXPECT_TRUE(contains(
      header, "inline constexpr std::array<cg::detail::ActorSpec, 3> fan_out_actors{{\n"
              "    {.name = \"a\", .run = &run_fan_out_a}, // 0: ::EchoActor (echo.cg.cpp:21:3)\n"
              "    {.name = \"b\", .run = &run_fan_out_b}, // 1: ::EchoActor (echo.cg.cpp:22:3)\n"
              "    {.name = \"c\", .run = &run_fan_out_c}, // 2: ::EchoActor (echo.cg.cpp:23:3)\n"
              "}};\n"))
      << header;
  EXPECT_TRUE(contains(header, "inline constexpr std::array<int, 3> fan_out_r0{0, 1, 2};\n"))
      << header;
  EXPECT_TRUE(contains(header, "fan_out_channels{{\n"
                               "    {.writer = -1, .reader_actors = fan_out_r0}, // c0: input #0\n"
                               "    {.writer = 0, .reader_actors = fan_out_r1},  // c1: a.echo\n"))
      << header;
}

// Every field by name, and none that holds its default member initializer:
// no tcp_everywhere unless cgc was told, no communicators in a graph without
// groups.
TEST(Codegen, TheGraphSpecNamesEachFieldAndLeavesOutThoseAtTheirDefaults) {
  const ir::Graph graph = test::chainGraph();
  const std::string header = fileNamed(generateFor(graph), "echo.cg.hpp");
  EXPECT_TRUE(contains(header,
                       "inline constexpr cg::detail::GraphSpec chain_spec{\n"
                       "    .name = \"chain\",\n"
                       "    .actors = chain_actors,\n"
                       "    .channels = chain_channels,\n"
                       "    .input_channels = chain_inputs,\n"
                       "    .output_channels = chain_outputs,\n"
                       "    .names = {.channels = chain_values, .computes = chain_computes},\n"
                       "};\n"))
      << header;
  EXPECT_TRUE(contains(header, "chain_a_computes{{\n"
                               "    {.task = \"a.echo\", .loc = \"echo.cg.cpp:13\"},\n"
                               "}};\n"))
      << header;
  const std::string tcp =
      fileNamed(generateFor(graph, {}, [](CodegenInput& input) { input.tcpEverywhere = true; }),
                "echo.cg.hpp");
  EXPECT_TRUE(contains(tcp, "    .output_channels = chain_outputs,\n"
                            "    .tcp_everywhere = true,\n"
                            "    .names = "))
      << tcp;
}

// launch() refuses more executions in flight than the schedule was checked
// with, so the spec carries any capacity but the runtime's default.
TEST(Codegen, TheGraphSpecCarriesTheCapacityTheScheduleWasCheckedWith) {
  schedule::ScheduleOptions four;
  four.maxInFlight = 4;
  const std::string header = fileNamed(generateFor(test::chainGraph(), four), "echo.cg.hpp");
  EXPECT_TRUE(contains(header,
                       "    .names = {.channels = chain_values, .computes = chain_computes},\n"
                       "    .max_in_flight = 4,\n"
                       "};\n"))
      << header;
  for (const GeneratedFile& file : generateFor(test::chainGraph(), four))
    EXPECT_EQ(formatCode(file.contents, file.name), file.contents) << file.name;
}

// A large graph's reader arrays and COMPUTE tables, thousands of small
// declarations, are laid out by codegen; one too wide for the column limit
// (an actor's long name) is laid out by the formatter among them. The name
// is short enough for every other table to be laid out by codegen: then the
// header is one the formatter leaves as it is only if codegen laid those
// declarations out as the formatter would.
TEST(Codegen, ALargeGraphsSmallDeclarationsAreLaidOutAsTheFormatterWouldWithAWideOneAmongThem) {
  GraphBuilder g("many", 100);
  unsigned v = g.input("int");
  std::vector<unsigned> actors;
  for (int a = 0; a < 30; ++a)
    actors.push_back(g.actor(a == 7 ? std::string(30, 'w') : "s" + std::to_string(a), 101));
  for (int t = 0; t < 300; ++t)
    v = g.bind(actors[t % actors.size()], "step", {v}, 102, "int");
  g.output(v);
  const std::string header = fileNamed(generateFor(g.build()), "echo.cg.hpp");
  EXPECT_EQ(formatCode(header, "echo.cg.hpp"), header);
  EXPECT_TRUE(contains(header, "inline constexpr std::array<int, 1> many_r299{29};\n"
                               "inline constexpr std::array<int, 1> many_r300{-1};\n"))
      << header;
  EXPECT_TRUE(contains(header, "inline constexpr std::array<cg::detail::ComputeName, 10> "
                               "many_s6_computes{{\n"
                               "    {.task = \"s6.step#1\", .loc = \"echo.cg.cpp:102\"},\n"))
      << header;
  // The wide one as the formatter wraps it, between two laid out by codegen.
  EXPECT_TRUE(contains(header, "inline constexpr std::array<cg::detail::ComputeName, 10>\n"
                               "    many_" +
                                   std::string(30, 'w') + "_computes{{\n"))
      << header;
}

TEST(Codegen, ACudaIpcChannelAndAnActorWithGpusSaySoInTheirRowsAlone) {
  ir::Graph graph = test::chainGraph();
  graph.actors[0].gpus = 1;
  graph.values[1].transport = ir::Transport::CudaIpc;
  graph.values[1].type.spelling = "cg::Tensor";
  const std::string header = fileNamed(generateFor(graph), "echo.cg.hpp");
  EXPECT_TRUE(contains(header, "    {.name = \"a\", .run = &run_chain_a, .gpus = 1}, // 0: "
                               "::EchoActor (echo.cg.cpp:11:3)\n"
                               "    {.name = \"b\", .run = &run_chain_b},            // 1: "))
      << header;
  EXPECT_TRUE(contains(header,
                       "    {.writer = 0, .reader_actors = chain_r1, .cuda_ipc = true}, // c1: "
                       "a.echo\n"
                       "    {.writer = 1, .reader_actors = chain_r2},                   // c2: "))
      << header;
}

TEST(Codegen, NoGeneratedFileNamesTheCheckoutItWasGeneratedFrom) {
  for (const GeneratedFile& file : generateFor(test::fanOutGraph())) {
    EXPECT_EQ(file.contents.find("/src/"), std::string::npos) << file.name;
    if (file.name == "echo.actors.hpp") {
      EXPECT_TRUE(contains(file.contents, "#include \"../../../examples/echo/echo.cg.cpp\"\n"));
    }
  }
}

TEST(Codegen, TheDriverLibrarySourceIsNamedApartFromGraphSources) {
  std::vector<GeneratedFile> files = generateFor(test::chainGraph());
  EXPECT_TRUE(contains(fileNamed(files, "echo.driver.cpp"),
                       "const char* actor_host() { return CG_ACTOR_HOST; }\n"));
  for (const GeneratedFile& file : files)
    EXPECT_EQ(file.name.find(".cg.cpp"), std::string::npos) << file.name;
}

TEST(Codegen, TheDriverLibrarySourceIncludesNothingSoNoEditRecompilesIt) {
  const std::string& driver = fileNamed(generateFor(test::chainGraph()), "echo.driver.cpp");
  EXPECT_FALSE(contains(driver, "#include")) << driver;
}

TEST(Codegen, ActorProgramsIncludeTheActorHeaderNotTheDriverHeader) {
  std::vector<GeneratedFile> files = generateFor(test::chainGraph());
  const std::string& program = fileNamed(files, "echo.chain.a.cpp");
  EXPECT_TRUE(contains(program, "#include \"echo.actors.hpp\"\n\n#include <cg/actor.hpp>\n"))
      << program;
  EXPECT_FALSE(contains(program, "echo.cg.hpp")) << program;
}

TEST(Codegen, TheActorHeaderIncludesTheSourceWholeAndSaysWhyWhenTheSourceDeclaresAClass) {
  std::vector<GeneratedFile> files = generateFor(test::chainGraph());
  const std::string& actors = fileNamed(files, "echo.actors.hpp");
  EXPECT_TRUE(contains(actors, "// All of echo.cg.cpp, as it declares struct 'EchoActor' "
                               "(echo.cg.cpp:6): an edit to it\n"
                               "// recompiles every actor program."))
      << actors;
  EXPECT_TRUE(contains(actors, "#pragma once\n\n#include \"../../../examples/echo/echo.cg.cpp\"\n"
                               "\n#include <cg/codecs.hpp>\n"))
      << actors;
  // The driver header takes the source through it, once.
  const std::string& header = fileNamed(files, "echo.cg.hpp");
  EXPECT_TRUE(contains(header, "#pragma once\n\n#include \"echo.actors.hpp\"\n\n#include "
                               "<cg/codecs.hpp>\n"))
      << header;
  EXPECT_FALSE(contains(header, "echo.cg.cpp\"")) << header;
}

TEST(Codegen, WithTheClassesInAHeaderTheActorHeaderTakesTheSourcesIncludesAndTheDriverTheSource) {
  std::vector<GeneratedFile> files = generateFor(test::chainGraph(), {}, classesInAHeader);
  const std::string& actors = fileNamed(files, "echo.actors.hpp");
  EXPECT_TRUE(contains(actors, "#pragma once\n\n#include <cg/cg.hpp>\n"
                               "#include \"examples/echo/echo_actor.hpp\"\n\n"
                               "#include <cg/codecs.hpp>\n"))
      << actors;
  EXPECT_FALSE(contains(actors, "echo.cg.cpp\"")) << actors;
  const std::string& header = fileNamed(files, "echo.cg.hpp");
  EXPECT_TRUE(contains(header, "#include \"echo.actors.hpp\"\n"
                               "#include \"../../../examples/echo/echo.cg.cpp\"\n"))
      << header;
}

// The line of `shard` that includes `program`, digest and all.
std::string includeLine(const std::vector<GeneratedFile>& files, const std::string& shard,
                        const std::string& program) {
  const std::string& text = fileNamed(files, shard);
  size_t at = text.find("#include \"" + program + "\" // ");
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

TEST(Codegen, AShardChangesWhenAProgramItIncludesChangesAndOnlyThen) {
  std::vector<GeneratedFile> three = generateFor(constantsGraph("3"), {}, classesInAHeader);
  std::vector<GeneratedFile> again = generateFor(constantsGraph("3"), {}, classesInAHeader);
  std::vector<GeneratedFile> five = generateFor(constantsGraph("5"), {}, classesInAHeader);
  // a (shard 0) passes the constant; b (shard 1) does not.
  std::string a3 = includeLine(three, "echo.actors.0.cpp", "echo.constants.a.cpp");
  ASSERT_EQ(a3.size(), std::string("#include \"echo.constants.a.cpp\" // ").size() + 16) << a3;
  EXPECT_EQ(includeLine(again, "echo.actors.0.cpp", "echo.constants.a.cpp"), a3);
  EXPECT_NE(includeLine(five, "echo.actors.0.cpp", "echo.constants.a.cpp"), a3);
  EXPECT_EQ(fileNamed(five, "echo.actors.1.cpp"), fileNamed(three, "echo.actors.1.cpp"));
}

TEST(Codegen, ProgramsThatIncludeTheWholeSourceAreAllCompiledInTheFirstShard) {
  std::vector<GeneratedFile> files =
      generateFor(test::fanOutGraph(), {}, [](CodegenInput& input) { input.actorShards = 4; });
  const std::string& first = fileNamed(files, "echo.actors.0.cpp");
  EXPECT_TRUE(contains(first, "// Every program is in echo.actors.0.cpp: they include echo.cg.cpp, "
                              "so any edit to it\n"
                              "// recompiles them all, and one file compiles them fastest.\n"
                              "#include \"echo.fan_out.a.cpp\" // "))
      << first;
  EXPECT_TRUE(contains(first, "#include \"echo.fan_out.b.cpp\" // ")) << first;
  EXPECT_TRUE(contains(first, "#include \"echo.fan_out.c.cpp\" // ")) << first;
  for (const char* other : {"echo.actors.1.cpp", "echo.actors.2.cpp", "echo.actors.3.cpp"})
    EXPECT_FALSE(contains(fileNamed(files, other), "#include")) << other;
}

TEST(Codegen, ProgramKIsCompiledInFileKModTheShardCountAndAnEmptyShardSaysSo) {
  // fan_out: a, b and c, over 4 files.
  std::vector<GeneratedFile> files = generateFor(test::fanOutGraph(), {}, classesInAHeader);
  EXPECT_TRUE(contains(fileNamed(files, "echo.actors.0.cpp"),
                       "recompiles its own file only.\n#include \"echo.fan_out.a.cpp\" // "));
  EXPECT_TRUE(
      contains(fileNamed(files, "echo.actors.1.cpp"), "#include \"echo.fan_out.b.cpp\" // "));
  EXPECT_TRUE(
      contains(fileNamed(files, "echo.actors.2.cpp"), "#include \"echo.fan_out.c.cpp\" // "));
  const std::string& empty = fileNamed(files, "echo.actors.3.cpp");
  EXPECT_TRUE(contains(empty, "// recompiles its own file only. This one has none.\n")) << empty;
  EXPECT_FALSE(contains(empty, "#include")) << empty;
  for (const GeneratedFile& file : files)
    EXPECT_NE(file.name, "echo.actors.cpp");
  EXPECT_TRUE(contains(fileNamed(files, "echo.cg.hpp"),
                       "// The actors' programs, in echo.actors.0.cpp to echo.actors.3.cpp.\n"));
}

TEST(Codegen, TheDriverHeaderCompilesNoActorSide) {
  std::vector<GeneratedFile> files = generateFor(test::chainGraph());
  EXPECT_FALSE(contains(fileNamed(files, "echo.cg.hpp"), "cg/actor.hpp"));
  EXPECT_TRUE(contains(fileNamed(files, "echo.chain.a.cpp"), "#include <cg/actor.hpp>\n"));
}

TEST(Codegen, AnActorOnAnotherHostCarriesItsHostInItsRow) {
  ir::Graph graph = test::chainGraph();
  graph.actors[1].host = 2;
  std::string header = fileNamed(generateFor(graph), "echo.cg.hpp");
  EXPECT_TRUE(contains(header,
                       "    {.name = \"a\", .run = &run_chain_a},            // 0: ::EchoActor "
                       "(echo.cg.cpp:11:3)\n"
                       "    {.name = \"b\", .run = &run_chain_b, .host = 2}, // 1: ::EchoActor "
                       "(echo.cg.cpp:12:3)\n"))
      << header;
}

TEST(Codegen, AConstructorArgumentIsEncodedOnlyForTheActorThatHasOne) {
  std::string header = fileNamed(generateFor(constantsGraph()), "echo.cg.hpp");
  EXPECT_TRUE(contains(header,
                       "    std::vector<std::optional<std::vector<std::byte>>> encoded(2);\n"
                       "    encoded[0] = cg::detail::encode_constructor_args(constructors.a);\n"
                       "    return encoded;\n"))
      << header;
  std::string chain = fileNamed(generateFor(test::chainGraph()), "echo.cg.hpp");
  EXPECT_FALSE(contains(chain, "encode")) << chain;
}

TEST(Codegen, TensorInputsGetAnInputTensorMethodCheckedAgainstThemWhenCalled) {
  GraphBuilder g("weights", 60);
  unsigned n = g.input("int");
  unsigned w = g.input("cg::Tensor");
  unsigned b = g.input("cg::Tensor", ir::Transport::Cuda);
  unsigned a = g.actor("a", 61);
  g.output(g.bind(a, "apply", {n, w, b}, 62, "int"));
  std::vector<GeneratedFile> files = generateFor(g.build());
  const std::string& header = fileNamed(files, "echo.cg.hpp");
  EXPECT_TRUE(contains(
      header, "  /// Input #I of the next execute() (#1 unless told: the graph's cg::Tensor\n"
              "  /// inputs are #1, #2) as a host tensor made where the graph carries it, in its\n"
              "  /// channel's shared memory: fill it, then pass it to execute(), which hands it\n"
              "  /// over without copying its elements. The next execute() takes it, whatever it\n"
              "  /// is given; the memory is the graph's from then on (see\n"
              "  /// cg::detail::GraphRuntime::input_tensor).\n"
              "  template <std::size_t I = 1>\n"
              "  cg::Tensor input_tensor(cg::DType dtype, std::vector<std::int64_t> shape) {\n"
              "    static_assert(I == 1 || I == 2,\n"
              "                  \"input_tensor<I>(): input #I of graph 'weights' is not a "
              "cg::Tensor\");\n"
              "    return runtime_->input_tensor(I, dtype, std::move(shape));\n"
              "  }\n"))
      << header;
  EXPECT_EQ(formatCode(header, "echo.cg.hpp"), header);
  EXPECT_FALSE(contains(fileNamed(generateFor(test::chainGraph()), "echo.cg.hpp"), "input_tensor"));
}

// a.make(x) to b.use over NCCL: graph 'edge', one communicator edge.
ir::Graph ncclEdgeGraph() {
  GraphBuilder g("edge", 80);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 81);
  unsigned b = g.actor("b", 82);
  unsigned t = g.bind(a, "make", {x}, 83, "cg::Tensor");
  g.transport(t, ir::Transport::Nccl);
  g.output(g.bind(b, "use", {t}, 84, "int"));
  return g.build();
}

// a.make(x) to b over NCCL: with overlap both ends return once the transfer
// is queued (the runtime's cg::Overlap), without it neither is told to.
TEST(Codegen, WithOverlapBothEndsOfAnNcclEdgeAreToldToOverlap) {
  const ir::Graph graph = ncclEdgeGraph();
  schedule::ScheduleOptions overlap;
  overlap.overlapGpuCommunication = true;
  const std::vector<GeneratedFile> overlapped = generateFor(graph, overlap);
  const std::string& writer = fileNamed(overlapped, "echo.edge.a.cpp");
  const std::string& reader = fileNamed(overlapped, "echo.edge.b.cpp");
  EXPECT_TRUE(contains(writer, "process.nccl_output(1, \"make\", g0, cg::Overlap::on);")) << writer;
  EXPECT_TRUE(contains(reader, "process.nccl_input(1, 0, g0, cg::Overlap::on);")) << reader;
  EXPECT_EQ(formatCode(writer, "echo.edge.a.cpp"), writer);
  EXPECT_EQ(formatCode(reader, "echo.edge.b.cpp"), reader);
  const std::vector<GeneratedFile> plain = generateFor(graph);
  EXPECT_TRUE(
      contains(fileNamed(plain, "echo.edge.a.cpp"), "process.nccl_output(1, \"make\", g0);"));
  EXPECT_TRUE(contains(fileNamed(plain, "echo.edge.b.cpp"), "process.nccl_input(1, 0, g0);"));
}

// An NCCL edge is a communicator: declared once in the header with its
// group named as schedule.txt names it, and taken by both ends.
TEST(Codegen, AnNcclEdgeIsACommunicatorNamedInTheHeaderAndTakenByBothEnds) {
  const std::vector<GeneratedFile> files = generateFor(ncclEdgeGraph());
  const std::string& header = fileNamed(files, "echo.cg.hpp");
  EXPECT_TRUE(contains(
      header, "// Communicator groups (NCCL edges, collectives): their actors, rank = position.\n"
              "// g0: nccl c1: a -> b\n"
              "inline constexpr std::array<std::uint32_t, 2> edge_g0{0, 1};\n"
              "inline constexpr std::array<cg::detail::CommunicatorSpec, 1> edge_communicators{{\n"
              "    {.actors = edge_g0},\n"
              "}};\n"))
      << header;
  EXPECT_TRUE(contains(header, "    .communicators = edge_communicators,\n")) << header;
  EXPECT_TRUE(
      contains(fileNamed(files, "echo.edge.a.cpp"),
               "  cg::Communicator& g0 = process.communicator(0); // nccl c1: a -> b\n"
               "  auto c0 = process.input<int>(0, 0);             // input #0, from driver\n"
               "  auto c1 = process.nccl_output(1, \"make\", g0);   // a.make, to b over nccl\n"))
      << fileNamed(files, "echo.edge.a.cpp");
  EXPECT_TRUE(contains(fileNamed(files, "echo.edge.b.cpp"),
                       "  cg::Communicator& g0 = process.communicator(0); // nccl c1: a -> b\n"))
      << fileNamed(files, "echo.edge.b.cpp");
}

TEST(Codegen, ATypeTheFormatterWouldRespellIsLaidOutByIt) {
  GraphBuilder g("pointers", 80);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 81);
  unsigned b = g.actor("b", 82);
  unsigned va = g.bind(a, "name", {x}, 83, "const char *");
  g.output(g.bind(b, "length", {va}, 84, "int"));
  std::vector<GeneratedFile> files = generateFor(g.build());
  const std::string& program = fileNamed(files, "echo.pointers.b.cpp");
  EXPECT_TRUE(
      contains(program, "  auto c1 = process.input<const char*>(1, 0); // a.name, from a\n"))
      << program;
  EXPECT_EQ(formatCode(program, "echo.pointers.b.cpp"), program);
}

TEST(Codegen, ATableTooWideForTheColumnLimitIsLaidOutByTheFormatter) {
  GraphBuilder g("wide", 90);
  unsigned x = g.input("int");
  unsigned a = g.actor(std::string(70, 'a'), 91);
  unsigned b = g.actor("b", 92);
  g.output(g.bind(b, "echo", {g.bind(a, "echo", {x}, 93, "int")}, 94, "int"));
  std::vector<GeneratedFile> files = generateFor(g.build());
  for (const GeneratedFile& file : files)
    EXPECT_EQ(formatCode(file.contents, file.name), file.contents) << file.name;
  const std::string& header = fileNamed(files, "echo.cg.hpp");
  EXPECT_TRUE(contains(header, "int run_wide_" + std::string(70, 'a') +
                                   "(\n    cg::ActorProcess& process);\n"))
      << header;
  // The rows' comments stand above them, where the wrapped row cannot move
  // them out of line.
  const std::string name(70, 'a');
  EXPECT_TRUE(contains(header, "wide_actors{{\n"
                               "    // 0: ::EchoActor (echo.cg.cpp:91:3)\n"
                               "    {.name = \"" +
                                   name +
                                   "\",\n"
                                   "     .run = &run_wide_" +
                                   name +
                                   "},\n"
                                   "    // 1: ::EchoActor (echo.cg.cpp:92:3)\n"
                                   "    {.name = \"b\", .run = &run_wide_b},\n"
                                   "}};\n"))
      << header;
  EXPECT_TRUE(contains(header, "wide_channels{{\n"
                               "    // c0: input #0\n"
                               "    {.writer = -1, .reader_actors = wide_r0},\n"
                               "    // c1: " +
                                   name +
                                   ".echo\n"
                                   "    {.writer = 0, .reader_actors = wide_r1},\n"))
      << header;
}

TEST(Layout, PlainSpellingsAreTheOnesTheFormatterKeeps) {
  for (const char* plain : {"int", "unsigned long", "std::vector<std::pair<int, float>>", "::Foo",
                            "std::string(\"a, b  c\")", "static_cast<double>(-1.5e-05)", "7ull",
                            "static_cast<char>(65)", "true", "-3"})
    EXPECT_TRUE(isPlainSpelling(plain)) << plain;
  for (const char* respelled : {"const char *", "int&", "a+b", "std::pair<int,int>",
                                "std::vector<int >", "(-9223372036854775807ll - 1)", "f(1,  2)"})
    EXPECT_FALSE(isPlainSpelling(respelled)) << respelled;
}

TEST(Layout, TrailingCommentsAlignAfterTheWidestLine) {
  EXPECT_EQ(alignTrailingComments({{"a;", "one"}, {"bbbb;", "two"}}, 1), "a;    // one\n"
                                                                         "bbbb; // two\n");
}

TEST(Layout, CommentsStayBesideTheirLinesWhileEveryOneFitsAndGoAboveThemOnceOneDoesNot) {
  const std::vector<std::pair<std::string, std::string>> rows = {{"  a;", "one"},
                                                                 {"  bbbb;", "two"}};
  // "  bbbb; // two" is 14 columns: at 86 columns in it ends on the limit.
  EXPECT_EQ(commentedLines(rows, 86), "  a;    // one\n"
                                      "  bbbb; // two\n");
  EXPECT_EQ(commentedLines(rows, 87), "  // one\n"
                                      "  a;\n"
                                      "  // two\n"
                                      "  bbbb;\n");
}

TEST(Layout, TablesGoInAtTheirMarkersIndentation) {
  LaidOutTables tables;
  std::string code = "x{{\n" + tables.add("{1},\n{2},\n") + "}};\n";
  EXPECT_EQ(tables.expand(code), "x{{\n{1},\n{2},\n}};\n");
  EXPECT_EQ(tables.splice("x{{\n    // @cgc-table-0\n}};\n"), "x{{\n    {1},\n    {2},\n}};\n");
  LaidOutTables wide;
  wide.add(std::string(97, 'w') + "\n");
  EXPECT_EQ(wide.splice("    // @cgc-table-0\n"), std::nullopt);
}

std::string formatted(const std::vector<ir::Diagnostic>& diagnostics) {
  std::string out;
  for (const ir::Diagnostic& d : diagnostics)
    out += ir::formatDiagnostic(d);
  return out;
}

TEST(Supported, NcclEdgesAndCollectivesOfOtherTypesThanTensorAreReportedInSourceOrder) {
  EXPECT_TRUE(unsupportedTransports(test::chainGraph()).empty());
  EXPECT_EQ(formatted(unsupportedTransports(test::gpuGraph())),
            "examples/echo/echo.cg.cpp:63:3: error: element #1 of the result of 'w0.split' is "
            "a 'std::vector<float>', so it cannot use transport nccl: only cg::Tensor values "
            "travel over nccl\n"
            "examples/echo/echo.cg.cpp:64:3: error: the result of 'w0.grad' is a "
            "'std::vector<float>', so it cannot use transport nccl: only cg::Tensor values "
            "travel over nccl\n"
            "examples/echo/echo.cg.cpp:65:3: error: the result of 'w1.grad' is a "
            "'std::vector<float>', so it cannot use transport nccl: only cg::Tensor values "
            "travel over nccl\n"
            "examples/echo/echo.cg.cpp:66:3: error: allreduce of 'std::vector<float>' values: a "
            "collective takes cg::Tensor values\n"
            "examples/echo/echo.cg.cpp:67:3: error: allgather of 'std::vector<float>' values: a "
            "collective takes cg::Tensor values\n");
}

TEST(Supported, NcclEdgesAndCollectivesOfTensorsAreAccepted) {
  GraphBuilder g("tensors", 70);
  unsigned x = g.input("int");
  unsigned a = g.actor("a", 71);
  unsigned b = g.actor("b", 72);
  unsigned ta = g.bind(a, "make", {x}, 73, "cg::Tensor");
  unsigned tb = g.bind(b, "make", {x}, 74, "cg::Tensor");
  g.transport(ta, ir::Transport::Nccl);
  unsigned used = g.bind(b, "use", {ta}, 75, "cg::Tensor");
  std::vector<unsigned> sums =
      g.collective(ir::Collective::Kind::AllReduce, "sum", {a, b}, {ta, used}, 76, "cg::Tensor");
  g.output(sums[0]).output(sums[1]).output(tb);
  EXPECT_TRUE(unsupportedTransports(g.build()).empty());
}

TEST(Supported, DeviceTransportsOfOtherTypesThanTensorAreReportedAtTheBindOrTheGraph) {
  GraphBuilder g("devices", 80);
  unsigned x = g.input("int", ir::Transport::Cuda);
  unsigned a = g.actor("a", 81);
  unsigned b = g.actor("b", 82);
  unsigned va = g.bind(a, "grad", {x}, 83, "std::vector<float>");
  unsigned vb = g.bind(b, "grad", {x}, 84, "std::vector<float>");
  g.transport(va, ir::Transport::Cuda).transport(vb, ir::Transport::Cpu);
  g.output(g.bind(b, "apply", {va}, 85, "int")).output(g.bind(a, "apply", {vb}, 86, "int"));
  EXPECT_EQ(formatted(unsupportedTransports(g.build())),
            "examples/echo/echo.cg.cpp:80:1: error: graph input #0 is a 'int', so it cannot use "
            "transport cuda: only cg::Tensor values are delivered on a device\n"
            "examples/echo/echo.cg.cpp:83:3: error: the result of 'a.grad' is a "
            "'std::vector<float>', so it cannot use transport cuda: only cg::Tensor values are "
            "delivered on a device\n"
            "examples/echo/echo.cg.cpp:84:3: error: the result of 'b.grad' is a "
            "'std::vector<float>', so it cannot use transport cpu: only cg::Tensor values are "
            "delivered on a device\n");
}

TEST(Supported, DeviceTransportsOfTensorsAreAcceptedOnInputsAndResults) {
  GraphBuilder g("devices", 90);
  unsigned x = g.input("cg::Tensor", ir::Transport::Cuda);
  unsigned a = g.actor("a", 91);
  unsigned b = g.actor("b", 92);
  unsigned va = g.bind(a, "make", {x}, 93, "cg::Tensor");
  g.transport(va, ir::Transport::Cpu);
  g.output(g.bind(b, "use", {va}, 94, "cg::Tensor")).output(va);
  EXPECT_TRUE(unsupportedTransports(g.build()).empty());
}

} // namespace
} // namespace cg::codegen
