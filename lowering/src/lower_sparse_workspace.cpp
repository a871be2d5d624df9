// Sparse (ISM) workspaces: a where whose producer writes a workspace stored
// in a sparse format. The producer's loops treat the workspace as dense and
// insert each component through the entry point of the workspace's policy
// and order (ism/kernel_api.h); between producer and consumer the workspace
// is sorted, merged and compressed straight into the consumer's output.
#include "lowerer.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"

namespace tcc::lowering {

using imp::Expr;
using imp::Stmt;
namespace ops = ir::imp;

namespace {

imp::Type handleType() { return imp::Type::pointerTo(imp::Type::void_()); }
Expr int32Imm(int64_t value) { return ops::IntImm::make(value, imp::Type::int32()); }

const char* policyEntryName(WorkspacePolicy policy) {
  switch (policy) {
    case WorkspacePolicy::Bucket: return "bucket";
    case WorkspacePolicy::Hash: return "hash";
    case WorkspacePolicy::Coord: return "coord";
    case WorkspacePolicy::Map: return "map";
    case WorkspacePolicy::Vector: return "vector";
    case WorkspacePolicy::User: return "user";
  }
  return "hash";
}

}  // namespace

const char* toString(WorkspacePolicy policy) { return policyEntryName(policy); }

Stmt Lowerer::returnIfFailed(const Expr& failed) {
  return imp::If::make(failed, imp::Return::make(ops::IntImm::make(kSparseWorkspaceStatus)));
}

void Lowerer::declareSparseWorkspace(const ir::TensorVar& workspace, const ir::TensorVar& output, bool perThread) {
  if (workspace.order() != output.order())
    throw LoweringError("internal: sparse workspace " + workspace.name() + " does not match output " + output.name());
  createSparseWorkspace(workspace, storageOf(output).dims, perThread, output.name());
}

void Lowerer::declareDrainedSparseWorkspace(const ir::TensorVar& workspace, const std::vector<Expr>& dims,
                                            bool perThread) {
  createSparseWorkspace(workspace, dims, perThread, "");
  TensorStorage& storage = storageOf(workspace);
  storage.ismDrained = true;
  // Threads cannot leave their loop: a failed drain is reported after it.
  if (perThread)
    footer_.push_back(
      returnIfFailed(ops::ne(imp::Call::make("tcc_ism_kernel_status", {storage.ismHandle}, imp::Type::int32()),
                             int32Imm(0))));
  footer_.push_back(imp::Evaluate::make(imp::Call::make("tcc_ism_kernel_destroy", {storage.ismHandle}, imp::Type::void_())));
}

void Lowerer::drainSparseWorkspace(const ir::TensorVar& workspace, std::vector<Stmt>& steps) {
  TensorStorage& storage = storageOf(workspace);
  if (storage.ismPerThread && !storage.ismThreadHandle.defined())
    throw LoweringError("internal: sparse workspace " + workspace.name() + " is drained outside its thread loop");
  Expr handle = storage.ismThreadHandle.defined() ? storage.ismThreadHandle : storage.ismHandle;
  steps.push_back(imp::Comment::make("sort, merge and compress what the loops inserted into " + workspace.name() +
                                     ", which is emptied for the next iteration"));
  Expr drain = imp::Call::make("tcc_ism_kernel_drain", {handle}, imp::Type::int32());
  steps.push_back(storage.ismPerThread ? imp::Evaluate::make(drain)
                                       : returnIfFailed(ops::ne(drain, int32Imm(0))));
  // The drained arrays, read by the consumer as compressed levels: local
  // to this drain, so that threads each read their own.
  storage.pos.assign(workspace.order(), Expr());
  storage.crd.assign(workspace.order(), Expr());
  for (int level = 0; level < workspace.order(); ++level) {
    std::string prefix = storage.name + std::to_string(level + 1);
    storage.pos[level] = freshVar(prefix + "_pos", imp::Type::pointerTo(imp::Type::int64()));
    storage.crd[level] = freshVar(prefix + "_crd", imp::Type::pointerTo(imp::Type::int32()));
    steps.push_back(imp::Declare::make(
      storage.pos[level],
      imp::Call::make("tcc_ism_kernel_drained_pos", {handle, int32Imm(level)}, storage.pos[level].type())));
    steps.push_back(imp::Declare::make(
      storage.crd[level],
      imp::Call::make("tcc_ism_kernel_drained_crd", {handle, int32Imm(level)}, storage.crd[level].type())));
  }
  storage.vals = freshVar(storage.name + "_vals", imp::Type::pointerTo(imp::Type::float64()));
  steps.push_back(imp::Declare::make(
    storage.vals, imp::Call::make("tcc_ism_kernel_drained_vals", {handle}, storage.vals.type())));
}

void Lowerer::createSparseWorkspace(const ir::TensorVar& workspace, const std::vector<Expr>& modeDims, bool perThread,
                                    const std::string& outputName) {
  if (workspace.order() < 1 || workspace.order() > 4)
    throw LoweringError("sparse workspace " + workspace.name() + " has order " + std::to_string(workspace.order()) +
                        "; the ISM supports orders 1 to 4");
  TensorStorage storage;
  storage.name = freshVar(workspace.name(), imp::Type::int32()).as<imp::Var>()->name;
  storage.isWorkspace = true;
  auto options = options_.sparseWorkspaces.find(workspace.name());
  if (options != options_.sparseWorkspaces.end()) storage.ismOptions = options->second;
  const int order = workspace.order();
  // Dimensions in mode order and the mode each of the output's levels stores.
  Expr dims = freshVar(storage.name + "_dims", imp::Type::pointerTo(imp::Type::int32()));
  Expr levels = freshVar(storage.name + "_level_order", imp::Type::pointerTo(imp::Type::int32()));
  header_.push_back(imp::Declare::make(dims, Expr()));
  header_.push_back(imp::Allocate::make(dims, ops::int64Imm(order)));
  header_.push_back(imp::Declare::make(levels, Expr()));
  header_.push_back(imp::Allocate::make(levels, ops::int64Imm(order)));
  for (int m = 0; m < order; ++m) {
    header_.push_back(imp::Store::make(dims, ops::int64Imm(m), modeDims[m]));
    header_.push_back(imp::Store::make(levels, ops::int64Imm(m), int32Imm(workspace.format().modeOfLevel(m))));
  }
  const SparseWorkspaceOptions& o = storage.ismOptions;
  int flags = (o.pipelining ? 1 : 0) | (o.doubleBuffering ? 2 : 0) | (options_.hugePages ? 4 : 0);
  storage.ismHandle = freshVar(storage.name, handleType());
  storage.ismPerThread = perThread;
  header_.push_back(imp::Comment::make("sparse workspace " + workspace.name() + " (ISM, " +
                                       (o.policy == WorkspacePolicy::User ? "registered " + o.userPolicy
                                                                          : std::string(toString(o.policy))) +
                                       " policy)" + (outputName.empty() ? std::string() : " for " + outputName) +
                                       (perThread ? ", one per thread" : "")));
  int policyId = o.policy == WorkspacePolicy::User ? o.userPolicyId : static_cast<int>(o.policy);
  if (perThread && o.policy == WorkspacePolicy::User)
    throw LoweringError("sparse workspace " + workspace.name() + " uses the registered policy " + o.userPolicy +
                        ", which fills one workspace at a time; its producer runs on threads");
  std::vector<Expr> args{int32Imm(order), dims, levels, int32Imm(policyId), int32Imm(flags),
                         ops::int64Imm(o.capacity), ops::int64Imm(0)};
  if (perThread) {
    usesOpenMP_ = true;
    args.insert(args.begin(), imp::Call::make("omp_get_max_threads", {}, imp::Type::int32()));
  }
  header_.push_back(imp::Declare::make(
    storage.ismHandle,
    imp::Call::make(perThread ? "tcc_ism_kernel_create_per_thread" : "tcc_ism_kernel_create", args, handleType())));
  header_.push_back(imp::Free::make(dims));
  header_.push_back(imp::Free::make(levels));
  header_.push_back(returnIfFailed(imp::Unary::make(imp::UnaryOp::Not, storage.ismHandle)));
  storage_[workspace] = std::move(storage);
}

Stmt Lowerer::insertIntoSparseWorkspace(const ir::AccessNode* lhs, const Expr& value) {
  const TensorStorage& storage = storageOf(lhs->tensor);
  if (insideParallelLoop_ && !storage.ismThreadHandle.defined())
    throw LoweringError("internal: sparse workspace " + lhs->tensor.name() + " is filled in a thread loop without "
                        "a workspace per thread");
  // Outside thread loops, a workspace kept per thread (another of its
  // fills runs on threads) is filled through the first thread's copy; the
  // merge adds the copies' repeated coordinates.
  Expr handle = storage.ismThreadHandle.defined() ? storage.ismThreadHandle
                : storage.ismPerThread
                    ? imp::Call::make("tcc_ism_kernel_thread_handle", {storage.ismHandle, int32Imm(0)},
                                      storage.ismHandle.type())
                    : storage.ismHandle;
  std::vector<Expr> args{handle};
  for (const auto& var : lhs->indices) {
    auto coordinate = coordinates_.find(var);
    if (coordinate == coordinates_.end())
      throw LoweringError("internal: sparse workspace coordinate " + var.name() + " is not bound");
    args.push_back(ops::cast(imp::Type::int32(), coordinate->second));
  }
  args.push_back(ops::cast(imp::Type::float64(), value));
  std::string entry = std::string("tcc_ism_insert_") + toString(storage.ismOptions.policy) + "_" +
                      std::to_string(lhs->indices.size());
  // A failure is remembered by the workspace and reported by its finish.
  return imp::Evaluate::make(imp::Call::make(entry, args, imp::Type::int32()));
}

Stmt Lowerer::finishSparseWorkspace(const ir::WhereNode* where, const ir::TensorVar& workspace) {
  // The consumer copies the workspace into an output, entry by entry.
  const ir::AssignmentNode* copy = soleAssignment(where->consumer);
  const auto* read = copy ? copy->rhs.as<ir::AccessNode>() : nullptr;
  if (!copy || !read || !(read->tensor == workspace) || read->indices != copy->lhs.indices())
    throw LoweringError("internal: the consumer of sparse workspace " + workspace.name() + " must copy it into an "
                        "output, not compute " + ir::toString(where->consumer));
  const ir::TensorVar& output = copy->lhs.tensor();
  const ir::Format& format = output.format();
  int uniqueMask = 0;
  for (int level = 0; level < format.order(); ++level)
    if (format.level(level).unique) uniqueMask |= 1 << level;
  const TensorStorage& storage = storageOf(workspace);
  Expr outputHandle = imp::Var::make(output.name(), handleType());
  std::vector<Stmt> steps;
  if (storage.ismPerThread) {
    // The kernel's own threads sort each thread's workspace, merge the
    // parts of the result and write each part's slice of the output
    // (threads the runtime started would not keep the team's binding to
    // cores); errors surface in finish.
    auto onThreads = [&](const std::string& base, const Expr& count, const std::string& entry, const std::string& what) {
      Expr index = freshVar(base, imp::Type::int32());
      steps.push_back(imp::For::make(
        index, int32Imm(0), count,
        imp::Evaluate::make(imp::Call::make(entry, {storage.ismHandle, index}, imp::Type::void_())),
        imp::LoopKind::Parallel, what, 0, {}, 1));
    };
    onThreads("t", imp::Call::make("tcc_ism_kernel_thread_count", {storage.ismHandle}, imp::Type::int32()),
              "tcc_ism_kernel_finish_thread", "sort and merge each thread's " + workspace.name());
    Expr parts = freshVar(storage.name + "_parts", imp::Type::int32());
    steps.push_back(imp::Declare::make(
      parts, imp::Call::make("tcc_ism_kernel_merge_parts", {storage.ismHandle, outputHandle, int32Imm(uniqueMask)},
                             imp::Type::int32())));
    onThreads("part", parts, "tcc_ism_kernel_merge_part",
              "merge the threads' " + workspace.name() + " by ranges of " + output.name() + "'s first level, and "
              "count each range's positions");
    steps.push_back(imp::Comment::make("size " + output.name() + "'s arrays by a prefix sum over the ranges"));
    steps.push_back(imp::Evaluate::make(
      imp::Call::make("tcc_ism_kernel_allocate_output", {storage.ismHandle}, imp::Type::void_())));
    onThreads("part", parts, "tcc_ism_kernel_fill_part",
              "compress each range into its slice of " + output.name() + "'s arrays");
  }
  return imp::Block::make(
    {imp::Comment::make("sort, merge and compress " + workspace.name() + " into " + output.name() + " (" +
                        format.toString() + ")"),
     imp::Block::make(steps),
     returnIfFailed(ops::ne(imp::Call::make("tcc_ism_kernel_finish", {storage.ismHandle, outputHandle, int32Imm(uniqueMask)},
                                            imp::Type::int32()),
                            int32Imm(0))),
     imp::Evaluate::make(imp::Call::make("tcc_ism_kernel_destroy", {storage.ismHandle}, imp::Type::void_()))});
}

}  // namespace tcc::lowering
