// Tensor arrays, sparse-output assembly, expressions and stores.
#include <algorithm>
#include <cctype>

#include "access_occurrences.h"
#include "lowerer.h"
#include "tcc/ir/imperative_dead_code.h"
#include "tcc/ir/imperative_ops.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {

constexpr int64_t kInitialCapacity = 1024;

Expr asInt64(const Expr& e) { return ops::cast(imp::Type::int64(), e); }

// A statement of scalars alone (`a = b * c - 2`): no loop, no call.
bool isScalarArithmetic(const ir::IndexStmt& cin) {
  const auto* assignment = cin.as<ir::AssignmentNode>();
  if (!assignment || assignment->lhs.tensor().order() != 0) return false;
  for (const auto* access : accessOccurrences(cin))
    if (access->tensor.order() != 0) return false;
  bool call = false;
  struct Calls : ir::IndexNotationVisitor {
    bool* found;
    using ir::IndexNotationVisitor::visit;
    void visit(const ir::CallNode*) override { *found = true; }
  } calls;
  calls.found = &call;
  calls.walk(cin);
  return !call;
}

// Levels strictly above `level` are all dense.
bool parentsDense(const ir::Format& format, int level) {
  for (int l = 0; l < level; ++l)
    if (!format.level(l).isDense()) return false;
  return true;
}

}  // namespace

bool isAssemblableOutputFormat(const ir::Format& format) {
  bool sparseSeen = false;
  for (const auto& level : format.levels()) {
    if (level.kind == ir::LevelKind::Dense) {
      if (sparseSeen) return false;
    } else if (level.kind == ir::LevelKind::Compressed && level.unique) {
      sparseSeen = true;
    } else {
      return false;
    }
  }
  return true;
}

ir::Format nearestAssemblableFormat(const ir::Format& format) {
  std::vector<ir::LevelFormat> levels;
  bool sparseSeen = false;
  for (const auto& level : format.levels()) {
    sparseSeen = sparseSeen || !level.isDense();
    levels.push_back(sparseSeen ? ir::LevelFormat::compressed() : ir::LevelFormat::dense());
  }
  return ir::Format(levels, format.modeOrdering());
}

Lowerer::Lowerer(std::vector<ir::TensorVar> parameters, LowerOptions options)
    : parameters_(std::move(parameters)), options_(std::move(options)) {
  for (const char* reserved : {"malloc", "calloc", "realloc", "free", "memset", "memcpy", "omp_get_thread_num", "omp_get_max_threads", "sched_yield", "tcc_min", "tcc_max",
                               "tcc_sort_coordinates", "tcc_order_touched", "tcc_segment_of", "tcc_lower_bound", "tcc_gpu_thread_index", "tcc_gpu_thread_count", "tcc_tensors", "tcc_tensor",
                               "tcc_store", "tcc_stream", "tcc_stream_fence", "tcc_stream_bytes", "tcc_pages_resident",
                               "tcc_claim_chunk", "tcc_chunk_offset", "tcc_chunk_total", "tcc_rows_per_chunk",
                               "tcc_chunk_capacity", "tcc_alloc", "tcc_alloc_zeroed", "tcc_realloc",
                               "tcc_array_alloc", "tcc_array_alloc_zeroed", "tcc_array_realloc", "tcc_array_is_huge",
                               "posix_memalign", "madvise", "int", "for", "while", "if",
                               "else", "do", "double", "float", "bool", "char", "long", "short", "return", "break",
                               "case", "switch", "new", "delete", "this", "true", "false", "auto", "const"})
    usedNames_.insert(reserved);
}

namespace {
bool fillsOnThreads(const ir::IndexStmt& producer) {
  for (const auto* forall : statementsOf<ir::ForallNode>(producer))
    if (forall->attributes.onThreads()) return true;
  return false;
}
}  // namespace

imp::Function Lowerer::run(const ir::IndexStmt& cin) {
  statement_ = cin;
  std::set<ir::TensorVar> written;
  for (const auto& tensor : ir::tensorsWritten(cin)) written.insert(tensor);
  for (const auto& tensor : parameters_)
    if (written.count(tensor) && tensor.datatype() == ir::Datatype::Float64) float16ReadAs_ = imp::Type::float64();
  std::set<ir::TensorVar> writtenOnce;
  for (const auto* assignment : ir::assignmentsOf(cin))
    if (!writtenOnce.insert(assignment->lhs.tensor()).second && isParameter(assignment->lhs.tensor()))
      outputsOfSeveralAssignments_.insert(assignment->lhs.tensor());
  imp::Function function;
  function.name = options_.functionName;
  for (const auto& tensor : parameters_) {
    if (usedNames_.count(tensor.name()))
      throw LoweringError("tensor name '" + tensor.name() + "' is reserved in generated code; rename it");
    usedNames_.insert(tensor.name());
    if (written.count(tensor) && tensor.datatype() == ir::Datatype::Float16)
      throw LoweringError("output " + tensor.name() + " is float16, which tcc reads but does not compute into: "
                          "declare it float32 (float16 inputs are read as float32, exactly)");
    function.parameters.push_back({tensor.name(), tensor.order(), valueType(tensor).kind, written.count(tensor) > 0});
  }
  for (const auto* suchThat : statementsOf<ir::SuchThatNode>(cin)) {
    for (const auto& relation : suchThat->relations) {
      relations_.push_back(relation);
      for (const auto& derived : ir::derivedVars(relation)) relationOf_.emplace(derived, relation);
    }
  }
  // Outputs that a consumer copies out of a sparse workspace are filled by
  // the workspace's Compress, not appended to.
  // Others (inside hoisted loops, or read by more than a copy) are drained
  // after each fill and read by their consumer like compressed inputs.
  std::map<ir::TensorVar, ir::TensorVar> sparseWorkspaceOutputs;  // workspace -> output
  std::map<ir::TensorVar, std::vector<ir::IndexVar>> drainedWorkspaces;  // workspace -> its indices
  std::set<const ir::WhereNode*> nestedWheres;
  for (const auto* forall : statementsOf<ir::ForallNode>(cin))
    for (const auto* where : whereStatements(forall->body)) nestedWheres.insert(where);
  for (const auto* where : whereStatements(cin)) {
    for (const auto& tensor : ir::tensorsWritten(where->producer)) {
      if (isParameter(tensor) || tensor.order() == 0 || tensor.format().isAllDense()) continue;
      const ir::AssignmentNode* copy = soleAssignment(where->consumer);
      const auto* read = copy ? copy->rhs.as<ir::AccessNode>() : nullptr;
      bool copiedOnce = !nestedWheres.count(where) && read && read->tensor == tensor &&
                        read->indices == copy->lhs.indices() && isParameter(copy->lhs.tensor()) &&
                        copy->lhs.tensor().order() == tensor.order() &&
                        copy->lhs.tensor().format().modeOrdering() == tensor.format().modeOrdering();
      if (copiedOnce) {
        sparseWorkspaceOutputs.emplace(tensor, copy->lhs.tensor());
        continue;
      }
      for (const auto* access : accessOccurrences(where->producer))
        if (access->tensor == tensor) drainedWorkspaces.emplace(tensor, access->indices);
    }
  }
  for (const auto& [workspace, output] : sparseWorkspaceOutputs) sparseWorkspaceOutputs_.insert(output);
  visitOrder_ = outputVisitOrder(cin, relations_, [&](const ir::TensorVar& tensor) {
    return written.count(tensor) && isParameter(tensor) && !sparseWorkspaceOutputs_.count(tensor);
  });
  // Workspaces filled inside a parallel loop get one copy per thread;
  // outputs whose rows a parallel loop produces are assembled row-parallel.
  std::set<const ir::WhereNode*> parallelWheres, gpuWheres;
  for (const auto* forall : statementsOf<ir::ForallNode>(cin)) {
    if (ir::isGpuUnit(forall->attributes.parallelUnit))
      for (const auto* where : whereStatements(forall->body)) gpuWheres.insert(where);
    // (On the cuda target a GPU loop over rows assembles them as CPU
    // threads do: a kernel counts each row's entries, GPU loops turn the
    // counts into offsets, the host allocates, a kernel fills.)
    const bool gpuRows = options_.cudaTarget && ir::isGpuUnit(forall->attributes.parallelUnit);
    if (!forall->attributes.onThreads() && !gpuRows) continue;
    if (forall->attributes.onThreads())
      for (const auto* where : whereStatements(forall->body)) parallelWheres.insert(where);
    for (const auto* assignment : ir::assignmentsOf(forall->body)) {
      const ir::TensorVar& output = assignment->lhs.tensor();
      if (isParameter(output) && output.order() > 0 && !output.format().isAllDense() &&
          rowsAssembledInParallel(assignment->lhs, forall->indexVar)) {
        rowParallelOutputs_.insert(output);
        rowParallelVars_.insert(forall->indexVar);
      }
    }
  }
  // (Its rows may each be split among a warp's lanes.)
  planLaneSlicedRows(cin);
  // (Or an output appended by the ranges of a thread loop in coordinate
  // chunks: the top loop, under the schedule's relations if any.)
  const auto* suchThat = cin.as<ir::SuchThatNode>();
  if (const auto* top = (suchThat ? suchThat->stmt : cin).as<ir::ForallNode>(); top && rowParallelOutputs_.empty()) {
    if (const ir::AssignmentNode* appended = assignmentAppendedByRanges(top)) {
      rangeAppended_ = RangeAppendedOutput{appended->lhs.tensor(), top->indexVar, Expr(), {}, false, false, {}};
      rangeAppended_->onGpu = options_.cudaTarget;
    }
  }
  for (const auto& tensor : ir::tensorsOnlyWrittenOnce(cin))
    if (isParameter(tensor) && tensor.order() > 0 && !tensor.format().isAllDense() &&
        !sparseWorkspaceOutputs_.count(tensor))
      streamedOutputs_.insert(tensor);
  for (const auto& tensor : parameters_) declareTensor(tensor, written.count(tensor) > 0);
  for (const auto* access : accessOccurrences(cin)) {
    if (!isParameter(access->tensor)) continue;
    const TensorStorage& storage = storageOf(access->tensor);
    for (size_t mode = 0; mode < access->indices.size(); ++mode) {
      dimensions_.emplace(access->indices[mode], storage.dims[mode]);
      dimensionFields_.emplace(access->indices[mode],
                               imp::TensorProperty::make(access->tensor.name(), imp::TensorField::Dim,
                                                         static_cast<int>(mode)));
    }
  }
  // Workspaces are allocated once, before any loop; the ones a sparse
  // output consumes keep a list of the coordinates they hold. (On the
  // cuda target that is on the host, or in each GPU thread: one a command
  // asked for is refused at it.)
  // (A sparse one runs there only under a GPU loop: refuseSparseWorkspaceOnGpu.)
  if (const auto& asked = options_.commands.workspace; asked && options_.cudaTarget)
    for (const auto* where : whereStatements(cin))
      for (const auto& tensor : ir::tensorsWritten(where->producer))
        if (!isParameter(tensor) && tensor.order() > 0 && !tensor.format().isAllDense())
          refuseSparseWorkspaceOnGpu(*asked, tensor, where, drainedWorkspaces.count(tensor) > 0,
                                     gpuWheres.count(where) > 0);
  for (const auto* where : whereStatements(cin)) {
    bool sparseConsumer = false;
    for (const auto& tensor : ir::tensorsWritten(where->consumer))
      if (tensor.order() > 0 && !tensor.format().isAllDense()) sparseConsumer = true;
    // A workspace that a where inside this one's producer fills (a
    // precompute nested in another's expression) is that where's: it may
    // stand under a thread loop this one is outside of.
    std::set<ir::TensorVar> filledInside;
    for (const auto* nested : whereStatements(where->producer))
      for (const auto& tensor : ir::tensorsWritten(nested->producer)) filledInside.insert(tensor);
    for (const auto& tensor : ir::tensorsWritten(where->producer)) {
      if (isParameter(tensor) || storage_.count(tensor) || filledInside.count(tensor)) continue;
      if (sparseWorkspaceOutputs.count(tensor)) {
        declareSparseWorkspace(tensor, sparseWorkspaceOutputs.at(tensor), fillsOnThreads(where->producer));
      } else if (drainedWorkspaces.count(tensor) && options_.cudaTarget && gpuWheres.count(where) && !sparseConsumer &&
                 tensor.order() == 1) {
        std::vector<Expr> dims;
        for (const auto& var : drainedWorkspaces.at(tensor)) {
          auto dim = dimensions_.find(var);
          if (dim == dimensions_.end()) throw LoweringError("cannot size sparse workspace " + tensor.name());
          dims.push_back(dim->second);
        }
        declareGpuThreadSparseWorkspace(tensor, dims);
      } else if (drainedWorkspaces.count(tensor)) {
        for (const auto* forall : statementsOf<ir::ForallNode>(where->producer)) {
          if (!forall->attributes.onThreads()) continue;
          // At the parallelize that put the fill on threads.
          const auto& attributes = forall->attributes;
          throw LoweringError("parallelize(" + forall->indexVar.name() + ", " + ir::toString(attributes.parallelUnit) +
                                  ", " + ir::toString(attributes.outputRaceStrategy) + "): " +
                                  workspaceInWords(tensor) + " is drained after each fill, which threads cannot share; "
                                  "parallelize a loop above it, or none",
                              options_.commands.parallelizeOf(forall->indexVar, attributes.parallelUnit,
                                                              attributes.outputRaceStrategy));
        }
        std::vector<Expr> dims;
        for (const auto& var : drainedWorkspaces.at(tensor)) {
          auto dim = dimensions_.find(var);
          if (dim == dimensions_.end()) throw LoweringError("cannot size sparse workspace " + tensor.name());
          dims.push_back(dim->second);
        }
        declareDrainedSparseWorkspace(tensor, dims, parallelWheres.count(where) > 0);
      } else if (options_.cudaTarget && tensor.order() > 0 && !sparseConsumer && gpuWheres.count(where)) {
        declareGpuThreadWorkspace(tensor);
      } else {
        declareWorkspace(tensor, sparseConsumer && tensor.order() == 1, parallelWheres.count(where) > 0);
        TensorStorage& declared = storageOf(tensor);
        if (options_.cudaTarget && tensor.order() > 0 && !sparseConsumer) {
          declared.sharedOnGpu = true;
          gpuSharedWorkspaces_.push_back(declared.vals);
        }
      }
    }
  }
  // A variable that only a dense workspace reads (a precompute into w(iw)
  // leaves its consumer reading w(i) alone) takes the workspace's size.
  for (const auto* access : accessOccurrences(cin)) {
    auto storage = storage_.find(access->tensor);
    if (storage == storage_.end() || !storage->second.isWorkspace) continue;
    const auto& dims = storage->second.dims;
    for (size_t mode = 0; mode < access->indices.size() && mode < dims.size(); ++mode)
      dimensions_.emplace(access->indices[mode], dims[mode]);
  }
  // A pass of its own assembles the outputs the loops append to; one that a
  // sparse workspace's Compress fills is assembled by it (a second pass
  // would fill the workspace it destroyed).
  bool appendsToOutputs = std::any_of(parameters_.begin(), parameters_.end(), [&](const ir::TensorVar& tensor) {
    return written.count(tensor) && tensor.order() > 0 && !tensor.format().isAllDense() &&
           !sparseWorkspaceOutputs_.count(tensor);
  });
  std::vector<Stmt> passes;
  std::optional<std::vector<Stmt>> onePass;
  if (!rowParallelOutputs_.empty() && !options_.cudaTarget) onePass = lowerRowsInOnePass(cin);
  if (onePass) {
    passes = std::move(*onePass);
  } else if (rangeAppended_) {
    passes = lowerRangesAppendingInTwoPasses(cin);
  } else if (laneSlicedRows_) {
    passes = lowerLaneSlicedRowsInTwoPasses(cin);
  } else if (!rowParallelOutputs_.empty()) {
    pass_ = OutputPass::Count;
    passes.push_back(imp::Comment::make("count the entries of each row of the sparse outputs, rows in parallel"));
    passes.push_back(lower(cin));
    for (const auto& tensor : rowParallelOutputs_) {
      TensorStorage& storage = storageOf(tensor);
      Expr rows = asInt64(storage.dims[tensor.format().modeOfLevel(0)]);
      const Expr& pos = storage.pos[1];
      if (options_.cudaTarget) {
        // (By GPU loops: the host neither loops nor writes device memory.)
        std::vector<Stmt> prefixSums = gpuPrefixSums({pos}, rows, "the row sizes");
        passes.insert(passes.end(), prefixSums.begin(), prefixSums.end());
      } else {
        Expr row = freshVar("p" + storage.name + "1_offset", imp::Type::int64());
        passes.push_back(imp::For::make(row, ops::int64Imm(0), rows,
                                        imp::Store::make(pos, ops::add(row, ops::int64Imm(1)), imp::Load::make(pos, row), true),
                                        imp::LoopKind::Serial, "row sizes to row offsets (prefix sum)"));
      }
      passes.push_back(imp::Assign::make(storage.appendPosition[1], imp::Load::make(pos, rows)));
      Expr entries = ops::max(storage.appendPosition[1], ops::int64Imm(1));
      // (The counting pass wrote no coordinates: none to keep. On the cuda
      // target nothing was allocated for them yet.)
      Expr kept = options_.cudaTarget ? Expr() : ops::int64Imm(0);
      passes.push_back(imp::Allocate::make(storage.crd[1], entries, false, kept));
      passes.push_back(imp::Allocate::make(storage.vals, entries));
    }
    passes.push_back(imp::Comment::make("fill coordinates and values from each row's offset, rows in parallel"));
    pass_ = OutputPass::Fill;
    passes.push_back(lower(cin));
  } else if (options_.separateAssembly && appendsToOutputs) {
    pass_ = OutputPass::Assemble;
    passes.push_back(imp::Comment::make("assemble the sparse outputs: pos and crd"));
    passes.push_back(lower(cin));
    passes.push_back(imp::Comment::make("compute the values into exactly sized arrays"));
    for (const auto& tensor : parameters_) {
      const TensorStorage& storage = storageOf(tensor);
      if (!storage.vals.defined() || !storage.isOutput || tensor.order() == 0 || tensor.format().isAllDense()) continue;
      Expr count = storage.appendPosition[tensor.order() - 1];
      passes.push_back(imp::Allocate::make(storage.vals, ops::max(count, ops::int64Imm(1))));
      for (const auto& append : storage.appendPosition)
        if (append.defined()) passes.push_back(imp::Assign::make(append, ops::int64Imm(0)));
    }
    pass_ = OutputPass::Compute;
    passes.push_back(lower(cin));
  } else if (options_.cudaTarget && isScalarArithmetic(cin)) {
    // No loop to map to the GPU: one GPU thread computes the statement.
    Expr thread = freshVar("thread", imp::Type::int32());
    passes.push_back(imp::For::make(thread, ops::IntImm::make(0), ops::IntImm::make(1), lower(cin),
                                    imp::LoopKind::GpuThread, "the statement, once (it has no loops)"));
  } else {
    passes.push_back(lower(cin));
  }
  finishOutputs();
  // A schedule's bounds are promises about the inputs: checked before
  // anything is allocated.
  std::vector<Stmt> stmts;
  for (const auto& [var, bound] : promisedBounds_) {
    Expr dimension = dimensionFields_.at(var);
    Expr broken = bound.kind == ir::BoundKind::MaxExact ? ops::ne(dimension, ops::IntImm::make(bound.value))
                                                        : ops::gt(dimension, ops::IntImm::make(bound.value));
    stmts.push_back(imp::If::make(broken, imp::Return::make(ops::IntImm::make(kBrokenBoundStatus))));
  }
  // The tensors' arrays, declared now that the loops have suggested the
  // outputs' first capacities; then the workspaces.
  for (const auto& tensor : parameters_) {
    std::vector<Stmt> declarations = declarationsOf(tensor);
    stmts.insert(stmts.end(), declarations.begin(), declarations.end());
  }
  stmts.insert(stmts.end(), header_.begin(), header_.end());
  stmts.insert(stmts.end(), passes.begin(), passes.end());
  stmts.insert(stmts.end(), footer_.begin(), footer_.end());
  function.body = imp::removeUnusedDeclarations(ops::simplify(imp::Block::make(stmts)));
  function.usesOpenMP = usesOpenMP_;
  function.gpuThreadScratch = gpuThreadScratch_;
  function.gpuSharedWorkspaces = gpuSharedWorkspaces_;
  function.usesSparseWorkspaces = std::any_of(storage_.begin(), storage_.end(),
                                              [](const auto& entry) { return entry.second.ismHandle.defined(); });
  return function;
}

imp::Function lower(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                    const LowerOptions& options) {
  if (auto intrinsic = lowerIntrinsic(cin, parameters, options)) return *intrinsic;
  return Lowerer(parameters, options).run(cin);
}

void Lowerer::declareTensor(const ir::TensorVar& tensor, bool isOutput) {
  TensorStorage storage;
  storage.name = tensor.name();
  storage.isOutput = isOutput;
  const ir::Format& format = tensor.format();
  for (int mode = 0; mode < tensor.order(); ++mode)
    storage.dims.push_back(freshVar(tensor.name() + std::to_string(mode + 1) + "_dimension", imp::Type::int32()));
  imp::Type valuePointer = imp::Type::pointerTo(valueType(tensor));
  storage.pos.resize(format.order());
  storage.crd.resize(format.order());
  storage.appendPosition.resize(format.order());
  storage.crdCapacity.resize(format.order());
  storage.posCapacity.resize(format.order());
  bool assembled = isOutput && tensor.order() > 0 && !format.isAllDense();
  if (assembled && sparseWorkspaceOutputs_.count(tensor)) {
    // Compress writes every array of the output; only its dimensions are read here.
    storage_[tensor] = std::move(storage);
    return;
  }
  if (assembled && !isAssemblableOutputFormat(format))
    throw LoweringError("cannot assemble output " + tensor.name() + " stored " + format.toString() +
                        " directly; compute it in " + nearestAssemblableFormat(format).toString() + " and convert");

  for (int level = 0; level < format.order(); ++level) {
    const auto& levelFormat = format.level(level);
    // Children of a repeated coordinate live under each of its positions;
    // only singleton levels (COO) are iterated that way.
    if (!isOutput && level > 0 && !format.level(level - 1).unique && levelFormat.kind != ir::LevelKind::Singleton)
      throw LoweringError(tensor.name() + " is stored " + format.toString() + ": its level " + std::to_string(level + 1) +
                          " (" + levelFormat.toString() + ") follows the non-unique level " + std::to_string(level) +
                          ", and only singleton levels may follow a non-unique one; store " + tensor.name() +
                          " as coo, or with unique levels");
    std::string prefix = tensor.name() + std::to_string(level + 1);
    if (levelFormat.kind == ir::LevelKind::NM)
      throw LoweringError(tensor.name() + " has an N:M level, which only the CUDA backend supports");
    if (levelFormat.isDense()) continue;
    if (levelFormat.kind == ir::LevelKind::Compressed)
      storage.pos[level] = freshVar(prefix + "_pos", imp::Type::pointerTo(imp::Type::int64()));
    storage.crd[level] = freshVar(prefix + "_crd", imp::Type::pointerTo(imp::Type::int32()));
    if (!assembled) continue;
    // An output level assembled by appending.
    storage.appendPosition[level] = freshVar("p" + prefix, imp::Type::int64());
    if (!parentsDense(format, level))
      storage.posCapacity[level] = freshVar(prefix + "_pos_capacity", imp::Type::int64());
    storage.crdCapacity[level] = freshVar(prefix + "_crd_capacity", imp::Type::int64());
  }
  storage.vals = freshVar(tensor.name() + "_vals", valuePointer);
  storage_[tensor] = std::move(storage);
}

// Rows of a sparse output assembled in parallel in one pass, without the
// counting pass: the rows go in chunks, which threads claim in order from
// a shared counter. A thread appends a chunk's rows to arrays of its own
// (they stay in its cache; the appends test their capacity as a serial
// kernel's do), stores each row's end in pos, publishes the chunk's size,
// learns its offset from the sizes of the chunks before it (a decoupled
// look-back, tcc_chunk_offset: a chunk waits only on chunks that threads
// claimed before it and are appending), then copies the chunk to the
// output at that offset (streaming where the output streams) and moves its
// rows' ends by it. Each input is read once and the output written once;
// the two-pass form reads the inputs' coordinates twice and runs every
// merge twice (on the Xeon host at 16 threads the counting pass took a
// third of the time; bench/sparse_add).
//
// The output is allocated before the rows run, so this form needs a bound
// on its entries, which the statement gives before anything is lowered
// (onePassBound): where every sparse operand of the loop that appends is
// iterated at its last level and visited once, the sum of their stored
// entries for a union, the least for an intersection (what reserveAppends
// takes as a serial kernel's first capacity). Elsewhere (SpGEMM through a
// workspace, a vector added to every row, several row-parallel outputs, a
// split or owned row loop) the two-pass form stays.
std::optional<std::vector<Stmt>> Lowerer::lowerRowsInOnePass(const ir::IndexStmt& cin) {
  if (!options_.rowsInOnePass || rowParallelOutputs_.size() != 1 || rowParallelVars_.size() != 1 ||
      options_.separateAssembly)
    return std::nullopt;
  const ir::TensorVar output = *rowParallelOutputs_.begin();
  TensorStorage& storage = storageOf(output);
  if (!storage.crd[1].defined() || !storage.vals.defined()) return std::nullopt;
  // (One assignment appends to it: the bound is that loop's. A workspace
  // in between gives no bound.)
  auto assignments = ir::assignmentsOf(cin);
  auto appends = [&](const ir::AssignmentNode* a) { return a->lhs.tensor() == output; };
  if (std::count_if(assignments.begin(), assignments.end(), appends) != 1 || !whereStatements(cin).empty())
    return std::nullopt;
  Expr bound = onePassBound(cin, *std::find_if(assignments.begin(), assignments.end(), appends),
                            *rowParallelVars_.begin());
  if (!bound.defined()) return std::nullopt;
  // (The declarations allocate crd at the bound, as for a serial kernel.)
  storage.firstCapacity = bound;
  ChunkedRows chunked;
  chunked.output = output;
  chunked.row = *rowParallelVars_.begin();
  chunked.crd = storage.crd[1];
  chunked.vals = storage.vals;
  chunked.threadCrd = freshVar(storage.name + "2_crd_of_thread", storage.crd[1].type());
  chunked.threadVals = freshVar(storage.name + "_vals_of_thread", storage.vals.type());
  chunked.threadCapacity = freshVar(storage.name + "2_capacity_of_thread", imp::Type::int64());
  chunked.threadAppend = freshVar("p" + storage.name + "2_thread", imp::Type::int64());
  chunked.rowsPerChunk = freshVar(storage.name + "_rows_per_chunk", imp::Type::int64());
  chunked.chunks = freshVar(storage.name + "_chunks", imp::Type::int64());
  chunked.state = freshVar(storage.name + "_chunk_state", imp::Type::pointerTo(imp::Type::int64()));
  // The thread's arrays stand in for the output's while its rows are lowered.
  const Expr capacity = storage.crdCapacity[1], append = storage.appendPosition[1];
  storage.crd[1] = chunked.threadCrd;
  storage.vals = chunked.threadVals;
  storage.crdCapacity[1] = chunked.threadCapacity;
  storage.appendPosition[1] = chunked.threadAppend;
  chunkedRows_ = chunked;
  pass_ = OutputPass::Chunk;
  Stmt rows = lower(cin);
  pass_ = OutputPass::Fused;
  storage.crd[1] = chunked.crd;
  storage.vals = chunked.vals;
  storage.crdCapacity[1] = capacity;
  storage.appendPosition[1] = append;
  chunked = *chunkedRows_;
  chunkedRows_.reset();
  if (!chunked.lowered)
    throw LoweringError("internal: the loop over " + chunked.row.name() + " was not lowered in chunks");
  onePassOutputs_.insert(output);
  Expr dimension = asInt64(storage.dims[output.format().modeOfLevel(0)]);
  std::vector<Stmt> passes{
      imp::Comment::make("rows in chunks on the threads, in one pass: each chunk appended to the thread's arrays, "
                         "then copied to its offset"),
      imp::Declare::make(chunked.rowsPerChunk, imp::Call::make("tcc_rows_per_chunk",
                                                               {dimension, storage.firstCapacity, threadCount_},
                                                               imp::Type::int64())),
      imp::Declare::make(chunked.chunks,
                         ops::div(ops::add(dimension, ops::sub(chunked.rowsPerChunk, ops::int64Imm(1))), chunked.rowsPerChunk)),
      imp::Declare::make(chunked.state, Expr()),
      imp::Allocate::make(chunked.state, ops::add(chunked.chunks, ops::int64Imm(1)), true),
      imp::Allocate::make(storage.vals, capacity),
      rows,
      imp::Assign::make(append, imp::Call::make("tcc_chunk_total", {chunked.state, chunked.chunks}, imp::Type::int64())),
      imp::Free::make(chunked.state)};
  return passes;
}

// The parallel loop over `row` in [0, rows) of the one-pass form: one
// iteration a thread, each claiming chunks of rows until none are left.
Stmt Lowerer::lowerChunkedRows(const Expr& row, const Expr& rows, const Stmt& body) {
  ChunkedRows& chunked = *chunkedRows_;
  const TensorStorage& storage = storageOf(chunked.output);
  const Expr& pos = storage.pos[1];
  if (!threadCount_.defined()) {
    threadCount_ = freshVar("thread_count", imp::Type::int64());
    header_.push_back(
        imp::Declare::make(threadCount_, asInt64(imp::Call::make("omp_get_max_threads", {}, imp::Type::int32()))));
  }
  Expr thread = freshVar("thread", imp::Type::int64());
  Expr chunk = freshVar(storage.name + "_chunk", imp::Type::int64());
  Expr first = freshVar(storage.name + "_chunk_first", imp::Type::int64());
  Expr last = freshVar(storage.name + "_chunk_last", imp::Type::int64());
  Expr offset = freshVar("p" + storage.name + "2_chunk", imp::Type::int64());
  Expr copied = freshVar("p" + storage.name + "2_copy", imp::Type::int64());
  Expr ended = freshVar("p" + storage.name + "1_end", imp::Type::int64());
  Expr claim = imp::Call::make("tcc_claim_chunk", {ops::add(chunked.state, chunked.chunks)}, imp::Type::int64());
  const bool streaming = streamedOutputs_.count(chunked.output) > 0;
  std::vector<Stmt> chunkBody{
      imp::Declare::make(first, ops::mul(chunk, chunked.rowsPerChunk)),
      imp::Declare::make(last, ops::min(ops::add(first, chunked.rowsPerChunk), asInt64(rows))),
      imp::Assign::make(chunked.threadAppend, ops::int64Imm(0)),
      imp::For::make(row, ops::cast(row.type(), first), ops::cast(row.type(), last), body, imp::LoopKind::Serial,
                     "iterate the chunk's rows"),
      imp::Declare::make(offset, imp::Call::make("tcc_chunk_offset", {chunked.state, chunk, chunked.threadAppend},
                                                 imp::Type::int64())),
      imp::For::make(copied, ops::int64Imm(0), chunked.threadAppend,
                     imp::Block::make({imp::Store::make(chunked.crd, ops::add(offset, copied),
                                                        imp::Load::make(chunked.threadCrd, copied), false, false, streaming),
                                       imp::Store::make(chunked.vals, ops::add(offset, copied),
                                                        imp::Load::make(chunked.threadVals, copied), false, false,
                                                        streaming)}),
                     imp::LoopKind::Serial, "the chunk's entries to their offset"),
      imp::For::make(ended, ops::add(first, ops::int64Imm(1)), ops::add(last, ops::int64Imm(1)),
                     imp::Store::make(pos, ended, offset, true), imp::LoopKind::Serial, "and its rows' ends"),
      imp::Assign::make(chunk, claim)};
  std::vector<Stmt> threadBody{
      imp::Declare::make(chunked.threadCapacity, imp::Call::make("tcc_chunk_capacity", {}, imp::Type::int64())),
      imp::Declare::make(chunked.threadCrd, Expr()),
      imp::Allocate::make(chunked.threadCrd, chunked.threadCapacity),
      imp::Declare::make(chunked.threadVals, Expr()),
      imp::Allocate::make(chunked.threadVals, chunked.threadCapacity),
      imp::Declare::make(chunked.threadAppend, ops::int64Imm(0)),
      imp::Declare::make(chunk, claim),
      imp::While::make(ops::lt(chunk, chunked.chunks), imp::Block::make(chunkBody), "the chunks this thread claims"),
      imp::Free::make(chunked.threadCrd),
      imp::Free::make(chunked.threadVals)};
  chunked.lowered = true;
  usesOpenMP_ = true;
  return imp::For::make(thread, ops::int64Imm(0), threadCount_, imp::Block::make(threadBody), imp::LoopKind::Parallel,
                        "one iteration a thread", 0, {}, 1);
}

std::vector<Stmt> Lowerer::declarationsOf(const ir::TensorVar& tensor) const {
  const TensorStorage& storage = storage_.at(tensor);
  const ir::Format& format = tensor.format();
  std::vector<Stmt> stmts;
  for (int mode = 0; mode < tensor.order(); ++mode)
    stmts.push_back(imp::Declare::make(storage.dims[mode],
                                       imp::TensorProperty::make(tensor.name(), imp::TensorField::Dim, mode)));
  bool assembled = storage.isOutput && tensor.order() > 0 && !format.isAllDense();
  if (assembled && sparseWorkspaceOutputs_.count(tensor)) return stmts;  // Compress writes the rest
  const bool gpuAppended = rangeAppended_ && rangeAppended_->onGpu && rangeAppended_->output == tensor;
  for (int level = 0; level < format.order(); ++level) {
    if (format.level(level).isDense()) continue;
    if (!assembled) {
      if (storage.pos[level].defined())
        stmts.push_back(imp::Declare::make(storage.pos[level],
                                           imp::TensorProperty::make(tensor.name(), imp::TensorField::Pos, level)));
      stmts.push_back(imp::Declare::make(storage.crd[level],
                                         imp::TensorProperty::make(tensor.name(), imp::TensorField::Crd, level)));
      continue;
    }
    stmts.push_back(imp::Declare::make(storage.appendPosition[level], ops::int64Imm(0)));
    stmts.push_back(imp::Declare::make(storage.pos[level], Expr()));
    // (Appended by a GPU loop's coordinates: every array but the first
    // level's pos allocated once the appends are counted.)
    if (gpuAppended && level > 0) {
      stmts.push_back(imp::Declare::make(storage.crd[level], Expr()));
      continue;
    }
    if (parentsDense(format, level)) {
      Expr segments = ops::int64Imm(1);
      for (int l = 0; l < level; ++l) segments = ops::mul(segments, asInt64(storage.dims[format.modeOfLevel(l)]));
      stmts.push_back(imp::Allocate::make(storage.pos[level], ops::add(segments, ops::int64Imm(1)), true));
    } else {
      stmts.push_back(imp::Declare::make(storage.posCapacity[level], ops::int64Imm(kInitialCapacity)));
      stmts.push_back(imp::Allocate::make(storage.pos[level], storage.posCapacity[level]));
      stmts.push_back(imp::Store::make(storage.pos[level], ops::int64Imm(0), ops::int64Imm(0)));
    }
    // The loops' suggestion for the last level (at least the fixed capacity).
    Expr capacity = ops::int64Imm(kInitialCapacity);
    if (level == format.order() - 1 && storage.firstCapacity.defined())
      capacity = ops::max(storage.firstCapacity, capacity);
    stmts.push_back(imp::Declare::make(storage.crdCapacity[level], capacity));
    stmts.push_back(imp::Declare::make(storage.crd[level], Expr()));
    // (Rows assembled by GPU loops: allocated once, counted first.)
    if (!(options_.cudaTarget && rowParallelOutputs_.count(tensor)) && !gpuAppended)
      stmts.push_back(imp::Allocate::make(storage.crd[level], storage.crdCapacity[level]));
  }
  if (assembled) {
    stmts.push_back(imp::Declare::make(storage.vals, Expr()));
    if (!options_.separateAssembly && !rowParallelOutputs_.count(tensor) && !gpuAppended)
      stmts.push_back(imp::Allocate::make(storage.vals, storage.crdCapacity[format.order() - 1]));
  } else {
    stmts.push_back(imp::Declare::make(
        storage.vals, imp::TensorProperty::make(tensor.name(), imp::TensorField::Vals, 0, valueType(tensor))));
  }
  return stmts;
}

Expr Lowerer::sizeWorkspace(const ir::TensorVar& workspace, TensorStorage& stored) {
  Expr size = ops::int64Imm(1);
  // A workspace's modes take the sizes of the index variables that access it;
  // lowerWhere's callers give it the shape of the output modes it stands for.
  for (int mode = 0; mode < workspace.order(); ++mode) {
    const ir::Dimension& dimension = workspace.dimension(mode);
    Expr dim;
    for (const auto& parameter : parameters_) {
      for (int m = 0; m < parameter.order() && !dim.defined(); ++m)
        if (parameter.dimension(m) == dimension && !dimension.isUnknown()) dim = storageOf(parameter).dims[m];
    }
    if (!dim.defined() && dimension.isFixed()) dim = ops::IntImm::make(dimension.size());
    if (!dim.defined()) throw LoweringError("cannot size workspace " + workspace.name());
    stored.dims.push_back(dim);
    size = ops::mul(size, asInt64(dim));
  }
  return size;
}

void Lowerer::declareWorkspace(const ir::TensorVar& workspace, bool withList, bool perThread) {
  TensorStorage storage;
  storage.name = freshVar(workspace.name(), imp::Type::int32()).as<imp::Var>()->name;
  storage.isWorkspace = true;
  storage_[workspace] = storage;  // reserved before sizes are looked up
  if (workspace.order() == 0) return;
  TensorStorage& stored = storage_[workspace];
  Expr size = sizeWorkspace(workspace, stored);
  stored.vals = freshVar(stored.name + "_vals", imp::Type::pointerTo(valueType(workspace)));
  if (withList) {
    stored.list = freshVar(stored.name + "_list", imp::Type::pointerTo(imp::Type::int32()));
    stored.listSize = freshVar(stored.name + "_list_size", imp::Type::int64());
    stored.flags = freshVar(stored.name + "_already_set", imp::Type::pointerTo(imp::Type::bool_()));
  }
  // Arrays allocated here: the workspace's own, or every thread's copies.
  std::vector<std::pair<Expr, Expr>> arrays{{stored.vals, Expr()}};
  if (withList) arrays.push_back({stored.list, Expr()}), arrays.push_back({stored.flags, Expr()});
  Expr count = size;
  if (perThread) {
    if (!threadCount_.defined()) {
      threadCount_ = freshVar("thread_count", imp::Type::int64());
      header_.push_back(imp::Declare::make(
          threadCount_, asInt64(imp::Call::make("omp_get_max_threads", {}, imp::Type::int32()))));
    }
    stored.sizePerThread = freshVar(stored.name + "_size", imp::Type::int64());
    header_.push_back(imp::Declare::make(stored.sizePerThread, size));
    count = ops::mul(stored.sizePerThread, threadCount_);
    stored.valsOfAllThreads = freshVar(stored.name + "_vals_of_all_threads", stored.vals.type());
    arrays[0].second = stored.valsOfAllThreads;
    if (withList) {
      stored.listOfAllThreads = freshVar(stored.name + "_list_of_all_threads", stored.list.type());
      stored.flagsOfAllThreads = freshVar(stored.name + "_already_set_of_all_threads", stored.flags.type());
      arrays[1].second = stored.listOfAllThreads;
      arrays[2].second = stored.flagsOfAllThreads;
    }
  }
  for (const auto& [own, all] : arrays) {
    Expr buffer = all.defined() ? all : own;
    header_.push_back(imp::Declare::make(buffer, Expr()));
    header_.push_back(imp::Allocate::make(buffer, count, !(withList && own.sameAs(stored.list))));
    footer_.push_back(imp::Free::make(buffer));
  }
  if (withList && !perThread) header_.push_back(imp::Declare::make(stored.listSize, ops::int64Imm(0)));
}

// The host declares each thread's size (from the tensors' dimensions);
// the scratch buffer has no declaration: the kernels take it as a
// parameter, which the host step fills at each launch.
void Lowerer::declareGpuThreadWorkspace(const ir::TensorVar& workspace) {
  TensorStorage storage;
  storage.name = freshVar(workspace.name(), imp::Type::int32()).as<imp::Var>()->name;
  storage.isWorkspace = true;
  storage.perGpuThread = true;
  storage_[workspace] = storage;  // reserved before sizes are looked up
  TensorStorage& stored = storage_[workspace];
  Expr size = sizeWorkspace(workspace, stored);
  stored.vals = freshVar(stored.name + "_vals", imp::Type::pointerTo(valueType(workspace)));
  stored.sizePerThread = freshVar(stored.name + "_size", imp::Type::int64());
  header_.push_back(imp::Declare::make(stored.sizePerThread, size));
  stored.valsOfAllThreads = freshVar(stored.name + "_vals_of_all_threads", stored.vals.type());
  gpuThreadScratch_.push_back({stored.valsOfAllThreads, stored.sizePerThread});
}

std::vector<Stmt> Lowerer::selectGpuThreadCopy(const ir::TensorVar& workspace, TensorStorage& storage) {
  Expr entry = freshVar("p" + storage.name + "_zero", imp::Type::int64());
  storage.gpuThreadStride = freshVar(storage.name + "_stride", imp::Type::int64());
  return {imp::Declare::make(storage.gpuThreadStride, imp::Call::make(kGpuThreadCountCall, {}, imp::Type::int64())),
          imp::Declare::make(storage.vals, ops::add(storage.valsOfAllThreads,
                                                    imp::Call::make(kGpuThreadIndexCall, {}, imp::Type::int64()))),
          imp::For::make(entry, ops::int64Imm(0), storage.sizePerThread,
                         imp::Store::make(storage.vals, ops::mul(entry, storage.gpuThreadStride),
                                          ops::cast(valueType(workspace), ops::FloatImm::make(0.0))),
                         imp::LoopKind::Serial, "zero this GPU thread's copy of " + storage.name)};
}

Expr Lowerer::valuePositionOf(const ir::AccessNode* access) {
  Expr position = positionOf(access);
  const TensorStorage& storage = storageOf(access->tensor);
  return storage.perGpuThread ? ops::mul(position, storage.gpuThreadStride) : position;
}

std::vector<Stmt> Lowerer::selectThreadCopy(TensorStorage& storage) {
  Expr offset = freshVar(storage.name + "_offset", imp::Type::int64());
  std::vector<Stmt> stmts{
      imp::Declare::make(offset, ops::mul(asInt64(imp::Call::make("omp_get_thread_num", {}, imp::Type::int32())),
                                          storage.sizePerThread)),
      imp::Declare::make(storage.vals, ops::add(storage.valsOfAllThreads, offset))};
  if (storage.list.defined()) {
    stmts.push_back(imp::Declare::make(storage.list, ops::add(storage.listOfAllThreads, offset)));
    stmts.push_back(imp::Declare::make(storage.flags, ops::add(storage.flagsOfAllThreads, offset)));
    stmts.push_back(imp::Declare::make(storage.listSize, ops::int64Imm(0)));
  }
  return stmts;
}

void Lowerer::finishOutputs() {
  for (const auto& tensor : parameters_) {
    const TensorStorage& storage = storageOf(tensor);
    const ir::Format& format = tensor.format();
    if (!storage.isOutput || tensor.order() == 0 || format.isAllDense() || sparseWorkspaceOutputs_.count(tensor)) continue;
    for (int level = 0; level < format.order(); ++level) {
      if (format.level(level).isDense()) continue;
      Expr pos = storage.pos[level];
      if (level == 0) {
        // (On the cuda target the prefix sum's GPU thread stored it.)
        if (!(rangeAppended_ && rangeAppended_->onGpu && rangeAppended_->output == tensor))
          footer_.push_back(imp::Store::make(pos, ops::int64Imm(1), storage.appendPosition[0]));
      } else if (parentsDense(format, level) && !onePassOutputs_.count(tensor) &&
                 !(options_.cudaTarget && rowParallelOutputs_.count(tensor))) {
        // (Rows assembled in parallel on the GPU: their counting pass gave
        // every row its size, and the prefix sum its end.)
        // Segments of parents never visited stay empty: carry the end forward.
        Expr segments = ops::int64Imm(1);
        for (int l = 0; l < level; ++l) segments = ops::mul(segments, asInt64(storage.dims[format.modeOfLevel(l)]));
        Expr p = freshVar("p" + storage.name + std::to_string(level + 1) + "_fill", imp::Type::int64());
        Expr next = ops::add(p, ops::int64Imm(1));
        footer_.push_back(imp::For::make(
            p, ops::int64Imm(0), segments,
            imp::If::make(ops::lt(imp::Load::make(pos, next), imp::Load::make(pos, p)),
                          imp::Store::make(pos, next, imp::Load::make(pos, p))),
            imp::LoopKind::Serial, "segments of rows without entries end where the previous one ends"));
      }
      footer_.push_back(imp::SetTensorProperty::make(storage.name, imp::TensorField::Pos, level, pos));
      footer_.push_back(imp::SetTensorProperty::make(storage.name, imp::TensorField::Crd, level, storage.crd[level]));
    }
    footer_.push_back(imp::SetTensorProperty::make(storage.name, imp::TensorField::Vals, 0, storage.vals));
    footer_.push_back(imp::SetTensorProperty::make(storage.name, imp::TensorField::ValsSize, 0,
                                                   storage.appendPosition[format.order() - 1]));
  }
}

Expr Lowerer::parentPosition(const ir::AccessNode* access, int level) const {
  if (level == 0) return ops::int64Imm(0);
  auto positions = positions_.find(canonical(access, level - 1));
  if (positions == positions_.end() || !positions->second.count(level - 1))
    throw LoweringError("internal: level " + std::to_string(level) + " of " + access->tensor.name() +
                        " has no located parent");
  return positions->second.at(level - 1);
}

Expr Lowerer::positionOf(const ir::AccessNode* access) {
  const ir::TensorVar& tensor = access->tensor;
  if (tensor.order() == 0) return ops::int64Imm(0);
  auto positions = positions_.find(canonical(access, tensor.order() - 1));
  if (positions != positions_.end() && positions->second.count(tensor.order() - 1))
    return positions->second.at(tensor.order() - 1);
  if (!tensor.format().isAllDense())
    throw LoweringError("internal: access to " + tensor.name() + " is not located by the loops around it");
  // All-dense tensors are located directly from their coordinates.
  const TensorStorage& storage = storageOf(tensor);
  Expr position = ops::int64Imm(0);
  for (int level = 0; level < tensor.order(); ++level) {
    int mode = tensor.format().modeOfLevel(level);
    auto coordinate = coordinates_.find(access->indices[mode]);
    if (coordinate == coordinates_.end())
      throw LoweringError("index variable " + access->indices[mode].name() + " of " + tensor.name() +
                          " is used outside a loop over it");
    position = ops::add(ops::mul(position, asInt64(storage.dims[mode])), asInt64(coordinate->second));
  }
  return position;
}

Expr Lowerer::lowerExpr(const ir::IndexExpr& expr) {
  using Kind = ir::IndexExprKind;
  switch (expr.kind()) {
    case Kind::Literal: {
      const auto* literal = expr.as<ir::LiteralNode>();
      if (ir::isFloat(literal->type)) return ops::FloatImm::make(literal->floatValue);
      return ops::int64Imm(literal->intValue);
    }
    case Kind::Access: {
      const auto* access = expr.as<ir::AccessNode>();
      const TensorStorage& storage = storageOf(access->tensor);
      if (storage.isWorkspace && access->tensor.order() == 0) return storage.scalar;
      if (access->tensor.datatype() == ir::Datatype::Float16)  // read exactly, as float16ReadAs_
        return ops::cast(float16ReadAs_, imp::Load::make(storage.vals, valuePositionOf(access)));
      return imp::Load::make(storage.vals, valuePositionOf(access));
    }
    case Kind::Neg: return ops::neg(lowerExpr(expr.as<ir::NegNode>()->operand));
    case Kind::Add: return ops::add(lowerExpr(expr.as<ir::AddNode>()->a), lowerExpr(expr.as<ir::AddNode>()->b));
    case Kind::Sub: return ops::sub(lowerExpr(expr.as<ir::SubNode>()->a), lowerExpr(expr.as<ir::SubNode>()->b));
    case Kind::Mul: return ops::mul(lowerExpr(expr.as<ir::MulNode>()->a), lowerExpr(expr.as<ir::MulNode>()->b));
    case Kind::Div: return ops::div(lowerExpr(expr.as<ir::DivNode>()->a), lowerExpr(expr.as<ir::DivNode>()->b));
    case Kind::Call: {
      const auto* call = expr.as<ir::CallNode>();
      std::vector<Expr> args;
      for (const auto& arg : call->args) {
        const auto* operand = std::get_if<ir::IndexExpr>(&arg);
        if (!operand)
          throw LoweringError(call->name + "() of a whole tensor must be a statement of its own, as in p = " +
                              call->name + "(A)");
        args.push_back(ops::cast(imp::Type::float64(), lowerExpr(*operand)));
      }
      if (call->name == "min" && args.size() == 2) return ops::min(args[0], args[1]);
      if (call->name == "max" && args.size() == 2) return ops::max(args[0], args[1]);
      std::string name = call->name == "abs" ? "fabs" : call->name;
      return imp::Call::make(name, args, imp::Type::float64());
    }
    case Kind::Reduction:
      throw LoweringError("internal: a sum reached the lowerer; concretize first");
  }
  return Expr();
}

Stmt Lowerer::store(const ir::AssignmentNode* assignment, Expr value, bool accumulate) {
  const auto* lhs = static_cast<const ir::AccessNode*>(assignment->lhs.get());
  TensorStorage& storage = storageOf(lhs->tensor);
  ++storesLowered_[lhs->tensor];
  if (storage.ismHandle.defined()) return insertIntoSparseWorkspace(lhs, value);
  if (storage.gpuSparse) return insertIntoGpuThreadSparseWorkspace(lhs, value);
  if (storage.isWorkspace && lhs->tensor.order() == 0) {
    return accumulate ? imp::Assign::makeCompound(imp::BinaryOp::Add, storage.scalar, value)
                      : imp::Assign::make(storage.scalar, value);
  }
  if (!writesValues(pass_) && storage.isOutput && !lhs->tensor.format().isAllDense())
    return imp::Block::make({});  // values come in the compute (fill) pass
  // Passes that only assemble structure need which coordinates a workspace
  // touched, not its values.
  Stmt write;
  if (!(storage.isWorkspace && !writesValues(pass_))) {
    bool atomic = atomicStores_ && accumulate && (storage.isOutput || storage.sharedOnGpu);
    bool streaming = !accumulate && !atomic && storage.isOutput && !storage.isWorkspace &&
                     streamsAppendsTo(lhs->tensor);
    write = imp::Store::make(storage.vals, valuePositionOf(lhs), value, accumulate, atomic, streaming);
  }
  if (!storage.list.defined()) return write.defined() ? write : imp::Block::make({});
  // Remember each workspace coordinate the first time it is written.
  Expr coordinate = coordinates_.at(lhs->indices[0]);
  Stmt remember = imp::Block::make({
      imp::Store::make(storage.flags, coordinate, ops::IntImm::make(1, imp::Type::bool_())),
      imp::Store::make(storage.list, storage.listSize, coordinate),
      imp::Assign::makeCompound(imp::BinaryOp::Add, storage.listSize, ops::int64Imm(1)),
  });
  return imp::Block::make({imp::If::make(imp::Unary::make(imp::UnaryOp::Not, imp::Load::make(storage.flags, coordinate)),
                                         remember),
                           write});
}

void Lowerer::refuseOutputOrder(const ir::TensorVar& output, const OutputVisitOrder::Refusal& refusal) const {
  if (refusal.command)
    throw LoweringError(ir::toString(*refusal.command) + ": " + refusal.reason,
                        options_.commands.commandOf(*refusal.command));
  // Plain loops: the precompute that took the place of the output's
  // workspace, if any.
  if (const auto& precompute = options_.commands.outputOrder)
    throw LoweringError(precompute->text + ": " + refusal.reason + "; here a summed loop comes between " +
                            output.name() + "'s coordinates, where tcc puts a workspace that takes them in any order, "
                            "but tcc inserts none beside the schedule's precomputes, and this one holds another part: drop "
                            "it (tcc then inserts the workspace), or ask for that workspace first, with "
                            "dense_workspace() before it, or for a sparse one, with sparse_workspace()",
                        precompute->command);
  throw LoweringError(refusal.reason);
}

std::vector<Stmt> Lowerer::outputPrologue(const ir::AccessNode* lhs, int level, const Expr& coordinate,
                                          bool accumulating) {
  TensorStorage& storage = storageOf(lhs->tensor);
  const ir::Format& format = lhs->tensor.format();
  if (auto refused = visitOrder_.outOfOrderLevels.find({lhs->tensor, level});
      refused != visitOrder_.outOfOrderLevels.end())
    refuseOutputOrder(lhs->tensor, refused->second);
  if (format.level(level).isDense()) {
    Expr size = storage.dims[format.modeOfLevel(level)];
    Expr position = freshVar("p" + storage.name + std::to_string(level + 1), imp::Type::int64());
    positions_[lhs][level] = position;
    std::vector<Stmt> stmts{imp::Declare::make(
        position, ops::add(ops::mul(parentPosition(lhs, level), asInt64(size)), asInt64(coordinate)))};
    if (slicesRowsAmongLanes(lhs, level)) {
      // (Each lane appends its slice of the row through a cursor of its
      // own: lowerRowInLaneSlices.)
      laneSlicedRows_->rowPosition = position;
      return stmts;
    }
    if (rowParallelOutputs_.count(lhs->tensor) && level == 0 && pass_ != OutputPass::Chunk) {
      // The row appends through its own cursor: from 0 when counting, from
      // the row's offset when filling. (In one pass, through the thread's.)
      Expr rowAppend = freshVar("p" + storage.name + "2_row", imp::Type::int64());
      Expr start = pass_ == OutputPass::Count ? ops::int64Imm(0) : imp::Load::make(storage.pos[1], position);
      stmts.push_back(imp::Declare::make(rowAppend, start));
      rowAppendSaved_[lhs] = storage.appendPosition[1];
      storage.appendPosition[1] = rowAppend;
    }
    return stmts;
  }
  if (appendsByGpuCoordinate(lhs, level) && !bindingGpuCoordinateAppends_) {
    // This GPU iteration's coordinate appends through positions of its own.
    std::vector<Stmt> stmts = bindGpuCoordinateAppends(coordinate);
    bindingGpuCoordinateAppends_ = true;
    std::vector<Stmt> prologue = outputPrologue(lhs, level, coordinate, accumulating);
    bindingGpuCoordinateAppends_ = false;
    stmts.insert(stmts.end(), prologue.begin(), prologue.end());
    return stmts;
  }
  Expr append = storage.appendPosition[level];
  positions_[lhs][level] = append;
  if (auto repeated = repeatedLevels_.find({lhs->tensor, level}); repeated != repeatedLevels_.end())
    return repeatedLevelPrologue(lhs, level, coordinate, accumulating, repeated->second);
  if (level == format.order() - 1) {
    std::vector<Stmt> stmts;
    // (Unless the loop reserved room for its appends before it began.)
    bool reserved = reservedOutputs_.count(lhs->tensor) > 0;
    if ((pass_ == OutputPass::Fused || pass_ == OutputPass::Chunk) && !reserved)
      stmts.push_back(growToHold(storage.crdCapacity[level], ops::add(append, ops::int64Imm(1)), {storage.crd[level], storage.vals}));
    if (pass_ == OutputPass::Assemble && !reserved)
      stmts.push_back(growToHold(storage.crdCapacity[level], ops::add(append, ops::int64Imm(1)), {storage.crd[level]}));
    if (writesCoordinates(pass_))
      stmts.push_back(imp::Store::make(storage.crd[level], append, coordinate, false, false,
                                       streamsAppendsTo(lhs->tensor)));
    if (accumulating && writesValues(pass_))
      stmts.push_back(imp::Store::make(storage.vals, append, ops::cast(valueType(lhs->tensor), ops::FloatImm::make(0.0))));
    return stmts;
  }
  Expr begin = freshVar("p" + storage.name + std::to_string(level + 2) + "_begin", imp::Type::int64());
  segmentBegins_[{lhs, level}] = begin;
  return {imp::Declare::make(begin, storage.appendPosition[level + 1])};
}

std::vector<Stmt> Lowerer::outputEpilogue(const ir::AccessNode* lhs, int level, const Expr& coordinate) {
  TensorStorage& storage = storageOf(lhs->tensor);
  const ir::Format& format = lhs->tensor.format();
  bool last = level == format.order() - 1;
  Expr position = positions_[lhs].at(level);
  if (format.level(level).isDense()) {
    if (slicesRowsAmongLanes(lhs, level)) {
      laneSlicedRows_->rowPosition = Expr();
      return {};  // (each lane stored its slice's count)
    }
    if (auto saved = rowAppendSaved_.find(lhs); saved != rowAppendSaved_.end() && level == 0) {
      Expr rowAppend = storage.appendPosition[1];
      storage.appendPosition[1] = saved->second;
      rowAppendSaved_.erase(saved);
      if (pass_ == OutputPass::Fill) return {};
      return {imp::Store::make(storage.pos[1], ops::add(position, ops::int64Imm(1)), rowAppend)};  // the row's size
    }
    // (Counting ranges hold their own appends, not the segment's end: the
    // fill pass stores it.)
    if (last || format.level(level + 1).isDense() || pass_ == OutputPass::Compute || pass_ == OutputPass::Count)
      return {};
    return {imp::Store::make(storage.pos[level + 1], ops::add(position, ops::int64Imm(1)), storage.appendPosition[level + 1])};
  }
  if (appendsByGpuCoordinate(lhs, level) && !bindingGpuCoordinateAppends_) {
    bindingGpuCoordinateAppends_ = true;
    std::vector<Stmt> stmts = outputEpilogue(lhs, level, coordinate);
    bindingGpuCoordinateAppends_ = false;
    std::vector<Stmt> release = releaseGpuCoordinateAppends(coordinate);
    stmts.insert(stmts.end(), release.begin(), release.end());
    return stmts;
  }
  Expr append = storage.appendPosition[level];
  if (auto repeated = repeatedLevels_.find({lhs->tensor, level}); repeated != repeatedLevels_.end())
    return repeatedLevelEpilogue(lhs, level, coordinate, repeated->second);
  if (last) return {imp::Assign::makeCompound(imp::BinaryOp::Add, append, ops::int64Imm(1))};
  // Record this coordinate only if its segment below received entries.
  Expr childAppend = storage.appendPosition[level + 1];
  Expr nonEmpty = ops::gt(childAppend, segmentBegins_.at({lhs, level}));
  if (pass_ == OutputPass::Compute || pass_ == OutputPass::Count)
    return {imp::If::make(nonEmpty, imp::Assign::makeCompound(imp::BinaryOp::Add, append, ops::int64Imm(1)))};
  // (The fill pass appends into arrays the counting pass sized.)
  std::vector<Stmt> record;
  if (pass_ != OutputPass::Fill)
    record.push_back(growToHold(storage.crdCapacity[level], ops::add(append, ops::int64Imm(1)), {storage.crd[level]}));
  record.push_back(imp::Store::make(storage.crd[level], append, coordinate));
  if (pass_ != OutputPass::Fill)
    record.push_back(growToHold(storage.posCapacity[level + 1], ops::add(append, ops::int64Imm(2)), {storage.pos[level + 1]}));
  record.push_back(imp::Store::make(storage.pos[level + 1], ops::add(append, ops::int64Imm(1)), childAppend));
  record.push_back(imp::Assign::makeCompound(imp::BinaryOp::Add, append, ops::int64Imm(1)));
  return {imp::If::make(nonEmpty, imp::Block::make(record))};
}

Stmt Lowerer::growToHold(const Expr& capacity, const Expr& entries, const std::vector<Expr>& arrays) {
  // Each array keeps its `capacity` entries; the capacity is updated last.
  Expr grown = ops::max(ops::mul(capacity, ops::int64Imm(2)), entries);
  std::vector<Stmt> grow;
  for (const auto& array : arrays) grow.push_back(imp::Allocate::make(array, grown, false, capacity));
  grow.push_back(imp::Assign::make(capacity, grown));
  return imp::If::make(ops::gt(entries, capacity), imp::Block::make(grow));
}

Expr Lowerer::freshVar(const std::string& base, imp::Type type) {
  std::string name;
  for (char c : base) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "v" + name;
  std::string candidate = name;
  for (int suffix = 0; usedNames_.count(candidate); ++suffix) candidate = name + "_" + std::to_string(suffix);
  usedNames_.insert(candidate);
  return imp::Var::make(candidate, type);
}

Expr Lowerer::dimensionOf(const ir::IndexVar& var) const {
  auto found = dimensions_.find(var);
  if (found == dimensions_.end()) throw LoweringError("no tensor gives the size of index variable " + var.name());
  return found->second;
}

imp::Type Lowerer::valueType(const ir::TensorVar& tensor) const {
  switch (tensor.datatype()) {
    case ir::Datatype::Float64: return imp::Type::float64();
    case ir::Datatype::Float32: return imp::Type::float32();
    case ir::Datatype::Int32: return imp::Type::int32();
    case ir::Datatype::Int64: return imp::Type::int64();
    // Stored so in the inputs alone: what tcc computes (temporaries,
    // workspaces of expressions over float16 inputs) is float16ReadAs_.
    case ir::Datatype::Float16: return isParameter(tensor) ? imp::Type{imp::ScalarKind::Float16} : float16ReadAs_;
  }
  throw LoweringError("tensor " + tensor.name() + " has an unknown element type");
}

bool Lowerer::isParameter(const ir::TensorVar& tensor) const {
  return std::find(parameters_.begin(), parameters_.end(), tensor) != parameters_.end();
}

std::optional<std::string> Lowerer::insertedWorkspaceInWords(const ir::TensorVar& tensor) const {
  const ir::TensorProvenance& provenance = tensor.provenance();
  if (!provenance.isWorkspace()) return std::nullopt;
  const std::string kind = provenance.kind == ir::TensorProvenance::Kind::SparseWorkspace ? "sparse" : "dense";
  if (!provenance.askedBy.empty()) return "the " + kind + " workspace that " + provenance.askedBy + " asks for";
  return "the " + kind + " workspace tcc inserted for " + provenance.source.name();
}

std::string Lowerer::workspaceInWords(const ir::TensorVar& workspace) const {
  return insertedWorkspaceInWords(workspace).value_or("workspace " + workspace.name());
}

TensorStorage& Lowerer::storageOf(const ir::TensorVar& tensor) {
  auto found = storage_.find(tensor);
  if (found == storage_.end())
    throw LoweringError("tensor " + tensor.name() + " is not a parameter of the kernel and not a workspace");
  return found->second;
}

}  // namespace tcc::lowering
