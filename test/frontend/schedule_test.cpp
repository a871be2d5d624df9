// The schedule block: every command of the table parses into the schedule
// AST, and each way a command can be wrong is reported.
#include <gtest/gtest.h>

#include <set>

#include "frontend_test_support.h"
#include "tcc/frontend/printer.h"
#include "tcc/ir/index_printer.h"

namespace tcc::frontend {
namespace {

using testing::onlyErrorOf;

const char* const kProgram =
    "tensor A(I, R) : dense\n"
    "tensor B(I, K, L) : csf\n"
    "tensor C(K, R) : dense\n"
    "tensor D(L, R) : dense\n"
    "A(i,r) = B(i,k,l) * C(k,r) * D(l,r)\n";

Program withSchedule(const std::string& block) {
  return parseProgram(std::string(kProgram) + "schedule {\n" + block + "\n}\n", "s.tc");
}

std::string scheduleError(const std::string& block) {
  return onlyErrorOf(std::string(kProgram) + "schedule {\n" + block + "\n}\n");
}

TEST(Schedule, EveryCommandOfTheTableParses) {
  // One use of each command, in table order; later commands use the
  // variables earlier ones introduce.
  const std::vector<std::string> uses = {
      "reorder(k, i, l, r)",
      "split(i, i0, i1, 32)",
      "divide(l, l0, l1, 4)",
      "fuse(i0, i1, f)",
      "pos(k, kp, B(i,k,l))",
      "precompute(B(i,k,l) * C(k,r), r, rw)",
      "parallelize(f, CPUThread, NoRaces)",
      "bound(l0, lb, 100, MaxExact)",
      "unroll(l1, 4)",
      "sparse_workspace(r, policy = hash, pipeline = on, double_buffer = off)",
      "dense_workspace(r)",
      "gpu_block(f)",
      "gpu_warp(kp, Atomics)",
      "gpu_thread(lb)",
      "tensorcore(m = 16, n = 8, k = 16)",
      "assemble(A, Insert, true)",
  };
  std::string block;
  for (const std::string& use : uses) block += "  " + use + "\n";
  Program program = withSchedule(block);
  ASSERT_EQ(program.schedule.size(), uses.size());
  std::set<std::string> covered;
  for (size_t index = 0; index < uses.size(); ++index) {
    EXPECT_EQ(printScheduleCommand(program.schedule[index]), uses[index]);
    EXPECT_EQ(program.schedule[index].location.line, static_cast<int>(7 + index));
    EXPECT_EQ(program.schedule[index].location.column, 3);
    covered.insert(program.schedule[index].name);
  }
  for (const ScheduleCommandSpec& spec : scheduleCommandTable())
    EXPECT_TRUE(covered.count(spec.name)) << spec.name << " has no test";
}

TEST(Schedule, ArgumentKinds) {
  Program program = withSchedule(
      "split(i, i0, i1, 32)  parallelize(i0, CPUThread, NoRaces); "
      "sparse_workspace(policy = bucket), pos(k, kp, B(i,k,l)) tensorcore(m = 16)");
  ASSERT_EQ(program.schedule.size(), 5u);
  const ScheduleCommand& split = program.schedule[0];
  ASSERT_EQ(split.arguments.size(), 4u);
  EXPECT_EQ(split.arguments[0].kind, ScheduleArgument::Kind::Identifier);
  EXPECT_EQ(split.arguments[0].identifier, "i");
  EXPECT_EQ(split.arguments[3].kind, ScheduleArgument::Kind::Integer);
  EXPECT_EQ(split.arguments[3].integer, 32);
  EXPECT_EQ(split.arguments[3].location, (SourceLocation{"s.tc", 7, 18}));
  EXPECT_EQ(program.schedule[1].arguments[1].identifier, "CPUThread");
  const ScheduleArgument& policy = program.schedule[2].arguments[0];
  EXPECT_EQ(policy.kind, ScheduleArgument::Kind::Keyword);
  EXPECT_EQ(policy.keyword, "policy");
  EXPECT_EQ(policy.identifier, "bucket");
  EXPECT_FALSE(policy.valueIsInteger);
  const ScheduleArgument& access = program.schedule[3].arguments[2];
  EXPECT_EQ(access.kind, ScheduleArgument::Kind::Expression);
  ASSERT_TRUE(access.expression.has_value());
  EXPECT_EQ(ir::toString(*access.expression), "B(i,k,l)");
  // The access reads the statement's own tensor and index variables.
  const auto* node = access.expression->as<ir::AccessNode>();
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->tensor, *program.findTensor("B"));
  const auto* statement = program.statements[0].as<ir::AssignmentNode>();
  EXPECT_EQ(node->indices[0], statement->lhs.indices()[0]);
  const ScheduleArgument& m = program.schedule[4].arguments[0];
  EXPECT_TRUE(m.valueIsInteger);
  EXPECT_EQ(m.integer, 16);
}

TEST(ScheduleError, UnknownCommand) {
  EXPECT_EQ(scheduleError("  reordr(k, i)"),
            "7:3: unknown schedule command 'reordr'; did you mean 'reorder'?");
  EXPECT_EQ(scheduleError("  vectorize(i)"), "7:3: unknown schedule command 'vectorize'");
}

TEST(ScheduleError, WrongArity) {
  EXPECT_EQ(scheduleError("  split(i, i0, 32)"),
            "7:3: 'split' takes 4 arguments, but 3 were given; usage: split(index, outer, inner, "
            "factor)");
  EXPECT_EQ(scheduleError("  reorder(i)"),
            "7:3: 'reorder' takes at least 2 arguments, but 1 was given; usage: reorder(index, "
            "index, ...)");
  EXPECT_EQ(scheduleError("  gpu_warp(i, Atomics, NoRaces)"),
            "7:3: 'gpu_warp' takes 1 to 2 arguments, but 3 were given; usage: gpu_warp(index, "
            "[race strategy])");
}

TEST(ScheduleError, WrongArgumentKind) {
  EXPECT_EQ(scheduleError("  split(i, i0, i1, x)"),
            "7:20: the fourth argument of 'split' (factor) must be a positive integer");
  EXPECT_EQ(scheduleError("  unroll(i, 0)"),
            "7:13: the second argument of 'unroll' (factor) must be a positive integer");
  EXPECT_EQ(scheduleError("  reorder(i, 3)"),
            "7:14: the second argument of 'reorder' (index) must be an index variable");
  EXPECT_EQ(scheduleError("  pos(k, kp, B)"),
            "7:14: the third argument of 'pos' (access) must be a tensor access like B(i,j)");
  EXPECT_EQ(scheduleError("  assemble(Q, Insert)"), "7:12: unknown tensor 'Q' in 'assemble'");
}

TEST(ScheduleError, UnknownIndexVariable) {
  EXPECT_EQ(scheduleError("  reorder(q, i)"), "7:11: unknown index variable 'q' in 'reorder'");
  EXPECT_EQ(scheduleError("  pos(k, kp, B(i,q,l))"), "7:18: unknown index variable 'q'");
}

TEST(ScheduleError, NewIndexVariableAlreadyExists) {
  EXPECT_EQ(scheduleError("  split(i, k, i1, 8)"),
            "7:12: index variable 'k' already exists; the second argument of 'split' (outer "
            "index) must be a new name");
}

TEST(ScheduleError, BadChoice) {
  EXPECT_EQ(scheduleError("  parallelize(i, CPUThrd, NoRaces)"),
            "7:18: the second argument of 'parallelize' (parallel unit) must be NotParallel, "
            "DefaultUnit, CPUThread, CPUVector, GPUBlock, GPUWarp or GPUThread");
}

TEST(ScheduleError, Keywords) {
  EXPECT_EQ(scheduleError("  sparse_workspace(polcy = hash)"),
            "7:20: 'sparse_workspace' has no keyword 'polcy'; expected policy, pipeline, "
            "double_buffer or capacity");
  EXPECT_EQ(scheduleError("  sparse_workspace(pipeline = maybe)"),
            "7:31: keyword 'pipeline' takes on or off");
  EXPECT_EQ(scheduleError("  tensorcore(m = big)"), "7:18: keyword 'm' takes an integer");
  EXPECT_EQ(scheduleError("  sparse_workspace(policy = hash, policy = bucket)"),
            "7:35: keyword 'policy' given twice");
  EXPECT_EQ(scheduleError("  sparse_workspace(policy = hash, r)"),
            "7:35: positional argument after a keyword argument in 'sparse_workspace'");
}

}  // namespace
}  // namespace tcc::frontend
