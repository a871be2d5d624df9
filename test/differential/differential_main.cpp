// tcc_differential: generate cases from a seed, check each against the
// dense reference, minimize and save what disagrees.
//
//   tcc_differential --seed 1 --count 500 [--fork] [--save-dir DIR] [--target cuda]
//   tcc_differential --replay FILE.tc ...
//
// Exits 1 when a case mismatches (other than a known open bug, unless
// --strict), fails internally, crashes or is invalid.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "campaign.h"
#include "generator.h"
#include "known_bugs.h"
#include "regression_file.h"

using namespace tcc::differential;

namespace {

// A refusal's reason without the statement or command it names, so that
// the same reason given for different programs counts once.
std::string reasonOf(const std::string& detail) {
  std::string reason = detail.substr(0, detail.find('\n'));
  if (reason.rfind("case.tc:", 0) == 0 && reason.find("error: ") != std::string::npos)
    reason = reason.substr(reason.find("error: ") + 7);
  if (reason.rfind("cannot compile `", 0) == 0 && reason.find("`: ") != std::string::npos)
    reason = reason.substr(reason.find("`: ") + 3);
  if (reason.find("): ") != std::string::npos && reason.find("): ") < 60) reason = reason.substr(reason.find("): ") + 3);
  return reason.substr(0, 90);
}

// Whether a top-level term of `rhs` (an operand of its chain of + and -)
// reads no index variable: a literal or scalars.
bool hasConstantTerm(const Expr& rhs) {
  if (rhs.kind == Expr::Kind::Add || rhs.kind == Expr::Kind::Sub)
    return hasConstantTerm(rhs.operands[0]) || hasConstantTerm(rhs.operands[1]);
  std::vector<const Expr*> accesses;
  collectAccesses(rhs, accesses);
  for (const Expr* access : accesses)
    if (!access->vars.empty()) return false;
  return true;
}

// Whether a program's text has a `target` line of its own.
bool namesTarget(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("target ", 0) == 0) return true;
  return false;
}

int replay(const std::vector<std::string>& files, const CampaignOptions& options, bool printCode, bool cuda) {
  int failures = 0;
  for (const auto& path : files) {
    RegressionCase regression = readRegressionFile(path);
    // A file records its target (a `target cuda` line); --target cuda
    // replays a cpu file on the cuda target.
    if (cuda && !namesTarget(regression.programText)) regression.programText += "target cuda\n";
    if (printCode) {
      // A refused program has no code; the verdict below gives the reason.
      try {
        std::cout << tcc::lowerProgram(tcc::Program::fromText(regression.programText, path)).source() << std::endl;
      } catch (const std::exception&) {
      }
    }
    Verdict verdict = checkProgramIsolated(regression.programText, regression.inputs, options.oracles,
                                           options.timeoutSeconds, options.compileOnly);
    std::cout << path << ": " << toString(verdict.outcome) << (verdict.detail.empty() ? "" : ": " + verdict.detail)
              << (regression.openBug.empty() ? "" : " [open bug " + regression.openBug + "]") << "\n";
    failures += isFinding(verdict.outcome);
  }
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Differential testing of tcc against the dense reference evaluator"};
  uint64_t seed = 1;
  int count = 100;
  bool strict = strictMode(), verbose = false, noMinimize = false, printCases = false, printCode = false;
  std::vector<std::string> replayFiles;
  CampaignOptions options;
  GeneratorOptions generator;
  app.add_option("--seed", seed, "first seed");
  app.add_option("--count", count, "number of cases (seeds seed, seed+1, ...)");
  app.add_option("--save-dir", options.saveDir, "write each finding, minimized, as a .tc regression file here");
  app.add_flag("--fork", options.isolate, "run each case in a child process, so a crash is a finding");
  app.add_option("--timeout", options.timeoutSeconds, "seconds per case with --fork");
  app.add_flag("--no-minimize", noMinimize, "report findings as generated");
  app.add_flag("--minimize-known", options.minimizeKnownBugs, "minimize (and save) findings of known open bugs too");
  app.add_option("--minimize-attempts", options.minimizeAttempts, "candidates the minimizer may try per finding");
  app.add_flag("--strict", strict, "count mismatches of known open bugs as failures");
  app.add_flag("--verbose", verbose, "print every case's outcome and each refusal's reason");
  app.add_flag("--print-cases", printCases, "print every case's program");
  bool sameSums = false;
  app.add_flag("--same-sums", sameSums, "every term sums over the same variables (the class of bug (a), now fixed, left out)");
  app.add_flag("--products-only", generator.productsOnly,
               "one term, no inner sums or differences (the classes of bugs (a), (d) and (i), now fixed, left out)");
  app.add_flag("--sparse-outputs", generator.scheduledSparseOutputs,
               "every output stores a sparse level and every case is scheduled (campaigns aimed at assembling "
               "sparse outputs under schedules)");
  app.add_flag("--repeated-operands", generator.repeatedOperands,
               "about a third of the terms read again a tensor that an earlier factor or term reads, at the same "
               "indices (A(i,j) * x(j) - A(i,j))");
  app.add_flag("--builtins", generator.builtins,
               "about a third of the terms wrap a factor in abs, sqrt, exp, max or min (max(A(i,j), 2) is 2 off A's "
               "entries, exp(A(i,j)) is 1 there)");
  app.add_flag("--float16-inputs", generator.float16Inputs,
               "in float cases, store about half of the inputs as float16 (values float16 holds; read as float32)");
  app.add_flag("--in-place", generator.inPlace,
               "updates in place: the statement is `+=` or reads its output at its own indices; the output has data");
  app.add_flag("--constant-terms", generator.constantTerms,
               "about a third of the terms after the first have no index variable: a literal or a product of "
               "scalars (Y(i,j) = A(i,j) - 3)");
  app.add_flag("--pos-schedules", generator.posSchedules,
               "every case with a unique compressed level starts its schedule in position space: pos over the "
               "level's variable or over its fusion with the loop around it, mostly split, the outer part "
               "parallelized (a tensor read twice alike taken first)");
  app.add_flag("--permuted-outputs", generator.permutedOutputs,
               "outputs of order two or more have their indices permuted against the order the inputs read them "
               "(Y(j,i) = A(i,j) * ...)");
  app.add_flag("--nested-sum-schedules", generator.nestedSumSchedules,
               "statements whose terms sum over different variables get random commands as often as the others "
               "(Y(i,j) = A(i,j,m) - B(i), 60 % scheduled instead of 15 %)");
  app.add_flag("--several-precomputes", generator.severalPrecomputes,
               "half the drawn schedules end with one or two precomputes of other sub-expressions (several "
               "dense workspaces in one statement, nested or side by side)");
  app.add_flag("--chained", generator.chained,
               "programs of two or three statements: earlier statements compute tensors a later one reads (their "
               "assembled outputs its operands), each with its own variables and random schedule");
  app.add_option("--replay", replayFiles, "check regression files instead of generating cases");
  app.add_flag("--print-code", printCode, "with --replay: print the generated C++ first");
  bool mlir = false;
  app.add_flag("--mlir", mlir, "also compare with MLIR 16's sparsifier on the cases it can express");
  std::string target = "cpu";
  app.add_option("--target", target,
                 "cpu, or cuda: cases drawn toward what the cuda target runs, compiled for it (a `target cuda` "
                 "line), run on the GPU where there is one, else compiled with NVRTC only")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_flag("--compile-only", options.compileOnly, "cuda cases: compile the kernels (NVRTC), never run them");
  bool requireGpu = false;
  app.add_flag("--require-gpu", requireGpu,
               "exit 1 when a cuda case was compiled but not run (no GPU), or none ran: a GPU campaign that ran "
               "nothing fails");
  CLI11_PARSE(app, argc, argv);
  const bool cuda = target == "cuda";
  options.minimizeFindings = !noMinimize;

  ReferenceOracle reference;
  MlirOracle mlirOracle;
  options.oracles = {&reference};
  if (mlir) {
    if (!MlirOracle::available()) {
      std::cerr << "--mlir: the MLIR 16 tools were not found when tcc was configured\n";
      return 2;
    }
    options.oracles.push_back(&mlirOracle);
  }
  if (!replayFiles.empty()) return replay(replayFiles, options, printCode, cuda);

  generator.sameSumsInEveryTerm = sameSums;
  generator.cudaTarget = cuda;
#ifdef TCC_SHARED_DATA_DIR
  generator.sharedDataDir = TCC_SHARED_DATA_DIR;
#endif
  if (const char* dir = std::getenv("TCC_SHARED_DATA_DIR")) generator.sharedDataDir = dir;

  std::map<Outcome, int> tally;
  std::map<std::string, int> refusals, knownBugs;
  int zeroResults = 0;
  int mlirChecked = 0;  // --mlir: matched cases that MLIR 16 evaluated too
  int failures = 0;
  // --repeated-operands: cases reading a tensor at several places (of them,
  // at other indices), and how many of each matched.
  int repeated = 0, repeatedMatched = 0, permuted = 0, permutedMatched = 0;
  int constant = 0, constantMatched = 0;  // --constant-terms: cases with such a term
  // --pos-schedules: cases whose schedule has a pos (of them, over an access
  // read twice); --permuted-outputs: cases whose output is permuted.
  int positions = 0, positionsMatched = 0, positionsTwice = 0, positionsTwiceMatched = 0;
  int permutedOutputs = 0, permutedOutputsMatched = 0;
  // --chained: programs of several statements (of three), and how many matched.
  int chainedPrograms = 0, chainedMatched = 0, threeStatements = 0, threeMatched = 0;
  for (int n = 0; n < count; ++n) {
    uint64_t caseSeed = seed + static_cast<uint64_t>(n);
    Case c = generateCase(caseSeed, generator);
    Verdict verdict = checkCase(c, options);
    ++tally[verdict.outcome];
    zeroResults += verdict.zeroResult;
    const bool checkedByMlir = std::find(verdict.checkedBy.begin(), verdict.checkedBy.end(), mlirOracle.name()) !=
                               verdict.checkedBy.end();
    mlirChecked += verdict.outcome == Outcome::Matched && checkedByMlir;
    if (generator.constantTerms && !c.output.vars.empty() && hasConstantTerm(c.rhs))
      ++constant, constantMatched += verdict.outcome == Outcome::Matched;
    if (generator.repeatedOperands) {
      std::vector<const Expr*> accesses;
      collectAccesses(c.rhs, accesses);
      std::map<std::string, std::vector<std::string>> firstVars;
      bool again = false, elsewhere = false;
      for (const Expr* access : accesses) {
        auto [first, inserted] = firstVars.emplace(access->tensor, access->vars);
        again = again || !inserted;
        elsewhere = elsewhere || (!inserted && first->second != access->vars);
      }
      bool matched = verdict.outcome == Outcome::Matched;
      repeated += again, repeatedMatched += again && matched;
      permuted += elsewhere, permutedMatched += elsewhere && matched;
    }
    const bool matched = verdict.outcome == Outcome::Matched;
    if (generator.posSchedules) {
      for (const auto& command : c.schedule) {
        if (command.rfind("pos(", 0) != 0) continue;
        // pos(v, vp, ACCESS): the access, read twice where the statement has it twice.
        std::string access = command.substr(command.find(", ", command.find(", ") + 2) + 2);
        access.pop_back();
        std::string statement = c.statementText();
        size_t first = statement.find(access);
        bool twice = first != std::string::npos && statement.find(access, first + 1) != std::string::npos;
        ++positions, positionsMatched += matched;
        positionsTwice += twice, positionsTwiceMatched += twice && matched;
        break;
      }
    }
    if (!c.earlier.empty()) ++chainedPrograms, chainedMatched += matched;
    if (c.earlier.size() >= 2) ++threeStatements, threeMatched += matched;
    if (generator.permutedOutputs && !std::is_sorted(c.output.vars.begin(), c.output.vars.end()))
      ++permutedOutputs, permutedOutputsMatched += matched;
    if (verdict.outcome == Outcome::Refused) ++refusals[reasonOf(verdict.detail)];
    if (verbose)
      std::cout << "seed " << caseSeed << ": " << toString(verdict.outcome) << " " << verdict.detail
                << (checkedByMlir ? "(MLIR 16 too)" : "") << "\n";
    if (printCases) std::cout << c.programText() << "\n";
    if (!isFinding(verdict.outcome)) continue;

    std::cout << "\nseed " << caseSeed << ": " << toString(verdict.outcome) << ": " << verdict.detail << "\n"
              << c.programText();
    Finding finding = investigate(c, verdict, options);
    if (finding.minimized)
      std::cout << "minimized (" << toString(finding.minimizedVerdict.outcome) << ": " << finding.minimizedVerdict.detail
                << "):\n"
                << finding.minimized->programText();
    if (finding.knownBug) {
      std::cout << "known open bug " << *finding.knownBug << "\n";
      ++knownBugs[*finding.knownBug];
    }
    if (!finding.savedPath.empty()) std::cout << "saved " << finding.savedPath << "\n";
    std::cout.flush();
    if (!finding.knownBug || strict) ++failures;
  }

  std::cout << "\n" << count << " cases from seed " << seed << ": " << tally[Outcome::Matched]
            << " compiled and matched (" << zeroResults << " of them with an all-zero result), " << tally[Outcome::Refused] << " refused with a reason, "
            << tally[Outcome::Mismatch] << " MISMATCH, " << tally[Outcome::Internal] << " internal error, "
            << tally[Outcome::Crash] << " crash, " << tally[Outcome::InvalidCase] << " invalid case";
  if (cuda) std::cout << ", " << tally[Outcome::CompiledNotRun] << " compiled, not run";
  std::cout << (cuda ? " (cuda target)\n" : "\n");
  if (mlir) std::cout << mlirChecked << " of the matched cases checked against MLIR 16 too\n";
  if (generator.constantTerms)
    std::cout << constant << " cases add a term with no index variable to an output with indices (" << constantMatched
              << " matched)\n";
  if (generator.repeatedOperands)
    std::cout << repeated << " cases read a tensor at several places (" << repeatedMatched << " matched), " << permuted
              << " of them at other indices (" << permutedMatched << " matched)\n";
  if (generator.posSchedules)
    std::cout << positions << " cases schedule a pos (" << positionsMatched << " matched), " << positionsTwice
              << " of them over an access the statement reads twice (" << positionsTwiceMatched << " matched)\n";
  if (generator.permutedOutputs)
    std::cout << permutedOutputs << " cases write an output permuted against the inputs (" << permutedOutputsMatched
              << " matched)\n";
  if (generator.chained)
    std::cout << chainedPrograms << " cases hold several statements (" << chainedMatched << " matched), "
              << threeStatements << " of them three (" << threeMatched << " matched)\n";
  for (const auto& [bug, n] : knownBugs) std::cout << "  " << n << " x known open bug " << bug << "\n";
  if (verbose || tally[Outcome::Refused] > 0) {
    std::multimap<int, std::string, std::greater<>> common;
    for (const auto& [reason, n] : refusals) common.emplace(n, reason);
    std::cout << "most common refusals:\n";
    int shown = 0;
    for (const auto& [n, reason] : common) {
      if (shown++ == 12) break;
      std::cout << "  " << n << " x " << reason << "\n";
    }
  }
  if (requireGpu && (tally[Outcome::CompiledNotRun] > 0 || tally[Outcome::Matched] == 0)) {
    std::cout << "--require-gpu: " << tally[Outcome::CompiledNotRun] << " cases were compiled but not run, "
              << tally[Outcome::Matched] << " ran\n";
    return 1;
  }
  return failures ? 1 : 0;
}
