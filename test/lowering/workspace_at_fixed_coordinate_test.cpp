// Where-statements whose workspace is indexed by a variable that a loop
// around the where fixes: the producer writes the one entry at that
// coordinate (with no loop of its own over the index, or with loops over
// other variables only), and the consumer reads it there. The loop around
// iterates the workspace read itself, so its cases must keep the producer's
// operands (they once dropped them, and the producer stored 0s).
//
// tcc's schedule commands refuse to build such a where (a workspace over a
// fixed index is pointless there: see multiple_precomputes_test.cpp), so
// these are built with the C++ builder and lowered directly, as a program
// embedding the lowering may; each kernel is compared with the dense
// reference evaluator's value of the plain statement it computes.
#include <gtest/gtest.h>

#include "kernel_check.h"
#include "tcc/ir/index_printer.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/lower.h"

namespace tcc::test {
namespace {

using ir::IndexStmt;
using ir::IndexVar;
using ir::TensorVar;

IndexVar i("i"), j("j"), k("k"), jw("jw");

TensorVar workspace(const std::string& name, std::vector<ir::Dimension> shape) {
  const int order = static_cast<int>(shape.size());
  return TensorVar(name, std::move(shape), ir::Format::denseOfOrder(order));
}

struct ConcreteCase {
  std::string name;
  IndexStmt concrete;                       // the CIN lowered
  IndexStmt statement;                      // what it computes, for the reference
  std::vector<TensorVar> parameters;        // output first
  std::map<std::string, rt::Coo> inputs;    // by tensor name
  std::vector<int32_t> outputDims;
};

void PrintTo(const ConcreteCase& c, std::ostream* out) { *out << c.name; }

// Lowers, compiles and runs `c.concrete`; its output against the reference's.
void expectConcreteMatchesReference(const ConcreteCase& c) {
  SCOPED_TRACE(ir::toString(c.concrete));
  lowering::LowerOptions options;
  options.functionName = "fixed_entry_kernel";
  ir::imp::Function function = lowering::lower(c.concrete, c.parameters, options);
  std::string cpp = lowering::makeCodeGenerator(lowering::TargetKind::Cpu)->emit({function});
  jit::CompileOptions jitOptions;
  jitOptions.backend = CompileOptions{}.backend;
  jitOptions.openmp = function.usesOpenMP;
  auto module = jit::compile(cpp, jitOptions);
  auto entry = module->function<int32_t (*)(tcc_tensor**)>(function.name);

  const TensorVar& output = c.parameters.front();
  Tensor result(c.outputDims, toRuntimeFormat(output.format()), toRuntimeType(output.datatype()));
  std::vector<Tensor> inputs;
  std::map<std::string, DenseArray> dense;
  for (size_t p = 1; p < c.parameters.size(); ++p) {
    const TensorVar& input = c.parameters[p];
    const rt::Coo& coo = c.inputs.at(input.name());
    inputs.push_back(rt::pack(coo, toRuntimeFormat(input.format()), toRuntimeType(input.datatype())));
    DenseArray array;
    array.dims.assign(coo.dims.begin(), coo.dims.end());
    array.values = rt::toDense(coo);
    dense.emplace(input.name(), std::move(array));
  }
  std::vector<tcc_tensor> views{result.abiView()};
  for (const auto& input : inputs) views.push_back(input.abiView());
  std::vector<tcc_tensor*> pointers;
  for (auto& view : views) pointers.push_back(&view);
  ASSERT_EQ(entry(pointers.data()), 0);

  auto expected = evaluate({c.statement}, dense);
  const DenseArray& reference = expected.at(output.name());
  bool allZero = std::all_of(reference.values.begin(), reference.values.end(), [](double v) { return v == 0; });
  ASSERT_FALSE(allZero) << "the reference is all zeros: the case cannot tell a dropped producer";
  expectOutputsMatch({{output.name(), result}}, expected, 1e-10);
  if (::testing::Test::HasFailure()) ADD_FAILURE() << "generated code:\n" << cpp;
}

std::vector<ConcreteCase> cases() {
  std::vector<ConcreteCase> all;
  const int32_t n = 37, m = 29, l = 23;

  // Y(i,j) = A(i) * B(j), A(i) into a workspace over i inside the loop over i:
  // a producer with no loop at all.
  for (bool sparse : {false, true}) {
    TensorVar Y("Y", {"I", "J"}, ir::Format::denseOfOrder(2));
    TensorVar A("A", {"I"}, sparse ? ir::Format::sparseVector() : ir::Format::denseOfOrder(1));
    TensorVar B("B", {"J"}, sparse ? ir::Format::sparseVector() : ir::Format::denseOfOrder(1));
    TensorVar w = workspace("w", {"I"});
    all.push_back({sparse ? "OuterProductNoProducerLoopSparse" : "OuterProductNoProducerLoopDense",
                   forall(i, where(forall(j, Y(i, j) = w(i) * B(j)), w(i) = A(i))),
                   Y(i, j) = A(i) * B(j),
                   {Y, A, B},
                   {{"A", randomSparse({n}, sparse ? 0.4 : 1.0, 1)}, {"B", randomSparse({m}, sparse ? 0.4 : 1.0, 2)}},
                   {n, m}});
  }
  {
    // The shape the precompute placer built for seed 7242446 of the
    // differential campaign (precompute(B(j), j, jw), then a workspace over
    // i among the loops that read the first): the one-entry workspace's
    // where inside the loop over j, i fixed around both.
    TensorVar Y("Y", {"I", "J"}, ir::Format::denseOfOrder(2));
    TensorVar A("A", {"I"}, ir::Format::sparseVector());
    TensorVar B("B", {"J"}, ir::Format::denseOfOrder(1));
    TensorVar w = workspace("w", {"J"}), v = workspace("v", {"I"});
    all.push_back({"NestedAmongTheLoopsThatReadAnother",
                   forall(i, where(forall(j, where(Y(i, j) = v(i), v(i) = A(i) * w(j))), forall(jw, w(jw) = B(jw)))),
                   Y(i, j) = A(i) * B(j),
                   {Y, A, B},
                   {{"A", randomSparse({n}, 0.5, 3)}, {"B", randomDense({m}, 4)}},
                   {n, m}});
  }
  {
    // A sum of two sparse operands in the producer: the loop over i visits
    // the union of their coordinates, each case with the one present.
    TensorVar Y("Y", {"I", "J"}, ir::Format::denseOfOrder(2));
    TensorVar A("A", {"I"}, ir::Format::sparseVector());
    TensorVar C("C", {"I"}, ir::Format::sparseVector());
    TensorVar B("B", {"J"}, ir::Format::denseOfOrder(1));
    TensorVar w = workspace("w", {"I"});
    all.push_back({"SumOfSparseOperandsInTheProducer",
                   forall(i, where(forall(j, Y(i, j) = w(i) * B(j)), w(i) = A(i) - C(i))),
                   Y(i, j) = (A(i) - C(i)) * B(j),
                   {Y, A, C, B},
                   {{"A", randomSparse({n}, 0.3, 5)}, {"C", randomSparse({n}, 0.3, 6)}, {"B", randomDense({m}, 7)}},
                   {n, m}});
  }
  {
    // The producer sums a row of D times x over k (loops of its own, none
    // over i) into the entry at i; the consumer adds a sparse term.
    TensorVar D("D", {"I", "K"}, ir::Format::csr());
    TensorVar x("x", {"K"}, ir::Format::denseOfOrder(1));
    TensorVar B("B", {"J"}, ir::Format::denseOfOrder(1));
    TensorVar C("C", {"I", "J"}, ir::Format::csr());
    TensorVar Yd("Y", {"I", "J"}, ir::Format::denseOfOrder(2));
    TensorVar w = workspace("w", {"I"});
    rt::Coo west = realMatrix("west0497.mtx");
    const int32_t rows = west.dims[0];
    all.push_back({"SumOfProductsRealRows",
                   forall(i, where(forall(j, Yd(i, j) = w(i) * B(j) + C(i, j)), forall(k, w(i) += D(i, k) * x(k)))),
                   Yd(i, j) = ir::sum(k, D(i, k) * x(k)) * B(j) + C(i, j),
                   {Yd, D, x, B, C},
                   {{"D", west}, {"x", randomDense({rows}, 8)}, {"B", randomDense({l}, 9)},
                    {"C", randomSparse({rows, l}, 0.1, 10)}},
                   {rows, l}});
  }
  {
    // A where inside a reduction: the workspace over j is filled inside the
    // summed loop over j, one entry at a time.
    TensorVar y("y", {"I"}, ir::Format::denseOfOrder(1));
    TensorVar A("A", {"I", "J"}, ir::Format::csr());
    TensorVar C("C", {"I", "J"}, ir::Format::csr());
    TensorVar B("B", {"J"}, ir::Format::denseOfOrder(1));
    TensorVar w = workspace("w", {"J"});
    all.push_back({"WhereInsideAReductionRandom",
                   forall(i, forall(j, where(y(i) += A(i, j) * w(j), w(j) = B(j) * C(i, j)))),
                   y(i) = A(i, j) * B(j) * C(i, j),
                   {y, A, C, B},
                   {{"A", randomSparse({n, m}, 0.4, 11)}, {"C", randomSparse({n, m}, 0.4, 12)}, {"B", randomDense({m}, 13)}},
                   {n}});
    rt::Coo bcsstk = realMatrix("bcsstk01.mtx");
    const int32_t b = bcsstk.dims[0];
    all.push_back({"WhereInsideAReductionReal",
                   forall(i, forall(j, where(y(i) += A(i, j) * w(j), w(j) = B(j) * C(i, j)))),
                   y(i) = A(i, j) * B(j) * C(i, j),
                   {y, A, C, B},
                   {{"A", bcsstk}, {"C", transposed(bcsstk)}, {"B", randomDense({b}, 14)}},
                   {b}});
  }
  {
    // A scalar output summed across the where.
    TensorVar s("s", std::vector<ir::Dimension>{}, ir::Format::denseOfOrder(0));
    TensorVar A("A", {"I"}, ir::Format::sparseVector());
    TensorVar B("B", {"I"}, ir::Format::sparseVector());
    TensorVar w = workspace("w", {"I"});
    all.push_back({"ScalarOutput",
                   forall(i, where(s() += w(i) * B(i), w(i) = A(i) * A(i))),
                   s() = A(i) * A(i) * B(i),
                   {s, A, B},
                   {{"A", randomSparse({n * 3}, 0.5, 15)}, {"B", randomSparse({n * 3}, 0.5, 16)}},
                   {}});
  }
  {
    // Nested: the inner where's one-entry workspace is read by the outer
    // where's producer, both at the fixed i.
    TensorVar Y("Y", {"I", "J"}, ir::Format::denseOfOrder(2));
    TensorVar A("A", {"I"}, ir::Format::sparseVector());
    TensorVar C("C", {"I"}, ir::Format::denseOfOrder(1));
    TensorVar B("B", {"J"}, ir::Format::denseOfOrder(1));
    TensorVar u = workspace("u", {"I"}), w = workspace("w", {"I"});
    all.push_back({"NestedOneEntryWorkspaces",
                   forall(i, where(forall(j, Y(i, j) = w(i) * B(j)), where(w(i) = u(i) * C(i), u(i) = A(i) * A(i)))),
                   Y(i, j) = A(i) * A(i) * C(i) * B(j),
                   {Y, A, C, B},
                   {{"A", randomSparse({n}, 0.5, 17)}, {"C", randomDense({n}, 18)}, {"B", randomDense({m}, 19)}},
                   {n, m}});
  }
  {
    // Under a parallel loop: each thread's copy of the workspace.
    ir::ForallAttributes threads;
    threads.parallelUnit = ir::ParallelUnit::CPUThread;
    threads.outputRaceStrategy = ir::OutputRaceStrategy::NoRaces;
    TensorVar Y("Y", {"I", "J"}, ir::Format::denseOfOrder(2));
    TensorVar A("A", {"I", "K"}, ir::Format::csr());
    TensorVar x("x", {"K"}, ir::Format::denseOfOrder(1));
    TensorVar B("B", {"J"}, ir::Format::denseOfOrder(1));
    TensorVar w = workspace("w", {"I"});
    rt::Coo ash = realMatrix("ash219.mtx");
    all.push_back({"ParallelRowsReal",
                   forall(i, where(forall(j, Y(i, j) = w(i) * B(j)), forall(k, w(i) += A(i, k) * x(k))), threads),
                   Y(i, j) = ir::sum(k, A(i, k) * x(k)) * B(j),
                   {Y, A, x, B},
                   {{"A", ash}, {"x", randomDense({ash.dims[1]}, 20)}, {"B", randomDense({l}, 21)}},
                   {ash.dims[0], l}});
  }
  {
    // A where whose consumer never reads what its producer fills: the
    // producer's result is unused, and may be dropped.
    TensorVar Y("Y", {"I"}, ir::Format::denseOfOrder(1));
    TensorVar A("A", {"I"}, ir::Format::sparseVector());
    TensorVar B("B", {"I"}, ir::Format::denseOfOrder(1));
    TensorVar w = workspace("w", {"I"});
    all.push_back({"UnreadWorkspace",
                   forall(i, where(Y(i) = B(i) * B(i), w(i) = A(i))),
                   Y(i) = B(i) * B(i),
                   {Y, A, B},
                   {{"A", randomSparse({n}, 0.5, 22)}, {"B", randomDense({n}, 23)}},
                   {n}});
  }
  return all;
}

class WorkspaceAtFixedCoordinate : public ::testing::TestWithParam<ConcreteCase> {};

TEST_P(WorkspaceAtFixedCoordinate, MatchesReference) { expectConcreteMatchesReference(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Concrete, WorkspaceAtFixedCoordinate, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// The one entry is reset after the consumer reads it, not the whole
// workspace at each iteration of the loops around.
TEST(WorkspaceAtFixedCoordinate, ResetsTheOneEntry) {
  TensorVar Y("Y", {"I", "J"}, ir::Format::denseOfOrder(2));
  TensorVar A("A", {"I"}, ir::Format::denseOfOrder(1));
  TensorVar B("B", {"J"}, ir::Format::denseOfOrder(1));
  TensorVar w = workspace("w", {"I"});
  ir::imp::Function function =
      lowering::lower(forall(i, where(forall(j, Y(i, j) = w(i) * B(j)), w(i) = A(i))), {Y, A, B}, {});
  std::string cpp = lowering::makeCodeGenerator(lowering::TargetKind::Cpu)->emit({function});
  EXPECT_FALSE(contains(cpp, "memset(w_vals")) << cpp;
  EXPECT_TRUE(contains(cpp, "w_vals[(int64_t)(i)] = 0.0;")) << cpp;
}

// Cases of the differential campaign (seeds 1246, 1257 and 1273 with
// --several-precomputes, minimized) where a case of an outer loop drops the
// term that reads a sum's temporary: the sum's producer is then unread, and
// the loops below leave its operands out of every case without refusing.
TEST(WorkspaceAtFixedCoordinate, ASumWhoseTermIsAbsentInACaseIsLeftOut) {
  expectProgramMatchesReference("tensor Y(I, J) : dense\ntensor A(I) : sparse\ntensor B(J, L) : dense\n"
                                "Y(i,j) = sum(l, B(j,l)) * A(i) - 0.5\n",
                                {{"A", randomSparse({17}, 0.4, 24)}, {"B", randomDense({13, 11}, 25)}});
  expectProgramMatchesReference("tensor Y(I, J, K) : dense\ntensor C(K) : dense\ntensor D(I, J) : csr\n"
                                "tensor E(I, K, M) : {dense, compressed, dense}\n"
                                "Y(i,j,k) = C(k) - D(i,j) * sum(m, E(i,k,m))\n",
                                {{"C", randomDense({9}, 26)},
                                 {"D", randomSparse({7, 8}, 0.4, 27)},
                                 {"E", randomSparse({7, 9, 5}, 0.3, 28)}});
  expectProgramMatchesReference("tensor Y(I, J, K, L) : dense\ntensor A(K, L, N) : dense\n"
                                "tensor B(I, J, K) : {dense, compressed, dense}\n"
                                "Y(i,j,k,l) = B(i,j,k) * sum(n, A(k,l,n)) - 2\n",
                                {{"A", randomDense({5, 4, 3}, 29)}, {"B", randomSparse({4, 6, 5}, 0.3, 30)}});
}

}  // namespace
}  // namespace tcc::test
