// Program -> concrete index notation -> imperative IR -> C++ or CUDA, per statement.
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "floating_point.h"
#include "prior_values.h"
#include "schedule_request.h"
#include "tcc/ir/builder.h"
#include "tcc/ir/imperative_printer.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ir/index_replace.h"
#include "tcc/ir/index_visitor.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/concretize_for_lowering.h"
#include "tcc/lowering/intrinsics.h"
#include "tcc/lowering/gpu_default_mapping.h"
#include "tcc/lowering/gpu_spmm_mappings.h"
#include "tcc/lowering/inserted_tensor_names.h"
#include "tcc/lowering/lower.h"
#include "tcc/tcc.h"

namespace tcc {

namespace {

// Merge lattices grow with the number of sparse operands a loop co-iterates
// (every subset can be a case, and each case holds the loops below it), so
// a sum of many sparse terms can lower to a kernel no C++ compiler builds
// in reasonable time. Refuse it instead of hanging in the compiler.
constexpr size_t kLargestKernelLines = 12000;

void refuseOversizedKernel(const ir::imp::Function& function) {
  std::string text = ir::imp::toString(function);
  size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  if (lines > kLargestKernelLines)
    throw lowering::LoweringError("the kernel would have " + std::to_string(lines) + " lines of imperative IR (at most " +
                                  std::to_string(kLargestKernelLines) + " are compiled): its loops co-iterate too many "
                                  "sparse operands; split the statement into several, or store some operands densely");
}

// N:M operands of a statement that the nm_spmm intrinsic does not take are
// read from dense copies (the pruned matrix, converted when the kernel
// runs): returns the statement reading the copies, and lists them. A copy
// takes a name none of `takenNames` has (X_dense for X, where free).
ir::IndexStmt readNmOperandsDensely(const ir::IndexStmt& statement,
                                    std::vector<std::pair<std::string, TensorVar>>& copies,
                                    std::set<std::string>& takenNames) {
  std::unordered_map<TensorVar, TensorVar> substitutions;
  for (const auto& tensor : ir::tensorsRead(statement)) {
    if (!lowering::hasNmLevel(tensor) || substitutions.count(tensor)) continue;
    TensorVar copy(lowering::takeFreshName(tensor.name() + "_dense", takenNames), tensor.shape(),
                   Format(std::vector<ir::LevelFormat>(tensor.order(), ir::LevelFormat::dense())), tensor.datatype(),
                   ir::TensorProvenance::denseCopy(tensor));
    substitutions.emplace(tensor, copy);
    copies.emplace_back(tensor.name(), copy);
  }
  return substitutions.empty() ? statement : ir::replace(statement, substitutions);
}

// One statement to lower: the program's, or a part of it.
struct StatementPart {
  ir::IndexStmt statement;
  size_t programStatement = 0;
  bool temporary = false;  // into a scalar tcc names
};

// On the cuda target, a scalar statement whose sums nest in its expression
// with no loop around them (d = x(i) * y(i) + 2) would keep the sums'
// scalar temporaries on the host, where no GPU thread adds to them. Each
// outermost sum becomes a statement of its own into a scalar tcc names (in
// device memory; its loop mapped as any sum into a scalar), and the
// statement combines the scalars (a one-thread kernel): the parts, or
// nothing where the statement is not such a one. `names`: taken names,
// which the scalars' names join.
std::optional<std::vector<StatementPart>> sumsIntoDeviceScalars(const ir::IndexStmt& statement,
                                                                 size_t index,
                                                                 const lowering::ScheduleRequest& request,
                                                                 std::set<std::string>& names) {
  const auto* assignment = statement.as<ir::AssignmentNode>();
  if (!assignment || assignment->accumulate || assignment->lhs.tensor().order() != 0 || !request.commands.empty() ||
      !request.separatelyAssembled.empty() || request.tensorCore || lowering::isNmSpmmCandidate(statement))
    return std::nullopt;
  lowering::ConcretizedStatement concrete;
  try {
    concrete = lowering::concretizeForLowering(statement, request);
  } catch (const lowering::LoweringError&) {
    return std::nullopt;  // refused where the statement is lowered
  }
  if (!concrete.sumsInTemporaries || concrete.termsAddIntoOutput || !concrete.stmt.as<ir::WhereNode>())
    return std::nullopt;
  const TensorVar& output = assignment->lhs.tensor();
  std::set<std::string> taken = names;
  std::vector<StatementPart> parts;
  std::unordered_map<TensorVar, TensorVar> scalars;
  ir::IndexStmt consumer = concrete.stmt;
  std::vector<ir::IndexStmt> producers;  // innermost where's first: the expression's order
  for (; const auto* where = consumer.as<ir::WhereNode>(); consumer = where->consumer)
    producers.insert(producers.begin(), where->producer);
  for (ir::IndexStmt producer : producers) {
    // Loops around one sum into a scalar temporary.
    std::vector<ir::IndexVar> loops;
    while (const auto* loop = producer.as<ir::ForallNode>()) {
      loops.push_back(loop->indexVar);
      producer = loop->body;
    }
    const auto* sum = producer.as<ir::AssignmentNode>();
    if (!sum || loops.empty() || !sum->accumulate || sum->lhs.tensor().order() != 0) return std::nullopt;
    // A product (divided by constants at most) sums over its variables as
    // the user's statement would (the default mapping cuts it as it cuts
    // theirs); anything else says its sums.
    ir::IndexExpr summed = sum->rhs;
    if (!lowering::isScaledProduct(summed))
      for (auto loop = loops.rbegin(); loop != loops.rend(); ++loop) summed = ir::sum(*loop, summed);
    TensorVar scalar(lowering::takeFreshName(output.name() + "_sum", taken), {}, Format(), sum->lhs.tensor().datatype());
    scalars.emplace(sum->lhs.tensor(), scalar);
    parts.push_back({ir::AssignmentNode::make(ir::AccessNode::make(scalar, {}), summed), index, true});
  }
  const auto* combined = consumer.as<ir::AssignmentNode>();
  if (!combined || combined->accumulate || parts.empty()) return std::nullopt;
  // (A sum's rhs reading another's temporary would need its where inside.)
  for (const auto& part : parts)
    for (const auto& tensor : ir::tensorsRead(part.statement))
      if (scalars.count(tensor)) return std::nullopt;
  parts.push_back({ir::replace(consumer, scalars), index, false});
  names = taken;
  return parts;
}

}  // namespace

namespace {

frontend::Target targetOf(const Program& program, const CompileOptions& options) {
  if (options.target) return *options.target;
  const auto& line = program.syntax().target;
  return line ? line->target : frontend::Target::Cpu;
}

frontend::FloatingPointMode floatingPointOf(const Program& program, const CompileOptions& options) {
  if (options.floatingPoint) return *options.floatingPoint;
  const auto& line = program.syntax().floatingPoint;
  return line ? line->mode : frontend::FloatingPointMode::Strict;
}

// Concretizes again with the default GPU mapping appended to the schedule
// (see gpu_default_mapping.h); a mapping that does not fit is refused with
// the commands it tried.
lowering::ConcretizedStatement withDefaultGpuMapping(const ir::IndexStmt& statement,
                                                     const lowering::ScheduleRequest& request,
                                                     const lowering::ConcretizedStatement& concrete,
                                                     const lowering::GpuMappingOptions& options) {
  std::vector<std::string> reasons;
  auto commands = concrete.sumsInTemporaries
                    ? lowering::defaultGpuMappingOfNestedSums(statement, concrete.stmt, reasons, options)
                    : lowering::defaultGpuMapping(statement, concrete.loopOrder, reasons, options);
  lowering::ScheduleRequest mapped = request;
  mapped.commands.insert(mapped.commands.end(), commands.begin(), commands.end());
  try {
    lowering::ConcretizedStatement result = lowering::concretizeForLowering(statement, mapped);
    result.decisions.insert(result.decisions.end(), reasons.begin(), reasons.end());
    return result;
  } catch (const lowering::ScheduleError& error) {
    // A sum into a scalar whose loop no split or pos can cut (a union of
    // sparse operands, a loop a schedule derived): a thread an iteration.
    if (options.splitSums && !concrete.sumsInTemporaries) {
      lowering::GpuMappingOptions unsplit = options;
      unsplit.splitSums = false;
      std::vector<std::string> ignored;
      if (lowering::defaultGpuMapping(statement, concrete.loopOrder, ignored, unsplit).size() != commands.size())
        return withDefaultGpuMapping(statement, request, concrete, unsplit);
    }
    std::string tried;
    for (const auto& command : commands) tried += (tried.empty() ? "" : " ") + command.text;
    throw lowering::LoweringError("the default GPU mapping (" + tried + ") does not fit this statement: " +
                                  error.what() + "; map its loops with parallelize(..., GPUWarp | GPUThread, ...)");
  }
}

// An alternative mapping the host part picks per input (the lane-sliced
// rows of a CSR output, gpu_default_mapping.h), for a statement the user
// did not schedule at all; nothing where it does not apply.
using AlternativeMapping = std::optional<lowering::BalancedGpuMapping> (*)(const ir::IndexStmt&,
                                                                           const std::vector<ir::IndexVar>&,
                                                                           std::vector<std::string>&);

std::optional<lowering::ConcretizedStatement> withBalancedGpuMapping(const ir::IndexStmt& statement,
                                                                     const lowering::ScheduleRequest& request,
                                                                     const lowering::ConcretizedStatement& concrete,
                                                                     std::string& matrix,
                                                                     AlternativeMapping alternative) {
  if (!request.commands.empty() || !request.separatelyAssembled.empty() || !concrete.convertedInputs.empty() ||
      !concrete.sparseWorkspaces.empty())
    return std::nullopt;
  std::vector<std::string> reasons;
  auto mapping = alternative(statement, concrete.loopOrder, reasons);
  if (!mapping) return std::nullopt;
  lowering::ScheduleRequest mapped = request;
  mapped.commands = mapping->commands;
  lowering::ConcretizedStatement result;
  try {
    result = lowering::concretizeForLowering(statement, mapped);
  } catch (const lowering::ScheduleError&) {
    return std::nullopt;  // the row mapping alone, as before
  }
  result.decisions = reasons;
  matrix = mapping->matrix;
  return result;
}

// The CSR SpMM kernels beside the default's tiles of 64 (see
// gpu_spmm_mappings.h), each concretized, for a statement the user did not
// schedule at all; none where the statement is not a CSR SpMM. An
// alternative the schedule does not take is left out (its input runs the
// tiles of 64).
struct SpmmAlternatives {
  std::string matrix, output;
  std::vector<std::pair<lowering::SpmmKernel, lowering::ConcretizedStatement>> concrete;
  std::vector<std::string> decisions;
};

SpmmAlternatives withSpmmGpuMappings(const ir::IndexStmt& statement, const lowering::ScheduleRequest& request,
                                     const lowering::ConcretizedStatement& concrete,
                                     lowering::NonzeroSplits splits) {
  SpmmAlternatives result;
  if (!request.commands.empty() || !request.separatelyAssembled.empty() || !concrete.convertedInputs.empty() ||
      !concrete.sparseWorkspaces.empty())
    return result;
  auto mappings = lowering::spmmGpuMappings(statement, concrete.loopOrder, splits);
  if (!mappings) return result;
  for (const auto& alternative : mappings->alternatives) {
    lowering::ScheduleRequest mapped = request;
    mapped.commands = alternative.commands;
    try {
      result.concrete.emplace_back(alternative.kernel, lowering::concretizeForLowering(statement, mapped));
    } catch (const lowering::ScheduleError&) {
      continue;
    }
    for (const auto& reason : alternative.reasons)
      result.decisions.push_back("per input, " + lowering::toString(alternative.kernel) + ": " + reason);
  }
  if (result.concrete.empty()) return result;
  result.matrix = mappings->matrix;
  result.output = mappings->output;
  result.decisions.push_back("per input: " + lowering::spmmRuleText(result.matrix, result.output, splits));
  return result;
}

// fp strict keeps a schedule's Atomics on GPU loops, as it keeps them on
// CPU threads: `tcc explain` says that such a sum's order (its last bits)
// may change from run to run.
void noteAtomicSums(const ir::IndexStmt& concrete, const TensorVar& output, std::vector<std::string>& decisions) {
  struct AtomicLoops : ir::IndexNotationVisitor {
    std::string names;
    using ir::IndexNotationVisitor::visit;
    void visit(const ir::ForallNode* loop) override {
      if (loop->attributes.outputRaceStrategy == ir::OutputRaceStrategy::Atomics &&
          ir::isGpuUnit(loop->attributes.parallelUnit))
        names += (names.empty() ? "" : ", ") + loop->indexVar.name();
      ir::IndexNotationVisitor::visit(loop);
    }
  } atomic;
  atomic.walk(concrete);
  const std::string& loops = atomic.names;
  if (loops.empty()) return;
  decisions.push_back("fp strict: the schedule's Atomics on the GPU loops over " + loops + " are kept; where their "
                      "threads add into the same entries of " + output.name() + " the additions come in another "
                      "order each run (the last bits may differ between runs); a ParallelReduction, or a GPU loop "
                      "over an index of " + output.name() + ", keeps one order");
}

// Lowers `ordered`, the statement with its GPU units exchanged or
// collapsed (orderGpuUnits). Where it does not lower, the statement as
// scheduled is refused for its own reason: the units' order at the
// parallelize, followed by the rewrite's refusal, or a refusal the
// lowering meets before the units' order, as it was.
ir::imp::Function lowerOrderedUnits(const ir::IndexStmt& ordered, const ir::IndexStmt& asScheduled,
                                    const std::vector<TensorVar>& parameters, const lowering::LowerOptions& options) {
  try {
    return lowering::lower(ordered, parameters, options);
  } catch (const lowering::LoweringError& rewritten) {
    try {
      lowering::LowerOptions unordered = options;
      unordered.gpuUnitsKept.clear();  // (said of the rewritten loops)
      return lowering::lower(asScheduled, parameters, unordered);
    } catch (const lowering::LoweringError& error) {
      if (!error.gpuUnitsOutOfOrder()) throw;
      throw lowering::LoweringError(std::string(error.what()) + " (with the GPU units in order, exchanged or "
                                    "collapsed as `tcc explain` says, the statement is refused too: " +
                                    rewritten.what() + ")",
                                    error.command());
    }
  }
}

}  // namespace

Lowered lowerProgram(const Program& program, const CompileOptions& options) {
  Lowered lowered;
  lowered.target = targetOf(program, options);
  lowered.floatingPoint = floatingPointOf(program, options);
  const bool cuda = lowered.target == frontend::Target::Cuda;
  std::vector<ir::imp::Function> functions;
  std::set<std::string> takenNames;
  for (const auto& tensor : program.tensors()) takenNames.insert(tensor.name());
  std::vector<StatementPart> parts;
  std::vector<TensorVar> temporaries;  // the parts' scalars
  std::vector<std::string> splitDecisions(program.statements().size());
  std::vector<PriorValuesRewrite> inPlace;  // per program statement
  for (const auto& statement : program.statements()) inPlace.push_back(readPriorValues(statement, takenNames));
  for (size_t index = 0; index < program.statements().size(); ++index) {
    const ir::IndexStmt& statement = inPlace[index].statement;
    std::optional<std::vector<StatementPart>> split;
    if (cuda) {
      try {
        ScheduleForStatement schedule = scheduleRequestFor(program.syntax(), statement);
        readPriorValues(schedule.request, inPlace[index]);
        schedule.request.cudaTarget = true;
        schedule.request.takenNames = takenNames;
        split = sumsIntoDeviceScalars(statement, index, schedule.request, takenNames);
      } catch (const std::exception&) {
        // (refused where the statement is lowered)
      }
    }
    if (!split) {
      parts.push_back({statement, index, false});
      continue;
    }
    std::string scalars;
    for (const auto& part : *split) {
      if (part.temporary) {
        temporaries.push_back(ir::tensorsWritten(part.statement)[0]);
        scalars += (scalars.empty() ? "" : ", ") + temporaries.back().name();
      }
      parts.push_back(part);
    }
    splitDecisions[index] = "the sums nested in the expression would be scalar temporaries outside every loop, on the "
                            "host, where no GPU thread adds to them: each is computed by a statement of its own into "
                            "a scalar in device memory (" + scalars + "; above), its loop mapped as a sum into a "
                            "scalar, and `" + ir::toString(split->back().statement) + "` combines them";
  }
  for (size_t partIndex = 0; partIndex < parts.size(); ++partIndex) {
    const size_t index = parts[partIndex].programStatement;
    const ir::IndexStmt& statement = parts[partIndex].statement;
    ScheduleForStatement schedule;  // where refusals are located
    try {
      CompiledStatement compiled;
      compiled.statement = statement;
      compiled.programStatement = index;
      compiled.temporary = parts[partIndex].temporary;
      auto written = ir::tensorsWritten(statement);
      if (written.size() != 1) throw lowering::LoweringError("a statement must write exactly one tensor");
      compiled.output = written[0];
      auto read = ir::tensorsRead(statement);
      if (std::find(read.begin(), read.end(), compiled.output) != read.end())
        throw lowering::LoweringError(compiled.output.name() + " is both read and written by this statement; in-place "
                                      "updates are not supported yet: write the result to a new tensor");
      compiled.computedOutput = compiled.output;
      compiled.priorValues = inPlace[index].prior;
      schedule = scheduleRequestFor(program.syntax(), statement);
      readPriorValues(schedule.request, inPlace[index]);
      schedule.request.cudaTarget = cuda;
      schedule.request.takenNames.insert(takenNames.begin(), takenNames.end());
      // On the cuda target a product with an N:M operand is the nm_spmm
      // intrinsic's (it maps no loops); elsewhere N:M operands are dense copies.
      const bool nmIntrinsic = cuda && lowering::isNmSpmmCandidate(statement);
      std::vector<std::pair<std::string, TensorVar>> nmCopies;
      const ir::IndexStmt denseNm =
          nmIntrinsic ? statement : readNmOperandsDensely(statement, nmCopies, schedule.request.takenNames);
      const lowering::ScheduleRequest& request = schedule.request;
      lowering::ConcretizedStatement concrete = lowering::concretizeForLowering(denseNm, request);
      // tensorcore() asks for an intrinsic, which maps its own loops. A CSR
      // SpMM gets two mappings, picked per input by row lengths.
      SpmmAlternatives spmm;
      // A CSR output gets two too: a thread a row, or a warp a row with the
      // row's columns cut among the lanes, picked per input by row lengths.
      std::optional<lowering::ConcretizedStatement> laneSliced;
      std::string laneSlicedMatrix;
      const bool defaultGpuMapping =
        cuda && !nmIntrinsic && !request.tensorCore && !lowering::parallelizesLoops(request);
      // fp strict: every sum the default mapping makes into a
      // floating-point output comes in one order every run.
      const bool strict = lowered.floatingPoint == frontend::FloatingPointMode::Strict;
      if (defaultGpuMapping && concrete.termsAddIntoOutput) {
        concrete.stmt = lowering::mapTermNestsToGpuThreads(concrete.stmt, concrete.decisions, strict);
      } else if (defaultGpuMapping) {
        spmm = withSpmmGpuMappings(denseNm, request, concrete,
                                   strict ? lowering::NonzeroSplits::InOneOrder : lowering::NonzeroSplits::Atomic);
        if (spmm.concrete.empty())
          laneSliced = withBalancedGpuMapping(denseNm, request, concrete, laneSlicedMatrix,
                                              lowering::laneSlicedGpuMapping);
        lowering::GpuMappingOptions mappingOptions;
        mappingOptions.sumsInOneOrder = strict;
        mappingOptions.concrete = concrete.stmt;
        if (const auto* scheduled = concrete.stmt.as<ir::SuchThatNode>()) mappingOptions.relations = scheduled->relations;
        concrete = withDefaultGpuMapping(denseNm, request, concrete, mappingOptions);
        concrete.decisions.insert(concrete.decisions.end(), spmm.decisions.begin(), spmm.decisions.end());
      }
      // A fill loop no command can name (a precompute's loop over its
      // workspace's own index) would be left on the host. (Sparse
      // workspaces stay refused at the parallelize that would share them.)
      if (cuda && !nmIntrinsic && !request.tensorCore && concrete.sparseWorkspaces.empty())
        concrete.stmt = lowering::mapWorkspaceFillsToGpuThreads(concrete.stmt, concrete.decisions);
      // GPU units out of order, exchanged or collapsed; the statement as
      // scheduled is kept for the refusal where the rewrite does not lower.
      std::optional<ir::IndexStmt> asScheduled;
      std::map<std::string, std::string> unitsKept;
      if (cuda && !nmIntrinsic && !request.tensorCore) {
        ir::IndexStmt ordered = lowering::orderGpuUnits(concrete.stmt, concrete.decisions, unitsKept);
        if (!(ordered == concrete.stmt)) asScheduled = std::exchange(concrete.stmt, ordered);
      }
      for (const auto& [input, copy] : nmCopies) {
        concrete.convertedInputs.insert(concrete.convertedInputs.begin(), {input, copy});
        concrete.decisions.push_back(input + " is N:M; this statement reads it from a dense copy " + copy.name() +
                                     " (the pruned matrix), converted when the kernel runs");
      }
      if (cuda && !concrete.sparseWorkspaces.empty())
        concrete.decisions.push_back("on the cuda target a sparse workspace whose where runs inside a GPU loop is a "
                                     "coordinate list and values per GPU thread (twice the workspace's dimension), "
                                     "sorted and merged in the thread, whatever the policy; outside every GPU "
                                     "loop a dense output takes the results directly, and a sparse one's "
                                     "workspace is refused");
      if (cuda && strict && !defaultGpuMapping && ir::isFloat(compiled.output.datatype()))
        noteAtomicSums(concrete.stmt, compiled.output, concrete.decisions);
      if (cuda && (nmIntrinsic || request.tensorCore))
        concrete.decisions.push_back(std::string("floating point: the ") + (nmIntrinsic ? "nm_spmm" : "TCA-SpMM") +
                                     " intrinsic's kernels keep their own numerics in fp strict and fast alike "
                                     "(tensor-core products, their own order of sums); fp strict's rounded products "
                                     "and one-order sums are for the loops tcc maps");
      compiled.decisions = concrete.decisions;
      if (compiled.priorValues.defined() && !compiled.temporary)
        compiled.decisions.push_back(compiled.output.name() + " is read and written by this statement: it reads " +
                                     compiled.output.name() + "'s values from before the statement as " +
                                     compiled.priorValues.name() + " (" + compiled.output.name() +
                                     "'s storage as the statement starts; the result goes to new storage)");
      if (!compiled.temporary && !splitDecisions[index].empty())
        compiled.decisions.insert(compiled.decisions.begin(), splitDecisions[index]);
      const Format& declared = compiled.output.format();
      // A sparse workspace compresses into any level chain; appending needs
      // an assemblable one.
      if (compiled.output.order() > 0 && !lowering::isAssemblableOutputFormat(declared) &&
          concrete.sparseWorkspaces.empty()) {
        Format computed = lowering::nearestAssemblableFormat(declared);
        compiled.computedOutput = TensorVar(compiled.output.name(), compiled.output.shape(), computed,
                                            compiled.output.datatype(),
                                            ir::TensorProvenance::computedOutput(compiled.output));
        concrete.stmt = ir::replace(concrete.stmt,
                                    std::unordered_map<TensorVar, TensorVar>{{compiled.output, compiled.computedOutput}});
        if (asScheduled)
          asScheduled = ir::replace(*asScheduled, std::unordered_map<TensorVar, TensorVar>{
                                                      {compiled.output, compiled.computedOutput}});
        compiled.decisions.push_back(compiled.output.name() + " is assembled as " + computed.toString() +
                                     " and converted to " + declared.toString() + " after the kernel");
      }
      compiled.concrete = concrete.stmt;
      auto used = ir::tensorsRead(compiled.concrete);
      for (const auto& tensor : program.tensors()) {
        bool isUsed = tensor == compiled.output || std::find(used.begin(), used.end(), tensor) != used.end();
        if (isUsed) compiled.parameters.push_back(tensor == compiled.output ? compiled.computedOutput : tensor);
      }
      if (compiled.priorValues.defined() && std::find(used.begin(), used.end(), compiled.priorValues) != used.end())
        compiled.parameters.push_back(compiled.priorValues);
      for (const auto& scalar : temporaries)
        if (scalar == compiled.output || std::find(used.begin(), used.end(), scalar) != used.end())
          compiled.parameters.push_back(scalar);
      compiled.convertedInputs = concrete.convertedInputs;
      for (const auto& [input, copy] : concrete.convertedInputs) compiled.parameters.push_back(copy);
      lowering::LowerOptions lowerOptions;
      lowerOptions.functionName = options.functionPrefix + "_" + std::to_string(partIndex);
      lowerOptions.sparseWorkspaces = concrete.sparseWorkspaces;
      lowerOptions.cudaTarget = cuda;
      lowerOptions.tensorCore = request.tensorCore;
      lowerOptions.rowsInOnePass = options.rowsInOnePass;
      lowerOptions.hoistNestedSums = options.hoistNestedSums;
      lowerOptions.oneMergeLoop = options.oneMergeLoop;
      lowerOptions.mergeLoopSwitch = options.mergeLoopSwitch;
      lowerOptions.gpuParallelPrefixSums = options.gpuParallelPrefixSums;
      lowerOptions.hugePages = hugePages(options);
      const auto& separate = request.separatelyAssembled;
      lowerOptions.separateAssembly =
          std::find(separate.begin(), separate.end(), compiled.output.name()) != separate.end();
      if (lowerOptions.separateAssembly)
        compiled.decisions.push_back(compiled.output.name() + " is assembled in a pass of its own, then computed");
      lowerOptions.commands = lowering::loopCommandsOf(request, concrete.outputOrderCommand);
      lowerOptions.commands.defaultGpuMapping = defaultGpuMapping;
      lowerOptions.gpuUnitsKept = unitsKept;
      compiled.function = asScheduled ? lowerOrderedUnits(compiled.concrete, *asScheduled, compiled.parameters,
                                                          lowerOptions)
                                      : lowering::lower(compiled.concrete, compiled.parameters, lowerOptions);
      // A statement an intrinsic took (TCA-SpMM) maps no loops: no choice.
      if (!spmm.concrete.empty() && !lowering::intrinsicDecision(compiled.function)) {
        std::vector<lowering::LoweredSpmmKernel> kernels;
        for (const auto& [kernel, alternative] : spmm.concrete) {
          ir::imp::Function function = lowering::lower(alternative.stmt, compiled.parameters, lowerOptions);
          // (fp strict: the split's atomic additions become sums in one
          // order; where they cannot, its inputs run the tiles of 64.)
          if (lowering::isOrderedSplit(kernel)) {
            auto ordered = lowering::orderedSplitSums(function, spmm.matrix, spmm.output, lowering::shareOf(kernel));
            if (!ordered) continue;
            function = *ordered;
          }
          kernels.push_back({kernel, function});
        }
        compiled.function = lowering::chooseSpmmKernel(compiled.function, kernels, spmm.matrix, spmm.output);
      }
      if (laneSliced && !lowering::intrinsicDecision(compiled.function)) {
        // (Where the lanes cannot slice a row, an unordered operand say, a
        // thread a row alone, as before.)
        std::optional<ir::imp::Function> lanes;
        try {
          lanes = lowering::lower(laneSliced->stmt, compiled.parameters, lowerOptions);
        } catch (const lowering::LoweringError&) {
        }
        if (lanes) {
          compiled.function = lowering::chooseLaneSlicedRows(compiled.function, *lanes, laneSlicedMatrix);
          compiled.decisions.insert(compiled.decisions.end(), laneSliced->decisions.begin(),
                                    laneSliced->decisions.end());
          compiled.decisions.push_back("per input: " + lowering::laneSlicedRuleText(laneSlicedMatrix));
        }
      }
      refuseOversizedKernel(compiled.function);
      if (auto note = lowering::intrinsicDecision(compiled.function)) compiled.decisions = {*note};
      if (cuda)
        lowered.gpuFunctions.push_back(lowering::splitIntoKernels(compiled.function, options.gpuSpeculativeJamLoads));
      functions.push_back(compiled.function);
      lowered.statements.push_back(std::move(compiled));
    } catch (const lowering::LoweringError& error) {
      // At the schedule command the refusal names (a race under a
      // parallelize, a split's order, ...), else at the statement as a whole.
      if (auto command = error.command(); command && *command < schedule.sources.size())
        refuseScheduleCommand(program.syntax(), *schedule.sources[*command], error.what());
      if (error.atTensorCore() && schedule.tensorCoreSource)
        refuseScheduleCommand(program.syntax(), *schedule.tensorCoreSource, error.what());
      const std::string part = parts[partIndex].temporary
                                   ? "computing `" + ir::toString(statement) + "` (a sum of it, into a scalar in "
                                     "device memory): "
                                   : "";
      refuseStatement(program.syntax(), index,
                      "cannot compile `" + ir::toString(program.statements()[index]) + "`: " + part + error.what());
    }
  }
  if (cuda) {
    const lowering::FloatingPointMode mode = detail::toLowering(lowered.floatingPoint);
    lowered.cuda = lowering::emitCudaUnit(lowered.gpuFunctions, mode);
    lowered.cudaKernels = lowering::emitCudaKernels(lowered.gpuFunctions, mode);
  } else {
    auto generator = lowering::makeCodeGenerator(lowering::TargetKind::Cpu, detail::toLowering(lowered.floatingPoint));
    lowered.cpp = generator->emit(functions);
  }
  return lowered;
}

}  // namespace tcc
