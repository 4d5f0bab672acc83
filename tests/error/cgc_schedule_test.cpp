// cgc_schedule_test.cpp - cgc schedules GPU graphs, and shows the schedule of any.
//
// NCCL values, collectives, costs and the scheduling options, end to end from
// a graph source: `cgc --emit=ir,schedule,schedule-json,dot` succeeds and its
// artefacts say what the scheduler decided, byte for byte the same each run.
// (These graphs send std::vector<float> over nccl, which the default emit,
// the program, refuses: see nccl_edge_not_a_tensor.cg.cpp.)
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// A pipeline-parallel training step: 4 stages, 8 microbatches, NCCL between
/// stages, bound as all forwards then all backwards; and Ray's overlap
/// example: three senders, one receiver.
constexpr const char* kSource = R"(#include <cg/cg.hpp>
#include <vector>

struct CG_ACTOR Stage {
  std::vector<float> forward(std::vector<float> x) { return x; }
  std::vector<float> backward(std::vector<float> grad) { return grad; }
};

CG_GRAPH void train_step(cg::GraphBuilder& g) {
  constexpr int stages = 4, microbatches = 8;
  g.cost<&Stage::forward>(1.0);
  g.cost<&Stage::backward>(2.0);
  std::vector<cg::Actor<Stage>> stage;
  for (int s = 0; s < stages; ++s)
    stage.push_back(g.actor<Stage>(cg::indexed_name("stage", s)));
  auto batch = g.input<std::vector<float>>();
  std::vector<cg::Value<std::vector<float>>> last;
  for (int mb = 0; mb < microbatches; ++mb) {
    auto v = batch;
    for (int s = 0; s < stages; ++s) {
      v = stage[s].bind<&Stage::forward>(v);
      if (s + 1 < stages)
        v = v.with_tensor_transport(cg::transport::nccl);
    }
    last.push_back(v);
  }
  for (int mb = 0; mb < microbatches; ++mb) {
    auto v = last[mb];
    for (int s = stages - 1; s >= 0; --s) {
      v = stage[s].bind<&Stage::backward>(v);
      if (s > 0)
        v = v.with_tensor_transport(cg::transport::nccl);
    }
    g.output(v);
  }
}

struct CG_ACTOR Worker {
  std::vector<float> send(int value) { return std::vector<float>(4, float(value)); }
  float recv_and_matmul(std::vector<float> t) { return t[0]; }
};

CG_GRAPH void overlap(cg::GraphBuilder& g) {
  auto in = g.input<int>();
  auto receiver = g.actor<Worker>("receiver");
  std::vector<cg::Value<std::vector<float>>> sent;
  for (int i = 0; i < 3; ++i)
    sent.push_back(g.actor<Worker>(cg::indexed_name("sender", i))
                       .bind<&Worker::send>(in)
                       .with_tensor_transport(cg::transport::nccl));
  for (int i = 0; i < 3; ++i)
    g.output(receiver.bind<&Worker::recv_and_matmul>(sent[i]));
}

struct CG_ACTOR Shard {
  std::vector<float> grad(int step) { return std::vector<float>(4, float(step)); }
};

CG_GRAPH void data_parallel(cg::GraphBuilder& g) {
  auto in = g.input<int>();
  auto a = g.actor<Shard>("a");
  auto b = g.actor<Shard>("b");
  auto sums = cg::allreduce(g, {a.bind<&Shard::grad>(in), b.bind<&Shard::grad>(in)},
                            cg::ReduceOp::sum);
  auto gathered = cg::allgather(g, {sums[1], sums[0]});
  g.output(gathered[0], gathered[1]);
}
)";

class CgcSchedule : public ::testing::Test {
protected:
  void SetUp() override {
    work_ = fs::temp_directory_path() / ("cgc-schedule-" + std::to_string(getpid()));
    fs::create_directories(work_);
    std::ofstream(work_ / "graphs.cg.cpp") << kSource;
  }
  void TearDown() override { fs::remove_all(work_); }

  /// Runs cgc with `options` into <work>/<out>; returns its exit code.
  int cgc(const std::string& options, const std::string& out = "out") {
    std::string command = "'" CG_CGC "' '" + (work_ / "graphs.cg.cpp").string() + "' -o '" +
                          (work_ / out).string() + "' " + options +
                          " -- -I'" CG_RUNTIME_INCLUDE "' > /dev/null 2> '" +
                          (work_ / "stderr.txt").string() + "'";
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string output(const std::string& name, const std::string& out = "out") {
    return readFile(work_ / out / name);
  }
  std::string errors() { return readFile(work_ / "stderr.txt"); }

  fs::path work_;
};

TEST_F(CgcSchedule, ThePipelineWrittenForwardThenBackwardIsScheduled1F1BByCost) {
  ASSERT_EQ(cgc("--emit=ir,schedule,schedule-json,dot --schedule=cost"), 0) << errors();
  nlohmann::json ir = nlohmann::json::parse(output("train_step.ir.json"));
  EXPECT_EQ(ir["tasks"][0]["cost"], 1.0);
  EXPECT_EQ(ir["tasks"][32]["cost"], 2.0);
  EXPECT_EQ(ir["values"][1]["transport"], "nccl");

  nlohmann::json schedule = nlohmann::json::parse(output("train_step.schedule.json"));
  EXPECT_EQ(schedule["options"]["order"], "cost");
  // Bubble (33 - 24) / 24 = (p - 1) / m, with at most p microbatches in
  // flight; stage 0 warms up with four forwards, then alternates.
  EXPECT_EQ(schedule["simulation"]["makespan"], 33.0);
  EXPECT_EQ(schedule["simulation"]["peakInFlight"], 4);
  std::string computes;
  for (const auto& op : schedule["actors"][0]["operations"])
    if (op["kind"] == "COMPUTE")
      computes += op["call"].get<std::string>().find("forward") != std::string::npos ? 'F' : 'B';
  EXPECT_EQ(computes, "FFFFBFBFBFBFBBBB");

  std::string text = output("train_step.schedule.txt");
  EXPECT_NE(text.find("# built with --schedule=cost\n"), std::string::npos) << text;
  EXPECT_NE(output("train_step.dot").find("digraph \"train_step\" {"), std::string::npos);
}

TEST_F(CgcSchedule, InBindOrderThePipelineKeepsEveryMicrobatchInFlight) {
  ASSERT_EQ(cgc("--emit=schedule-json"), 0) << errors();
  nlohmann::json schedule = nlohmann::json::parse(output("train_step.schedule.json"));
  EXPECT_EQ(schedule["options"]["order"], "bind");
  EXPECT_EQ(schedule["simulation"]["makespan"], 33.0);
  EXPECT_FALSE(fs::exists(work_ / "out" / "train_step.schedule.txt"));
}

TEST_F(CgcSchedule, OverlapHoistsTheReceiverReceivesAndMarksThem) {
  ASSERT_EQ(cgc("--emit=schedule --overlap-gpu-communication"), 0) << errors();
  std::string text = output("overlap.schedule.txt");
  EXPECT_NE(text.find("# actor receiver (Worker)\n"
                      "  1  READ     c1 (sender0.send)                         [g0]\n"
                      "  2  READ     c2 (sender1.send)                         [g1]  [moved]\n"
                      "  3  READ     c3 (sender2.send)                         [g2]  [moved]\n"
                      "  4  COMPUTE  receiver.recv_and_matmul#1(sender0.send)  graphs.cg.cpp:52\n"),
            std::string::npos)
      << text;
}

TEST_F(CgcSchedule, CollectivesAreGroupsOfOneRankPerActor) {
  ASSERT_EQ(cgc("--emit=schedule"), 0) << errors();
  std::string text = output("data_parallel.schedule.txt");
  EXPECT_NE(text.find("  g0  allreduce sum #0  a 3 COMPUTE, b 3 COMPUTE\n"
                      "  g1  allgather #1      b 4 COMPUTE, a 4 COMPUTE\n"),
            std::string::npos)
      << text;
}

TEST_F(CgcSchedule, ACostProfileOverridesTheAnnotations) {
  std::ofstream(work_ / "costs.json")
      << R"({"format": "cg-costs", "version": 1, "costs": {"Stage::backward": 4, "stage0.forward": 0.5}})";
  ASSERT_EQ(cgc("--emit=ir --costs='" + (work_ / "costs.json").string() + "'"), 0) << errors();
  nlohmann::json ir = nlohmann::json::parse(output("train_step.ir.json"));
  EXPECT_EQ(ir["tasks"][0]["cost"], 0.5); // stage0.forward
  EXPECT_EQ(ir["tasks"][1]["cost"], 1.0); // stage1.forward: the annotation
  EXPECT_EQ(ir["tasks"][32]["cost"], 4.0);
}

TEST_F(CgcSchedule, AMalformedCostProfileIsACommandLineError) {
  std::ofstream(work_ / "costs.json")
      << R"({"format": "cg-costs", "version": 1, "costs": {"x": 1}})";
  EXPECT_EQ(cgc("--emit=ir --costs='" + (work_ / "costs.json").string() + "'"), 2);
  EXPECT_NE(errors().find("invalid cost profile: costs.x: expected \"Class::method\" or "
                          "\"actor.method\""),
            std::string::npos)
      << errors();
}

TEST_F(CgcSchedule, TheArtefactsAreTheSameBytesEveryRun) {
  const std::string options = "--emit=schedule,schedule-json,dot --schedule=cost "
                              "--overlap-gpu-communication";
  ASSERT_EQ(cgc(options, "first"), 0) << errors();
  ASSERT_EQ(cgc(options, "second"), 0) << errors();
  for (const char* name : {"train_step.schedule.txt", "train_step.schedule.json", "train_step.dot",
                           "overlap.dot", "data_parallel.schedule.json"})
    EXPECT_EQ(output(name, "first"), output(name, "second")) << name;
}

} // namespace
