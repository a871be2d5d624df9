// Valid programs: declarations, formats, statements and targets come out as
// the IR a C++ builder program would construct by hand.
#include <gtest/gtest.h>

#include "frontend_test_support.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/index_printer.h"

namespace tcc::frontend {
namespace {

using ir::Datatype;
using ir::Dimension;
using ir::Format;
using ir::IndexVar;
using ir::LevelFormat;

const ir::TensorVar& tensorOf(const Program& program, const std::string& name) {
  const ir::TensorVar* tensor = program.findTensor(name);
  if (!tensor) throw std::runtime_error("no tensor " + name);
  return *tensor;
}

TEST(Parse, DeclarationsKeepShapeFormatAndType) {
  Program program = parseProgram(R"(
    # comment line
    tensor A(I, J) : csr            # trailing comment
    tensor B(I, 7) : csc of float32
    tensor x(I) : sparse of int32
    tensor a : dense of float16
    tensor C(I, J, K)
    tensor D(I, J) : {compressed(nonunique), singleton}
    tensor E(I, J) : {dense, compressed} order (1,0) of int64
    tensor F(4, 8) : nm(2,4,1)
    tensor G(I, J, K) : {dense, nm(1, 2, 4), compressed(unordered, nonunique)}
  )", "decl.tc");
  ASSERT_EQ(program.tensors.size(), 9u);
  EXPECT_EQ(program.tensors[0].name(), "A");
  EXPECT_EQ(tensorOf(program, "A").format(), Format::csr());
  EXPECT_EQ(tensorOf(program, "A").shape(), (std::vector<Dimension>{"I", "J"}));
  EXPECT_EQ(tensorOf(program, "A").datatype(), Datatype::Float64);
  EXPECT_EQ(tensorOf(program, "B").format(), Format::csc());
  EXPECT_EQ(tensorOf(program, "B").shape(), (std::vector<Dimension>{"I", 7}));
  EXPECT_EQ(tensorOf(program, "B").datatype(), Datatype::Float32);
  EXPECT_EQ(tensorOf(program, "x").format(), Format::sparseVector());
  EXPECT_EQ(tensorOf(program, "x").datatype(), Datatype::Int32);
  EXPECT_TRUE(tensorOf(program, "a").isScalar());
  EXPECT_EQ(tensorOf(program, "a").datatype(), Datatype::Float16);
  EXPECT_EQ(tensorOf(program, "C").format(), Format::denseOfOrder(3));
  EXPECT_EQ(tensorOf(program, "D").format(),
            Format({LevelFormat::compressed(false), LevelFormat::singleton()}));
  EXPECT_EQ(tensorOf(program, "E").format(),
            Format({LevelFormat::dense(), LevelFormat::compressed()}, {1, 0}));
  EXPECT_EQ(tensorOf(program, "F").format(), Format({LevelFormat::dense(), LevelFormat::nm(2, 4, 1)}));
  EXPECT_EQ(tensorOf(program, "G").format(),
            Format({LevelFormat::dense(), LevelFormat::nm(1, 2, 4),
                    LevelFormat::compressed(/*unique=*/false, /*ordered=*/false)}));
  EXPECT_EQ(program.findTensor("nope"), nullptr);
  EXPECT_TRUE(program.statements.empty());
  EXPECT_FALSE(program.target.has_value());
}

TEST(Parse, UserNamedFormats) {
  Program program = parseProgram(R"(
    format blocked = {dense, dense, compressed} order (2,0,1)
    format alias = csr
    format again = blocked
    tensor T(I, J, K) : again
    tensor M(I, J) : alias
    tensor V(I) : dense
  )", "formats.tc");
  EXPECT_EQ(tensorOf(program, "T").format(),
            Format({LevelFormat::dense(), LevelFormat::dense(), LevelFormat::compressed()}, {2, 0, 1}));
  EXPECT_EQ(tensorOf(program, "M").format(), Format::csr());
}

// The statement parsed from text prints exactly like the same statement
// built with the C++ builder over the program's tensors.
void expectStatement(const Program& program, size_t index, const ir::IndexStmt& expected) {
  ASSERT_LT(index, program.statements.size());
  EXPECT_EQ(ir::toString(program.statements[index]), ir::toString(expected));
}

TEST(Parse, EinsumStatementMatchesBuilder) {
  Program program = parseProgram(R"(
    tensor A(I, J) : csr
    tensor B(I, K) : csc
    tensor C(K, J) : csr
    A(i,j) = B(i,k) * C(k,j)
  )", "spgemm.tc");
  IndexVar i("i"), j("j"), k("k");
  auto A = tensorOf(program, "A"), B = tensorOf(program, "B"), C = tensorOf(program, "C");
  expectStatement(program, 0, A(i, j) = B(i, k) * C(k, j));
  const auto* assignment = program.statements[0].as<ir::AssignmentNode>();
  ASSERT_NE(assignment, nullptr);
  EXPECT_FALSE(assignment->accumulate);
  EXPECT_EQ(assignment->lhs.tensor(), A);
}

TEST(Parse, PrecedenceAndAssociativity) {
  Program program = parseProgram(R"(
    tensor a : dense
    tensor b : dense
    tensor c : dense
    tensor d : dense
    a = b - c - d
    a = b - (c - d)
    a = b + c * d
    a = (b + c) * d
    a = b / c / d
    a = -b * c
    a = -(b * c)
    a += b * -c
  )", "precedence.tc");
  auto a = tensorOf(program, "a"), b = tensorOf(program, "b"), c = tensorOf(program, "c"),
       d = tensorOf(program, "d");
  expectStatement(program, 0, a() = (b() - c()) - d());
  expectStatement(program, 1, a() = b() - (c() - d()));
  expectStatement(program, 2, a() = b() + c() * d());
  expectStatement(program, 3, a() = (b() + c()) * d());
  expectStatement(program, 4, a() = (b() / c()) / d());
  expectStatement(program, 5, a() = (-b()) * c());
  expectStatement(program, 6, a() = -(b() * c()));
  expectStatement(program, 7, a() += b() * (-c()));
  EXPECT_TRUE(program.statements[7].as<ir::AssignmentNode>()->accumulate);
  // Precedence must change the tree, not only the text.
  EXPECT_NE(ir::toString(program.statements[0]), ir::toString(program.statements[1]));
  EXPECT_NE(ir::toString(program.statements[2]), ir::toString(program.statements[3]));
}

TEST(Parse, SumLiteralsAndBuiltins) {
  Program program = parseProgram(R"(
    tensor y(N) : dense of float32
    tensor A(N, M) : csr of float32
    tensor x(M) : dense of float32
    tensor P(N, N) : csr
    tensor p : dense
    y(i) = sum(j, A(i,j) * x(j)) + 0.5 * y(i)
    y(i) = 2 * y(i)
    p = perm(P)
    y(i) = abs(y(i)) + max(y(i), 1e-3)
  )", "sum.tc");
  IndexVar i("i"), j("j");
  auto y = tensorOf(program, "y"), A = tensorOf(program, "A"), x = tensorOf(program, "x"),
       P = tensorOf(program, "P"), p = tensorOf(program, "p");
  expectStatement(program, 0,
                  y(i) = ir::sum(j, A(i, j) * x(j)) + ir::LiteralNode::make(0.5, Datatype::Float32) * y(i));
  // Float literals take a float output's type; integer literals stay integers.
  const auto* first = program.statements[0].as<ir::AssignmentNode>();
  EXPECT_EQ(first->rhs.type(), Datatype::Float32);
  const auto* second = program.statements[1].as<ir::AssignmentNode>();
  const auto* product = second->rhs.as<ir::MulNode>();
  ASSERT_NE(product, nullptr);
  ASSERT_TRUE(product->a.isa<ir::LiteralNode>());
  EXPECT_EQ(product->a.as<ir::LiteralNode>()->intValue, 2);
  expectStatement(program, 2, p() = ir::perm(P));
  expectStatement(program, 3,
                  y(i) = ir::call("abs", {ir::IndexExpr(y(i))}) +
                         ir::call("max", {ir::IndexExpr(y(i)),
                                          ir::LiteralNode::make(1e-3, Datatype::Float32)}));
}

TEST(Parse, LaterStatementReadsEarlierOutput) {
  Program program = parseProgram(
      "tensor T(I, J) : dcsr\ntensor A(I, J) : csr\ntensor B(I, J) : csr; tensor C(I, J)\n"
      "T(i,j) = A(i,j) + B(i,j)\n"
      "C(i,j) = T(i,j) *\n   2\n",
      "chain.tc");
  ASSERT_EQ(program.statements.size(), 2u);
  IndexVar i("i"), j("j");
  auto T = tensorOf(program, "T"), A = tensorOf(program, "A"), B = tensorOf(program, "B"),
       C = tensorOf(program, "C");
  expectStatement(program, 0, T(i, j) = A(i, j) + B(i, j));
  expectStatement(program, 1, C(i, j) = T(i, j) * 2);
  // Both statements share the index variables, by name.
  const auto* lhs0 = program.statements[0].as<ir::AssignmentNode>();
  const auto* lhs1 = program.statements[1].as<ir::AssignmentNode>();
  EXPECT_EQ(lhs0->lhs.indices(), lhs1->lhs.indices());
}

TEST(Parse, Targets) {
  Program cpu = parseProgram("tensor a : dense\ntarget cpu\n", "t.tc");
  ASSERT_TRUE(cpu.target.has_value());
  EXPECT_EQ(cpu.target->target, Target::Cpu);
  Program cuda = parseProgram("target cuda(sm_90)\n", "t.tc");
  ASSERT_TRUE(cuda.target.has_value());
  EXPECT_EQ(cuda.target->target, Target::Cuda);
  EXPECT_EQ(cuda.target->sm, "sm_90");
  EXPECT_EQ(cuda.target->location, (SourceLocation{"t.tc", 1, 1}));
  Program plain = parseProgram("target cuda", "t.tc");
  EXPECT_EQ(plain.target->sm, "");
}

TEST(Parse, FloatingPointModeLine) {
  Program fast = parseProgram("tensor a : dense\nfp   fast  # comment\n", "t.tc");
  ASSERT_TRUE(fast.floatingPoint.has_value());
  EXPECT_EQ(fast.floatingPoint->mode, FloatingPointMode::Fast);
  EXPECT_EQ(fast.floatingPoint->location, (SourceLocation{"t.tc", 2, 6}));
  EXPECT_EQ(parseProgram("fp strict", "t.tc").floatingPoint->mode, FloatingPointMode::Strict);
  EXPECT_FALSE(parseProgram("tensor a : dense\n", "t.tc").floatingPoint.has_value());
  // `fp` is a keyword only at the start of an fp line: a tensor may be named fp.
  Program named = parseProgram("tensor fp(I) : dense\ntensor x(I) : dense\nfp(i) = x(i)\n", "t.tc");
  EXPECT_EQ(named.statements.size(), 1u);
  EXPECT_FALSE(named.floatingPoint.has_value());
}

TEST(Parse, EmptyAndCommentOnlyFiles) {
  EXPECT_TRUE(parseProgram("", "empty.tc").tensors.empty());
  EXPECT_TRUE(parseProgram("# nothing here\n\n   # still nothing", "c.tc").statements.empty());
  EXPECT_EQ(parseProgram("", "empty.tc").sourcePath, "empty.tc");
}

TEST(Parse, FileEntryPoint) {
  Program program = parseProgramFile(std::string(TCC_FUZZ_CORPUS_DIR) + "/spgemm.tc");
  EXPECT_EQ(program.tensors.size(), 3u);
  EXPECT_EQ(program.statements.size(), 1u);
  EXPECT_EQ(program.schedule.size(), 2u);
  EXPECT_EQ(program.sourcePath, std::string(TCC_FUZZ_CORPUS_DIR) + "/spgemm.tc");

  try {
    parseProgramFile("no/such/file.tc");
    FAIL() << "expected an error";
  } catch (const DiagnosticError& error) {
    ASSERT_EQ(error.diagnostics().size(), 1u);
    EXPECT_EQ(error.diagnostics()[0].format(), "no/such/file.tc: error: cannot read file\n");
  }
}

}  // namespace
}  // namespace tcc::frontend
