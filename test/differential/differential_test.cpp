// The differential suite: generated cases compiled, run and compared with
// the dense reference; the generator's reach; the minimizer; and the
// regression files found so far, replayed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "campaign.h"
#include "generator.h"
#include "known_bugs.h"
#include "minimizer.h"
#include "regression_file.h"
#include "tcc/runtime/value_type.h"

namespace tcc::differential {
namespace {

GeneratorOptions withRealMatrices() { return {TCC_SHARED_DATA_DIR}; }

// Checks a generated case against the dense reference; a finding (a
// mismatch, an internal error, a crash) fails the test with the program.
Verdict checkedAgainstReference(const Case& c, uint64_t seed) {
  ReferenceOracle reference;
  CampaignOptions options;
  options.oracles = {&reference};
  Verdict verdict = checkCase(c, options);
  EXPECT_FALSE(isFinding(verdict.outcome)) << "seed " << seed << ": " << toString(verdict.outcome) << ": "
                                            << verdict.detail << "\n" << c.programText();
  return verdict;
}

bool sameData(const Case& a, const Case& b) {
  if (a.data.size() != b.data.size()) return false;
  for (const auto& [name, coo] : a.data) {
    const rt::Coo& other = b.data.at(name);
    if (coo.dims != other.dims || coo.coords != other.coords || coo.values != other.values) return false;
  }
  return true;
}

TEST(DifferentialGenerator, TheSameSeedGivesTheSameCase) {
  for (uint64_t seed : {1u, 7u, 123u}) {
    Case a = generateCase(seed, withRealMatrices()), b = generateCase(seed, withRealMatrices());
    EXPECT_EQ(a.programText(), b.programText());
    EXPECT_TRUE(sameData(a, b));
  }
  EXPECT_NE(generateCase(1).programText(), generateCase(2).programText());
}

// Text that some generated program must contain, for each feature the
// generator varies.
constexpr const char* kProgramFeatures[] = {
    "compressed(nonunique)", "singleton", "order (", "of float32", "of int32", "of int64", " / ", " - ", "sum(",
    "split(", "divide(", "fuse(", "pos(", "bound(", "unroll(", "precompute(", "dense_workspace(",
    "sparse_workspace(", "reorder(", "Atomics", "ParallelReduction", "Temporary", "Workspace)", "CPUVector",
    ": csr", ": coo", ": csf", "fp fast"};

// What the default run's handful of cases cannot show: over many seeds the
// generator reaches every feature it is meant to vary.
TEST(DifferentialGenerator, ReachesEveryFeature) {
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Case c = generateCase(seed, withRealMatrices());
    std::string text = c.programText();
    for (const char* feature : kProgramFeatures)
      if (text.find(feature) != std::string::npos) seen.insert(feature);
    std::set<size_t> orders;
    bool anyNonzero = false;
    for (const auto& tensor : c.inputs) {
      seen.insert("order " + std::to_string(tensor.vars.size()));
      const rt::Coo& coo = c.data.at(tensor.name);
      if (coo.nnz() == 0) seen.insert("empty tensor");
      anyNonzero = anyNonzero || coo.nnz() > 0;
      for (int32_t dim : coo.dims)
        if (dim == 1) seen.insert("size-1 mode");
    }
    seen.insert("output order " + std::to_string(c.output.vars.size()));
    if (c.origin.find(".mtx") != std::string::npos) seen.insert("real matrix");
    ASSERT_TRUE(anyNonzero) << "seed " << seed << " has all-zero inputs";
  }
  for (const char* feature : kProgramFeatures) EXPECT_TRUE(seen.count(feature)) << "no generated case has " << feature;
  for (const char* feature : {"order 0", "order 1", "order 2", "order 3", "order 4", "output order 0",
                              "output order 3", "empty tensor", "size-1 mode"})
    EXPECT_TRUE(seen.count(feature)) << "no generated case has " << feature;
  if (std::filesystem::is_directory(std::string(TCC_SHARED_DATA_DIR) + "/matrices"))
    EXPECT_TRUE(seen.count("real matrix")) << "no generated case reads a real matrix";
}

// --target cuda draws toward what the cuda target runs (float32, dense
// outputs, GPU units, dimensions past a warp) and marks every case for it;
// the cpu cases of the same seeds stay what they were.
TEST(DifferentialGenerator, CudaCasesLeanTowardWhatTheGpuRuns) {
  GeneratorOptions cuda = withRealMatrices();
  cuda.cudaTarget = true;
  int float32 = 0, denseOutputs = 0, wide = 0;
  std::set<std::string> seen;
  const int count = 200;
  for (uint64_t seed = 1; seed <= count; ++seed) {
    Case c = generateCase(seed, cuda);
    std::string text = c.programText();
    ASSERT_NE(text.find("\ntarget cuda\n"), std::string::npos) << text;
    EXPECT_EQ(generateCase(seed, withRealMatrices()).programText().find("target cuda"), std::string::npos);
    float32 += c.type == ElementType::Float32;
    denseOutputs += c.output.levels.empty() || c.output.allDense();
    for (const auto& [var, size] : c.sizes) wide += size > 32;
    for (const char* feature : {"GPUBlock", "GPUWarp", "GPUThread", "Atomics", "ParallelReduction", "Temporary",
                                "CPUThread", "CPUVector"})
      if (text.find(feature) != std::string::npos) seen.insert(feature);
  }
  EXPECT_GE(float32, count / 2);
  EXPECT_GE(denseOutputs, count * 3 / 4);
  EXPECT_GE(wide, count / 3);
  for (const char* feature : {"GPUBlock", "GPUWarp", "GPUThread", "Atomics", "ParallelReduction", "Temporary"})
    EXPECT_TRUE(seen.count(feature)) << "no cuda case has " << feature;
  EXPECT_FALSE(seen.count("CPUThread") || seen.count("CPUVector")) << "a cuda case parallelizes over CPU units";
}

// Aimed at sparse outputs under schedules: each case has both, and checks
// out (matched, or refused with a reason).
TEST(DifferentialGenerator, SparseOutputCasesAreScheduledAndCheckOut) {
  GeneratorOptions aimed = withRealMatrices();
  aimed.scheduledSparseOutputs = true;
  aimed.productsOnly = true;  // (one term: aimed at assembly, not at sums)
  int matched = 0, scheduled = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generateCase(seed, aimed);
    EXPECT_TRUE(c.output.levels.empty() || !c.output.allDense()) << c.programText();
    // (A program refused unscheduled gets no schedule.)
    scheduled += !c.schedule.empty();
    Verdict verdict = checkedAgainstReference(c, seed);
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(scheduled, 30);
  EXPECT_GE(matched, 8);
}

// Operands read twice: a good share of the cases read a tensor at two
// places, and they check out (matched, or refused with a located reason).
TEST(DifferentialGenerator, RepeatedOperandCasesCheckOut) {
  GeneratorOptions repeated = withRealMatrices();
  repeated.repeatedOperands = true;
  int withRepeats = 0, matchedWithRepeats = 0, permuted = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generateCase(seed, repeated);
    std::vector<const Expr*> accesses;
    collectAccesses(c.rhs, accesses);
    std::map<std::string, std::vector<std::string>> firstVars;
    bool repeats = false, elsewhere = false;
    for (const Expr* access : accesses) {
      auto [first, inserted] = firstVars.emplace(access->tensor, access->vars);
      repeats = repeats || !inserted;
      elsewhere = elsewhere || (!inserted && first->second != access->vars);
    }
    permuted += elsewhere;
    Verdict verdict = checkedAgainstReference(c, seed);
    withRepeats += repeats;
    matchedWithRepeats += repeats && verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(withRepeats, 12);
  EXPECT_GE(matchedWithRepeats, 6);
  EXPECT_GE(permuted, 2);
}

// Terms with no index variable (a literal, scalars) added to an output
// with indices: some cases have one, and those check out.
TEST(DifferentialGenerator, ConstantTermCasesCheckOut) {
  GeneratorOptions constantTerms = withRealMatrices();
  constantTerms.constantTerms = true;
  int withConstants = 0, matchedWithConstants = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Case c = generateCase(seed, constantTerms);
    bool constant = false;
    for (Expr* term = &c.rhs; !constant; term = &term->operands[0]) {
      bool chain = term->kind == Expr::Kind::Add || term->kind == Expr::Kind::Sub;
      const Expr& operand = chain ? term->operands[1] : *term;
      std::vector<const Expr*> accesses;
      collectAccesses(operand, accesses);
      constant = !c.output.vars.empty() && std::all_of(accesses.begin(), accesses.end(),
                                                       [](const Expr* access) { return access->vars.empty(); });
      if (!chain) break;
    }
    if (!constant) continue;
    Verdict verdict = checkedAgainstReference(c, seed);
    withConstants += constant;
    matchedWithConstants += constant && verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(withConstants, 8);
  EXPECT_GE(matchedWithConstants, 4);
}

// Builtins: a third of the terms wrap a factor in abs, sqrt, exp, max or
// min, and the cases with one check out (a mismatch fails here, not only
// too few matches).
TEST(DifferentialGenerator, BuiltinCasesCheckOut) {
  GeneratorOptions builtins = withRealMatrices();
  builtins.builtins = true;
  int withBuiltins = 0, matched = 0;
  std::set<std::string> seen;
  std::function<void(const Expr&, std::set<std::string>&)> callsOf = [&](const Expr& e, std::set<std::string>& out) {
    if (e.kind == Expr::Kind::Call) out.insert(e.function);
    for (const Expr& operand : e.operands) callsOf(operand, out);
  };
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generateCase(seed, builtins);
    std::set<std::string> calls;
    callsOf(c.rhs, calls);
    if (calls.empty()) continue;
    seen.insert(calls.begin(), calls.end());
    Verdict verdict = checkedAgainstReference(c, seed);
    EXPECT_NE(verdict.outcome, Outcome::Mismatch) << c.programText();
    ++withBuiltins;
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(withBuiltins, 8);
  EXPECT_GE(matched, 4);
  std::cout << withBuiltins << " cases with builtins, " << matched << " matched\n";
  EXPECT_EQ(seen, (std::set<std::string>{"abs", "exp", "max", "min", "sqrt"}));
}

// Updates in place: every case reads its output's values from before the
// statement (`+=`, or the output in its expression), the output has data,
// the rest of the case is the one the seed gives without them, and they
// check out.
TEST(DifferentialGenerator, InPlaceCasesCheckOut) {
  GeneratorOptions inPlace = withRealMatrices();
  inPlace.inPlace = true;
  GeneratorOptions without = inPlace;
  without.inPlace = false;
  int accumulating = 0, reading = 0, matched = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Case c = generateCase(seed, inPlace);
    Case plain = generateCase(seed, without);
    EXPECT_EQ(c.schedule, plain.schedule);
    EXPECT_TRUE(c.data.count(c.output.name)) << c.programText();
    std::vector<const Expr*> accesses;
    collectAccesses(c.rhs, accesses);
    const bool readsOutput = std::any_of(accesses.begin(), accesses.end(),
                                         [&](const Expr* access) { return access->tensor == c.output.name; });
    EXPECT_NE(c.accumulate, readsOutput) << c.programText();
    accumulating += c.accumulate;
    reading += readsOutput;
    Verdict verdict = checkedAgainstReference(c, seed);
    EXPECT_NE(verdict.outcome, Outcome::Mismatch) << c.programText();
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(accumulating, 5);
  EXPECT_GE(reading, 5);
  EXPECT_GE(matched, 15);
  std::cout << accumulating << " `+=`, " << reading << " reading their output, " << matched << " matched\n";
}

// float16 inputs: in float cases at least one input is declared float16,
// its data values float16 holds, and the cases check out.
TEST(DifferentialGenerator, Float16InputCasesCheckOut) {
  GeneratorOptions halves = withRealMatrices();
  halves.float16Inputs = true;
  int withHalves = 0, matched = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generateCase(seed, halves);
    int declared = 0;
    for (const TensorDecl& tensor : c.inputs) {
      if (!tensor.float16) continue;
      ++declared;
      for (double value : c.data.at(tensor.name).values)
        EXPECT_EQ(value, rt::halfToFloat(rt::floatToHalf(static_cast<float>(value)))) << c.programText();
    }
    if (!isFloat(c.type) || c.inputs.empty()) {
      EXPECT_EQ(declared, 0);
      continue;
    }
    EXPECT_GE(declared, 1) << c.programText();
    ++withHalves;
    Verdict verdict = checkedAgainstReference(c, seed);
    EXPECT_NE(verdict.outcome, Outcome::Mismatch) << c.programText();
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(withHalves, 15);
  EXPECT_GE(matched, 8);
  std::cout << withHalves << " cases with float16 inputs, " << matched << " matched\n";
}

// Position-space heads: most cases that have a unique compressed level
// start their schedule with pos (over a tensor read twice alike where
// there is one), the rest of the case is the one the seed gives without
// them, and they check out.
TEST(DifferentialGenerator, PosScheduleCasesCheckOut) {
  GeneratorOptions positions = withRealMatrices();
  positions.posSchedules = positions.productsOnly = positions.repeatedOperands = true;
  GeneratorOptions without = positions;
  without.posSchedules = false;
  int withPos = 0, matched = 0, fused = 0, split = 0, parallel = 0, twice = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generateCase(seed, positions), plain = generateCase(seed, without);
    EXPECT_EQ(c.statementText(), plain.statementText());
    EXPECT_EQ(c.fastFp, plain.fastFp);
    EXPECT_TRUE(sameData(c, plain));
    if (c.schedule.empty()) continue;
    std::string head = c.schedule[0].rfind("fuse(", 0) == 0 && c.schedule.size() > 1 ? c.schedule[1] : c.schedule[0];
    if (head.rfind("pos(", 0) != 0) continue;
    ++withPos;
    fused += c.schedule[0].rfind("fuse(", 0) == 0;
    std::string text = c.programText();
    split += text.find("split(") != std::string::npos || text.find("divide(") != std::string::npos;
    parallel += text.find("parallelize(") != std::string::npos;
    std::string access = head.substr(head.find(", ", head.find(", ") + 2) + 2);
    access.pop_back();
    std::string statement = c.statementText();
    twice += statement.find(access) != statement.rfind(access);
    Verdict verdict = checkedAgainstReference(c, seed);
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(withPos, 30);
  EXPECT_GE(matched, 12);
  EXPECT_GE(fused, 3);
  EXPECT_GE(split, 12);
  EXPECT_GE(parallel, 6);
  EXPECT_GE(twice, 3);
}

// Statements whose terms sum over different variables, scheduled as often
// as the others: the same case but for the schedule, and they check out
// (refusals located, never a wrong result).
TEST(DifferentialGenerator, NestedSumScheduleCasesCheckOut) {
  GeneratorOptions nested = withRealMatrices();
  nested.nestedSumSchedules = true;
  int added = 0, matched = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    Case c = generateCase(seed, nested), plain = generateCase(seed, withRealMatrices());
    EXPECT_EQ(c.statementText(), plain.statementText());
    EXPECT_EQ(c.fastFp, plain.fastFp);
    EXPECT_TRUE(sameData(c, plain));
    if (!plain.schedule.empty()) {
      EXPECT_EQ(c.schedule, plain.schedule);
      continue;
    }
    if (c.schedule.empty()) continue;
    ++added;
    Verdict verdict = checkedAgainstReference(c, seed);
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(added, 10);
  EXPECT_GE(matched, 4);
}

// Several precomputes in one statement: the same case, its schedule the
// one the seed gives with precomputes appended, and they check out
// (matched, or refused with a located reason; never a wrong result).
TEST(DifferentialGenerator, SeveralPrecomputeCasesCheckOut) {
  GeneratorOptions several = withRealMatrices();
  several.severalPrecomputes = true;
  int withSeveral = 0, matchedWithSeveral = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    Case c = generateCase(seed, several), plain = generateCase(seed, withRealMatrices());
    EXPECT_EQ(c.statementText(), plain.statementText());
    EXPECT_EQ(c.fastFp, plain.fastFp);
    EXPECT_TRUE(sameData(c, plain));
    ASSERT_GE(c.schedule.size(), plain.schedule.size());
    EXPECT_TRUE(std::equal(plain.schedule.begin(), plain.schedule.end(), c.schedule.begin()));
    int precomputes = 0;
    for (const auto& command : c.schedule) precomputes += command.rfind("precompute(", 0) == 0;
    if (precomputes < 2) continue;
    ++withSeveral;
    Verdict verdict = checkedAgainstReference(c, seed);
    matchedWithSeveral += verdict.outcome == Outcome::Matched;
  }
  // (Most are refused at an earlier command of the random schedule.)
  EXPECT_GE(withSeveral, 60);
  EXPECT_GE(matchedWithSeveral, 2);
}

// Outputs permuted against the inputs: the same case but for the output's
// indices, and they check out.
TEST(DifferentialGenerator, PermutedOutputCasesCheckOut) {
  GeneratorOptions permuted = withRealMatrices();
  permuted.permutedOutputs = true;
  int withPermutation = 0, matched = 0, sparse = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generateCase(seed, permuted), plain = generateCase(seed, withRealMatrices());
    EXPECT_TRUE(std::is_permutation(c.output.vars.begin(), c.output.vars.end(), plain.output.vars.begin(),
                                    plain.output.vars.end()));
    EXPECT_EQ(toString(c.rhs), toString(plain.rhs));
    EXPECT_TRUE(sameData(c, plain));
    if (c.output.vars == plain.output.vars) {
      EXPECT_LT(c.output.vars.size(), 2u);
      continue;
    }
    ++withPermutation;
    sparse += !c.output.allDense();
    Verdict verdict = checkedAgainstReference(c, seed);
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(withPermutation, 20);
  EXPECT_GE(matched, 10);
  EXPECT_GE(sparse, 4);
}

// Chained programs: earlier statements compute tensors the last one reads
// where the case had inputs (same name, order and mode order, sparse
// ones among them), the last statement and its schedule are the ones the seed gives
// without the flag (up to permuted reads of computed tensors), each
// statement names its own variables, some tensors are read by two
// statements, and they check out.
TEST(DifferentialGenerator, ChainedCasesCheckOut) {
  GeneratorOptions chained = withRealMatrices();
  chained.chained = true;
  int programs = 0, threeStatements = 0, sparseIntermediates = 0, shared = 0, matched = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Case c = generateCase(seed, chained), plain = generateCase(seed, withRealMatrices());
    EXPECT_EQ(c.output.vars, plain.output.vars);
    EXPECT_EQ(c.schedule, plain.schedule);
    if (c.earlier.empty()) continue;
    ++programs;
    threeStatements += c.earlier.size() == 2;
    for (const Stage& stage : c.earlier) {
      const TensorDecl* replaced = plain.findInput(stage.output.name);
      bool readByLast = replaced != nullptr;
      if (readByLast) EXPECT_EQ(stage.output.levels.size(), replaced->levels.size());
      if (readByLast) EXPECT_EQ(stage.output.modeOrder, replaced->modeOrder);
      sparseIntermediates += !stage.output.allDense();
      EXPECT_EQ(c.findInput(stage.output.name), nullptr) << "a computed tensor is no input";
      EXPECT_FALSE(c.data.count(stage.output.name));
      for (const auto& var : stage.output.vars) EXPECT_NE(var.size(), 1u) << "each statement has its own variables";
    }
    std::map<std::string, int> readers;  // statements reading each tensor
    std::vector<const Expr*> accesses;
    std::vector<const Expr*> statements = {&c.rhs};
    for (const Stage& stage : c.earlier) statements.push_back(&stage.rhs);
    for (const Expr* rhs : statements) {
      std::set<std::string> read;
      accesses.clear();
      collectAccesses(*rhs, accesses);
      for (const Expr* access : accesses) read.insert(access->tensor);
      for (const auto& name : read) ++readers[name];
    }
    shared += std::any_of(readers.begin(), readers.end(), [](const auto& entry) { return entry.second > 1; });
    Verdict verdict = checkedAgainstReference(c, seed);
    matched += verdict.outcome == Outcome::Matched;
  }
  EXPECT_GE(programs, 8);
  EXPECT_GE(shared, 1);
  EXPECT_GE(threeStatements, 2);
  EXPECT_GE(sparseIntermediates, 4);
  EXPECT_GE(matched, 4);
  std::cout << programs << " chained programs (" << threeStatements << " of three statements, " << sparseIntermediates
            << " sparse intermediates, " << shared << " with a tensor two statements read), " << matched
            << " matched\n";
}

// Without a GPU (or with compileOnly) a cuda case is lowered and its
// kernels compiled with NVRTC: a refusal still needs its reason, and
// kernels NVRTC rejects are internal errors. Enough of them must compile
// for the mode to test the backend at all.
TEST(DifferentialCuda, CasesCompileForTheGpuOrAreRefusedWithAReason) {
  ReferenceOracle reference;
  CampaignOptions options;
  options.oracles = {&reference};
  options.compileOnly = true;
  GeneratorOptions cuda = withRealMatrices();
  cuda.cudaTarget = true;
  int compiled = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generateCase(seed, cuda);
    Verdict verdict = checkCase(c, options);
    compiled += verdict.outcome == Outcome::CompiledNotRun;
    EXPECT_NE(verdict.outcome, Outcome::Matched) << "compileOnly ran seed " << seed;
    EXPECT_FALSE(isFinding(verdict.outcome)) << "seed " << seed << ": " << toString(verdict.outcome) << ": "
                                              << verdict.detail << "\n" << c.programText()
                                              << "reproduce with: tcc_differential --target cuda --seed " << seed
                                              << " --count 1 --compile-only";
  }
  std::cout << compiled << " of 40 cuda cases compiled, not run\n";
  EXPECT_GE(compiled, 6) << "too few cuda cases compile for the mode to test the cuda backend";
}

// NVRTC's errors are internal errors that name the line it complained of;
// a cuda refusal is a refusal.
TEST(DifferentialCuda, RefusalsAndCompileErrorsAreToldApart) {
  ReferenceOracle reference;
  // (A DCSR output's row split among a warp's lanes: refused.)
  Verdict sparseOutput = checkProgram(
      "tensor Y(I, J) : dcsr of float32\ntensor X(I, J) : dense of float32\nY(i, j) = X(i, j)\ntarget cuda\n"
      "schedule {\n  parallelize(i, GPUWarp, NoRaces)\n  parallelize(j, GPUThread, NoRaces)\n}\n",
      {{"X", rt::randomUniform({40, 40}, 1.0, 5)}}, {&reference}, true);
  EXPECT_EQ(sparseOutput.outcome, Outcome::Refused) << sparseOutput.detail;
  EXPECT_NE(sparseOutput.detail.find("sparse"), std::string::npos) << sparseOutput.detail;
  Verdict compiled = checkProgram(
      "tensor y(I) : dense of float32\ntensor x(I) : dense of float32\ny(i) = 2 * x(i)\ntarget cuda\n",
      {{"x", rt::randomUniform({40}, 1.0, 6)}}, {&reference}, true);
  EXPECT_EQ(compiled.outcome, Outcome::CompiledNotRun) << compiled.detail;
}

// A cuda finding's file records its target, so a replay compiles for it.
TEST(DifferentialRegressionFile, ACudaCaseKeepsItsTarget) {
  GeneratorOptions cuda;
  cuda.cudaTarget = true;
  Case c = generateCase(11, cuda);
  RegressionCase parsed = parseRegressionFile(regressionFileText(c, {"a header"}));
  EXPECT_NE(parsed.programText.find("\ntarget cuda\n"), std::string::npos) << parsed.programText;
  Verdict verdict = checkProgram(parsed.programText, parsed.inputs, {}, true);
  EXPECT_TRUE(verdict.outcome == Outcome::CompiledNotRun || verdict.outcome == Outcome::Refused)
      << toString(verdict.outcome) << ": " << verdict.detail;
  // Minimizing keeps the target (a stand-in predicate: A is still read).
  ASSERT_NE(c.findInput("A"), nullptr);
  MinimizeResult reduced = minimize(c, [](const Case& candidate) { return candidate.findInput("A") != nullptr; });
  EXPECT_TRUE(reduced.reduced.cudaTarget);
  EXPECT_NE(reduced.reduced.programText().find("\ntarget cuda\n"), std::string::npos);
}

// MLIR 16 as a second, independent oracle on the cases it can express.
TEST(Differential, MlirAgreesOnTheCasesItCanExpress) {
  if (!MlirOracle::available()) GTEST_SKIP() << "the MLIR 16 tools were not found when tcc was configured";
  struct Counting : Oracle {
    const Oracle& inner;
    mutable int answered = 0;
    explicit Counting(const Oracle& oracle) : inner(oracle) {}
    std::string name() const override { return inner.name(); }
    std::optional<Outputs> evaluate(const Program& program, const std::map<std::string, rt::Coo>& inputs) const override {
      auto outputs = inner.evaluate(program, inputs);
      answered += outputs.has_value();
      return outputs;
    }
  };
  ReferenceOracle reference;
  MlirOracle mlir;
  Counting counted(mlir);
  CampaignOptions options;
  options.oracles = {&reference, &counted};
  GeneratorOptions generator = withRealMatrices();
  generator.productsOnly = true;  // the shapes MLIR 16 expresses most often
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generateCase(seed, generator);
    Verdict verdict = checkCase(c, options);
    EXPECT_FALSE(isFinding(verdict.outcome)) << "seed " << seed << ": " << toString(verdict.outcome) << ": "
                                              << verdict.detail << "\n" << c.programText();
  }
  std::cout << counted.answered << " of 60 cases also checked against MLIR 16\n";
  EXPECT_GE(counted.answered, 5) << "MLIR 16 took too few generated cases to count as an oracle";
}

// The default run: 50 fixed seeds, each compiled, run and compared. A
// mismatch that fits a known open bug is reported, not failed (see
// known_bugs.h); everything else that is not a match or a reasoned refusal
// fails.
TEST(Differential, FiftyCasesMatchTheReferenceOrAreRefusedWithAReason) {
  ReferenceOracle reference;
  CampaignOptions options;
  options.oracles = {&reference};
  int matched = 0, refused = 0, known = 0, zeroResults = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Case c = generateCase(seed, withRealMatrices());
    Verdict verdict = checkCase(c, options);
    if (verdict.outcome == Outcome::Matched) ++matched;
    zeroResults += verdict.zeroResult;
    if (verdict.outcome == Outcome::Refused) ++refused;
    if (!isFinding(verdict.outcome)) continue;
    std::optional<std::string> bug =
        knownOpenBug(c, verdict, [&](const Case& variant) { return checkCase(variant, options); });
    if (bug && !strictMode()) {
      ++known;
      std::cout << "seed " << seed << ": known open bug " << *bug << "\n";
      continue;
    }
    ADD_FAILURE() << "seed " << seed << ": " << toString(verdict.outcome) << ": " << verdict.detail << "\n"
                  << c.programText() << "reproduce and minimize with: tcc_differential --seed " << seed
                  << " --count 1 --save-dir DIR";
  }
  std::cout << matched << " matched (" << zeroResults << " with an all-zero result), " << refused << " refused, "
            << known << " known open bugs\n";
  EXPECT_GE(matched - zeroResults, 12) << "too few cases compile to a nonzero result for the suite to mean much";
}

// The minimizer against a stand-in predicate: "fails" while tensor B is
// read and holds an entry at row 0. It must strip all else.
TEST(DifferentialMinimizer, KeepsOnlyWhatTheFailureNeeds) {
  Case c;
  for (uint64_t seed = 1; seed < 200; ++seed) {
    c = generateCase(seed);
    const TensorDecl* b = c.findInput("B");
    if (b && !b->vars.empty() && c.inputs.size() >= 3 && !c.schedule.empty() && c.data.at("B").nnz() > 2) {
      bool rowZero = false;
      for (int32_t coordinate : c.data.at("B").coords[0]) rowZero = rowZero || coordinate == 0;
      if (rowZero) break;
    }
  }
  auto fails = [](const Case& candidate) {
    auto found = candidate.data.find("B");
    if (found == candidate.data.end()) return false;
    for (int32_t coordinate : found->second.coords[0])
      if (coordinate == 0) return true;
    return false;
  };
  ASSERT_TRUE(fails(c));
  MinimizeResult result = minimize(c, fails);
  EXPECT_TRUE(fails(result.reduced));
  EXPECT_TRUE(result.reduced.schedule.empty());
  EXPECT_EQ(result.reduced.inputs.size(), 1u) << result.reduced.programText();
  EXPECT_EQ(result.reduced.data.at("B").nnz(), 1u);
  EXPECT_LT(result.attempts, 500);
}

// A chained case minimizes by statements too: a failure of the statement
// computing an intermediate alone keeps that statement only (the last
// dropped, the one before in its place); a failure of the last statement
// that needs the intermediate's values keeps them as an input holding what
// the earlier statement computed.
TEST(DifferentialMinimizer, DropsAndMaterializesEarlierStatements) {
  GeneratorOptions chained;
  chained.chained = true;
  Case c;
  for (uint64_t seed = 1; seed < 200; ++seed) {
    c = generateCase(seed, chained);
    if (c.earlier.size() == 1 && !c.earlier[0].output.vars.empty() && c.schedule.empty() &&
        c.earlier[0].schedule.empty())
      break;
  }
  ASSERT_EQ(c.earlier.size(), 1u);
  const std::string intermediate = c.earlier[0].output.name;
  // The earlier statement alone.
  auto writesIt = [&](const Case& candidate) { return candidate.output.name == intermediate; };
  auto reducedToEarlier = minimize(c, [&](const Case& candidate) {
    return writesIt(candidate) || std::any_of(candidate.earlier.begin(), candidate.earlier.end(),
                                              [&](const Stage& stage) { return stage.output.name == intermediate; });
  });
  EXPECT_TRUE(reducedToEarlier.reduced.earlier.empty()) << reducedToEarlier.reduced.programText();
  EXPECT_TRUE(writesIt(reducedToEarlier.reduced));
  // Its values as an input of the last statement.
  auto readsItsValues = [&](const Case& candidate) {
    auto found = candidate.data.find(intermediate);
    return candidate.output.name == "Y" && found != candidate.data.end() && found->second.nnz() > 0;
  };
  ASSERT_FALSE(readsItsValues(c));
  auto materialized = minimize(c, [&](const Case& candidate) {
    return readsItsValues(candidate) || (candidate.output.name == "Y" && !candidate.earlier.empty());
  });
  EXPECT_TRUE(materialized.reduced.earlier.empty()) << materialized.reduced.programText();
  EXPECT_TRUE(readsItsValues(materialized.reduced)) << materialized.reduced.programText();
}

// The seam for further oracles: each is consulted, one that cannot take
// the program is skipped, and a disagreement names the oracle.
class FixedOracle : public Oracle {
 public:
  FixedOracle(std::string name, std::optional<double> everyValue) : name_(std::move(name)), everyValue_(everyValue) {}
  std::string name() const override { return name_; }
  std::optional<Outputs> evaluate(const Program& program, const std::map<std::string, rt::Coo>& inputs) const override {
    if (!everyValue_) return std::nullopt;
    auto outputs = *ReferenceOracle().evaluate(program, inputs);
    for (auto& [name, array] : outputs)
      for (double& value : array.values) value = *everyValue_;
    return outputs;
  }

 private:
  std::string name_;
  std::optional<double> everyValue_;
};

TEST(DifferentialOracles, EachIsConsultedAndOneThatCannotTakeTheProgramIsSkipped) {
  const std::string program = "tensor y(I) : dense\ntensor A(I, J) : csr\ntensor x(J) : dense\ny(i) = A(i,j) * x(j)\n";
  std::map<std::string, rt::Coo> inputs = {{"A", rt::randomUniform({6, 5}, 0.4, 1)},
                                           {"x", rt::randomUniform({5}, 1.0, 2)}};
  ReferenceOracle reference;
  FixedOracle cannot("cannot export", std::nullopt), wrong("always seven", 7.0);
  EXPECT_EQ(checkProgram(program, inputs, {&reference, &cannot}).outcome, Outcome::Matched);
  Verdict verdict = checkProgram(program, inputs, {&reference, &wrong});
  EXPECT_EQ(verdict.outcome, Outcome::Mismatch);
  EXPECT_NE(verdict.detail.find("always seven"), std::string::npos) << verdict.detail;
}

// Refusals and internal errors are told apart by what is thrown.
TEST(DifferentialChecker, RefusalsCarryAReasonAndBrokenProgramsAreRefusedWithTheirLocation) {
  ReferenceOracle reference;
  Verdict syntax = checkProgram("tensor y(I) : dense\ny(i) = = 2\n", {}, {&reference});
  EXPECT_EQ(syntax.outcome, Outcome::Refused);
  EXPECT_EQ(syntax.detail.rfind("case.tc:2:", 0), 0u) << syntax.detail;
  Verdict scatter = checkProgram(
      "tensor A(I, J) : csr\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i,j) = B(i,k) * C(k,j)\n"
      "schedule {\n  reorder(k, i, j)\n}\n",
      {{"B", rt::randomUniform({4, 3}, 0.5, 3)}, {"C", rt::randomUniform({3, 4}, 0.5, 4)}}, {&reference});
  EXPECT_EQ(scatter.outcome, Outcome::Refused) << scatter.detail;
  EXPECT_FALSE(scatter.detail.empty());
}

TEST(DifferentialRegressionFile, RoundTripsProgramAndInputs) {
  Case c = generateCase(11);
  RegressionCase parsed = parseRegressionFile(regressionFileText(c, {"a header", "open bug: (z) example"}));
  EXPECT_EQ(parsed.openBug, "(z) example");
  EXPECT_NE(parsed.programText.find(c.programText()), std::string::npos);
  ASSERT_EQ(parsed.inputs.size(), c.data.size());
  for (const auto& [name, coo] : c.data) {
    EXPECT_EQ(parsed.inputs.at(name).dims, coo.dims);
    EXPECT_EQ(parsed.inputs.at(name).values, coo.values);
    EXPECT_EQ(parsed.inputs.at(name).coords, coo.coords);
  }
  EXPECT_THROW(parseRegressionFile("# input A 2\n# entry A x 1\n"), std::invalid_argument);
}

std::vector<std::filesystem::path> regressionFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TCC_SOURCE_DIR) + "/test/differential/regressions"))
    if (entry.path().extension() == ".tc") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Findings that crashed replay in a child process.
// MLIR 16 checks them too where it is installed (some findings were its).
Verdict replay(const RegressionCase& regression) {
  ReferenceOracle reference;
  MlirOracle mlir;
  std::vector<const Oracle*> oracles = {&reference};
  if (MlirOracle::available()) oracles.push_back(&mlir);
  if (regression.programText.find("differential regression: CRASH") != std::string::npos)
    return checkProgramIsolated(regression.programText, regression.inputs, oracles, 120);
  return checkProgram(regression.programText, regression.inputs, oracles);
}

// Findings whose bugs are fixed: each must now match (or be refused with a reason).
TEST(DifferentialRegressions, FixedFindingsStayFixed) {
  int replayed = 0;
  for (const auto& path : regressionFiles()) {
    RegressionCase regression = readRegressionFile(path.string());
    if (!regression.openBug.empty()) continue;
    ++replayed;
    Verdict verdict = replay(regression);
    EXPECT_FALSE(isFinding(verdict.outcome)) << path.filename() << ": " << toString(verdict.outcome) << ": "
                                              << verdict.detail;
  }
  std::cout << replayed << " regression files replayed\n";
}

// Findings of bugs still open (their files say `# open bug: ...`) are not
// replayed as failures above; this names them, so they are not forgotten.
TEST(DifferentialRegressions, OpenBugFindingsAreListed) {
  std::set<std::string> bugs;
  int files = 0;
  for (const auto& path : regressionFiles()) {
    RegressionCase regression = readRegressionFile(path.string());
    if (regression.openBug.empty()) continue;
    ++files;
    bugs.insert(regression.openBug);
  }
  if (files == 0) return;
  std::string list;
  for (const auto& bug : bugs) list += "\n  " + bug;
  GTEST_SKIP() << files << " regression files wait for open bugs:" << list;
}

}  // namespace
}  // namespace tcc::differential
