// Sparse workspaces on the cuda target whose where runs inside a GPU loop
// (sparse_workspace() below a loop over the output's first index that a
// parallelize maps to the GPU: one row of a row-wise SpGEMM at a time).
// Each GPU thread keeps its own insert-sort-merge workspace: a coordinate
// list and the values inserted with them, appended in the order the
// producer's loops give, in scratch buffers of the launch (the thread of
// global index t owns entries t * capacity to (t + 1) * capacity - 1).
// Twice the workspace's dimension fit: when the list is full the thread
// sorts it (heapsort, in place) and adds the values of repeated
// coordinates, which leaves at most the dimension's entries, so at least
// as many inserts again fit before the next merge. After the fill the
// thread merges once more, and the consumer reads the list as a
// compressed level (pos = {0, entries}), as it reads a CPU workspace's
// drained arrays. The ISM runtime's policies (bucket, hash, ...) are CPU
// code; on the GPU every policy takes this form.
#include "../lowerer.h"
#include "tcc/ir/imperative_ops.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/gpu_kernels.h"

namespace tcc::lowering {

namespace ops = ir::imp;
using imp::Expr;
using imp::Stmt;

namespace {
}  // namespace

void Lowerer::refuseSparseWorkspaceOnGpu(const LoopCommands::Precompute& asked, const ir::TensorVar& workspace,
                                         const ir::WhereNode* where, bool drained, bool insideGpuLoop) const {
  std::string dense;
  for (const auto& tensor : ir::tensorsWritten(where->consumer))
    if (tensor.order() > 0 && !tensor.format().isAllDense()) dense = tensor.name();
  std::string reason;
  if ((!drained || !insideGpuLoop) && !dense.empty())
    reason = "its where is outside every GPU loop, so all GPU threads would insert into one workspace, and its "
             "consumer writes the sparse output " + dense + ", which GPU threads do not assemble from one (a dense "
             "output takes the results directly); on the cuda target each GPU thread keeps a sparse workspace of its "
             "own, which needs the where inside a GPU loop and a dense output";
  else if (!drained || !insideGpuLoop)
    reason = "its where is outside every GPU loop, so all GPU threads would insert into one workspace; on the cuda "
             "target each GPU thread keeps a sparse workspace of its own, which needs the where inside a GPU loop "
             "(sparse_workspace() or sparse_workspace(j) below a loop over the output's first index that a "
             "parallelize maps to the GPU)";
  else if (workspace.order() != 1)
    reason = "the workspace has order " + std::to_string(workspace.order()) + ", and a GPU thread's sparse workspace "
             "has order 1 (hoist every index of the output but the last)";
  else if (!dense.empty())
    reason = "its consumer writes the sparse output " + dense + ", which GPU threads do not assemble";
  else
    return;
  throw LoweringError(asked.text + ": sparse workspaces are not supported on the cuda target here: " + reason +
                      "; or ask for a dense one (dense_workspace or a precompute), or compile for the cpu target",
                      asked.command);
}

void Lowerer::declareGpuThreadSparseWorkspace(const ir::TensorVar& workspace, const std::vector<Expr>& dims) {
  if (workspace.order() != 1 || dims.size() != 1)
    throw LoweringError("internal: a GPU thread's sparse workspace has one mode, " + workspace.name() + " has " +
                        std::to_string(workspace.order()));
  TensorStorage storage;
  storage.name = freshVar(workspace.name(), imp::Type::int32()).as<imp::Var>()->name;
  storage.isWorkspace = true;
  storage.gpuSparse = true;
  storage.dims = dims;
  storage.pos.assign(1, freshVar(storage.name + "1_pos", imp::Type::pointerTo(imp::Type::int64())));
  storage.crd.assign(1, freshVar(storage.name + "1_crd", imp::Type::pointerTo(imp::Type::int32())));
  storage.vals = freshVar(storage.name + "_vals", imp::Type::pointerTo(valueType(workspace)));
  storage.gpuSparseCount = freshVar(storage.name + "_entries", imp::Type::int64());
  storage.sizePerThread = freshVar(storage.name + "_capacity", imp::Type::int64());
  storage.posPerThread = freshVar(storage.name + "_pos_size", imp::Type::int64());
  header_.push_back(imp::Comment::make("sparse workspace " + workspace.name() + ": a coordinate list and values per "
                                       "GPU thread, twice its dimension each, merged in the thread"));
  header_.push_back(imp::Declare::make(storage.sizePerThread, ops::mul(ops::int64Imm(2), ops::cast(imp::Type::int64(), dims[0]))));
  header_.push_back(imp::Declare::make(storage.posPerThread, ops::int64Imm(2)));
  storage.crdOfAllThreads = freshVar(storage.name + "1_crd_of_all_threads", storage.crd[0].type());
  storage.valsOfAllThreads = freshVar(storage.name + "_vals_of_all_threads", storage.vals.type());
  storage.posOfAllThreads = freshVar(storage.name + "1_pos_of_all_threads", storage.pos[0].type());
  gpuThreadScratch_.push_back({storage.crdOfAllThreads, storage.sizePerThread});
  gpuThreadScratch_.push_back({storage.valsOfAllThreads, storage.sizePerThread});
  gpuThreadScratch_.push_back({storage.posOfAllThreads, storage.posPerThread});
  storage_[workspace] = std::move(storage);
}

std::vector<Stmt> Lowerer::selectGpuThreadSparseCopy(TensorStorage& storage) {
  Expr thread = imp::Call::make(kGpuThreadIndexCall, {}, imp::Type::int64());
  return {imp::Comment::make("this GPU thread's " + storage.name + ", emptied"),
          imp::Declare::make(storage.crd[0], ops::add(storage.crdOfAllThreads, ops::mul(thread, storage.sizePerThread))),
          imp::Declare::make(storage.vals, ops::add(storage.valsOfAllThreads, ops::mul(thread, storage.sizePerThread))),
          imp::Declare::make(storage.pos[0], ops::add(storage.posOfAllThreads, ops::mul(thread, storage.posPerThread))),
          imp::Declare::make(storage.gpuSparseCount, ops::int64Imm(0))};
}

Stmt Lowerer::insertIntoGpuThreadSparseWorkspace(const ir::AccessNode* lhs, const Expr& value) {
  const TensorStorage& storage = storageOf(lhs->tensor);
  auto coordinate = coordinates_.find(lhs->indices.at(0));
  if (coordinate == coordinates_.end())
    throw LoweringError("internal: sparse workspace coordinate " + lhs->indices[0].name() + " is not bound");
  const Expr& count = storage.gpuSparseCount;
  Expr merge = imp::Call::make(kGpuSparseWorkspaceMergeCall, {storage.crd[0], storage.vals, count}, count.type());
  return imp::Block::make(
    {imp::If::make(ops::ge(count, storage.sizePerThread), imp::Assign::make(count, merge)),
     imp::Store::make(storage.crd[0], count, ops::cast(imp::Type::int32(), coordinate->second)),
     imp::Store::make(storage.vals, count, ops::cast(storage.vals.type().element(), value)),
     imp::Assign::make(count, ops::add(count, ops::int64Imm(1)))});
}

std::vector<Stmt> Lowerer::mergeGpuThreadSparseWorkspace(TensorStorage& storage) {
  const Expr& count = storage.gpuSparseCount;
  return {imp::Comment::make("sort and merge this GPU thread's " + storage.name + "; its consumer reads the entries "
                             "as a compressed level"),
          imp::Assign::make(count,
                            imp::Call::make(kGpuSparseWorkspaceMergeCall, {storage.crd[0], storage.vals, count},
                                            count.type())),
          imp::Store::make(storage.pos[0], ops::int64Imm(0), ops::int64Imm(0)),
          imp::Store::make(storage.pos[0], ops::int64Imm(1), count)};
}

}  // namespace tcc::lowering
