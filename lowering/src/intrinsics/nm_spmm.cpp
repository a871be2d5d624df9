// C(i,j) = A(i,k) * B(k,j), B stored {dense, nm(N,M,L)}, on the cuda target:
// recognised in concrete index notation and expanded into per-statement
// kernels (nm_spmm_kernel.cpp) and their launch (nm_spmm_plan.cpp).
// Products with an N:M operand that the kernel cannot compute right are
// refused with the reason; elsewhere an N:M matrix is read from a dense copy
// (see isNmSpmmCandidate).
#include "nm_spmm.h"

#include <algorithm>
#include <sstream>

#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/nm_spmm.h"

namespace tcc::lowering {

namespace {

namespace imp = ir::imp;

const ir::IndexExpr& withoutSums(const ir::IndexExpr& expr) {
  if (const auto* sum = expr.as<ir::ReductionNode>()) return withoutSums(sum->body);
  return expr;
}

// The two accesses of a product of two accesses, else nullopt.
std::optional<std::pair<ir::Access, ir::Access>> productOperands(const ir::IndexExpr& rhs) {
  const auto* product = withoutSums(rhs).as<ir::MulNode>();
  if (!product) return std::nullopt;
  const ir::IndexExpr& a = withoutSums(product->a);
  const ir::IndexExpr& b = withoutSums(product->b);
  if (!a.as<ir::AccessNode>() || !b.as<ir::AccessNode>()) return std::nullopt;
  return std::make_pair(ir::Access(a), ir::Access(b));
}

std::string formatOf(const ir::TensorVar& tensor) { return tensor.format().toString(); }

bool denseRowMajor(const ir::TensorVar& tensor) {
  return tensor.format().isAllDense() && tensor.format().hasIdentityOrdering();
}

// A dense matrix stored column by column: {dense, dense} order (1,0).
bool denseKMajor(const ir::TensorVar& tensor) {
  return tensor.order() == 2 && tensor.format().isAllDense() && tensor.format().modeOrdering() == std::vector<int>{1, 0};
}

int intArgument(const imp::Intrinsic& op, size_t index) {
  const auto* value = op.args.at(index).as<imp::IntImm>();
  if (!value) throw LoweringError("internal: the nm_spmm intrinsic's N, M and L are not constants");
  return static_cast<int>(value->value);
}

struct NmParameters {
  int N, M, L;
  bool aKMajor;      // A stored {dense, dense} order (1,0)
  bool tensorCores;  // tensorcore(): the tensor-core tiles
};
NmParameters parametersOf(const imp::Intrinsic& op) {
  return {intArgument(op, 0), intArgument(op, 1), intArgument(op, 2), op.args.size() > 3 && intArgument(op, 3) != 0,
          op.args.size() > 4 && intArgument(op, 4) != 0};
}

}  // namespace

bool hasNmLevel(const ir::TensorVar& tensor) {
  for (const auto& level : tensor.format().levels())
    if (level.kind == ir::LevelKind::NM) return true;
  return false;
}

bool isNmSpmmCandidate(const ir::IndexStmt& statement) {
  const auto* assignment = statement.as<ir::AssignmentNode>();
  if (!assignment) return false;
  auto operands = productOperands(assignment->rhs);
  return operands && (hasNmLevel(operands->first.tensor()) || hasNmLevel(operands->second.tensor()));
}

std::optional<imp::Function> recognizeNmSpmm(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                                             const LowerOptions& options) {
  auto assignments = ir::assignmentsOf(cin);
  bool readsNm = false;
  for (const auto& access : ir::accessesOf(cin)) readsNm |= hasNmLevel(access.tensor());
  if (!readsNm || !options.cudaTarget) return std::nullopt;
  const std::string shape = "C(i,j) = A(i,k) * B(k,j) with A and C dense and B {dense, nm(N,M,L)}, all float32";
  // Formats first: a sparse output brings a workspace (more assignments).
  auto written = ir::tensorsWritten(cin);
  for (const auto& tensor : parameters) {
    if (hasNmLevel(tensor) || denseRowMajor(tensor) || tensor.order() != 2) continue;
    bool output = std::find(written.begin(), written.end(), tensor) != written.end();
    if (!output && denseKMajor(tensor)) continue;  // A may be k-major (checked below)
    throw LoweringError(tensor.name() + " is stored " + formatOf(tensor) + "; the N:M SpMM intrinsic " +
                        (output ? "writes it dense and row-major ({dense, dense}): declare it dense"
                                : "reads it dense, row-major ({dense, dense}) or k-major ({dense, dense} order "
                                  "(1,0)): declare it so"));
  }
  if (assignments.size() != 1)
    throw LoweringError("the N:M SpMM intrinsic computes one product " + shape + "; this statement has " +
                        std::to_string(assignments.size()) + " assignments");
  const ir::AssignmentNode& assignment = *assignments[0];
  auto operands = productOperands(assignment.rhs);
  if (!operands)
    throw LoweringError("on the cuda target an N:M matrix is read by the N:M SpMM intrinsic, which computes " + shape +
                        "; this right-hand side is not a product of two tensors");
  ir::Access a = operands->first, b = operands->second;
  if (hasNmLevel(a.tensor()) && hasNmLevel(b.tensor()))
    throw LoweringError("the N:M SpMM intrinsic multiplies a dense matrix by one N:M matrix, but both " +
                        a.tensor().name() + " and " + b.tensor().name() + " are N:M");
  if (hasNmLevel(a.tensor())) std::swap(a, b);
  const ir::Access& c = assignment.lhs;
  const ir::TensorVar &ct = c.tensor(), &at = a.tensor(), &bt = b.tensor();
  if (ct.order() != 2 || at.order() != 2 || bt.order() != 2)
    throw LoweringError("the N:M SpMM intrinsic computes " + shape + ", a product of matrices; here " + ct.name() +
                        ", " + at.name() + " and " + bt.name() + " have orders " + std::to_string(ct.order()) + ", " +
                        std::to_string(at.order()) + " and " + std::to_string(bt.order()));
  const auto &ci = c.indices(), &ai = a.indices(), &bi = b.indices();
  bool distinct = ci[0] != ci[1] && ai[0] != ai[1] && bi[0] != bi[1];
  if (distinct && bi[0] == ci[1] && bi[1] == ai[1] && ai[0] == ci[0])
    throw LoweringError(bt.name() + " is read transposed (" + ir::toString(ir::IndexExpr(b)) + "): N:M prunes " +
                        bt.name() + "'s rows in windows along the summed index, so the intrinsic needs " +
                        bt.name() + "(k,j) with k summed, as in " + shape);
  if (!distinct || ai[0] != ci[0] || bi[1] != ci[1] || ai[1] != bi[0] || ai[1] == ci[0] || ai[1] == ci[1])
    throw LoweringError("the N:M SpMM intrinsic computes " + shape + "; " + ir::toString(ir::IndexExpr(c)) + " = " +
                        ir::toString(ir::IndexExpr(a)) + " * " + ir::toString(ir::IndexExpr(b)) +
                        " indexes its operands otherwise");
  const ir::Format& nm = bt.format();
  if (nm.order() != 2 || nm.level(0).kind != ir::LevelKind::Dense || nm.level(1).kind != ir::LevelKind::NM ||
      !nm.hasIdentityOrdering())
    throw LoweringError(bt.name() + " is stored " + formatOf(bt) +
                        "; the N:M SpMM intrinsic reads {dense, nm(N,M,L)}: dense rows, pruned in windows of M");
  if (!denseRowMajor(at) && !denseKMajor(at))
    throw LoweringError(at.name() + " is stored " + formatOf(at) + "; the N:M SpMM intrinsic reads it dense, "
                        "row-major ({dense, dense}) or k-major ({dense, dense} order (1,0)): declare it so");
  if (!denseRowMajor(ct))
    throw LoweringError(ct.name() + " is stored " + formatOf(ct) + "; the N:M SpMM intrinsic writes it dense and "
                        "row-major ({dense, dense}): declare it dense");
  for (const auto* tensor : {&ct, &at, &bt})
    if (tensor->datatype() != ir::Datatype::Float32)
      throw LoweringError("the N:M SpMM intrinsic computes float32, but " + tensor->name() + " is " +
                          ir::toString(tensor->datatype()) + ": declare " + ct.name() + ", " + at.name() + " and " +
                          bt.name() + " `of float32`");

  const ir::LevelFormat& level = nm.level(1);
  if (options.tensorCore) {
    if (!denseRowMajor(at))
      throw LoweringError::ofTensorCore("tensorcore(): the tensor-core N:M kernels read " + at.name() +
                                        " row-major ({dense, dense}); it is stored " + formatOf(at));
    std::string refusal = nmSpmmTensorCoresRefusal(level.nmN, level.nmM, level.nmL);
    if (!refusal.empty()) throw LoweringError::ofTensorCore("tensorcore(): " + refusal);
  }

  imp::Function function;
  function.name = options.functionName;
  for (const auto& tensor : parameters) {
    if (tensor != ct && tensor != at && tensor != bt)
      throw LoweringError("internal: tensor " + tensor.name() + " is a parameter of an N:M SpMM kernel");
    function.parameters.push_back({tensor.name(), tensor.order(), imp::ScalarKind::Float32, tensor == ct});
  }
  function.body = imp::Block::make(
      {imp::Comment::make(ct.name() + " = " + at.name() + " * " + bt.name() + " (" + bt.name() + " " + level.toString() +
                          ")" + (options.tensorCore ? " on tensor cores" : "")),
       imp::Intrinsic::make(kNmSpmmIntrinsic, {ct.name(), at.name(), bt.name()},
                            {imp::IntImm::make(level.nmN), imp::IntImm::make(level.nmM), imp::IntImm::make(level.nmL),
                             imp::IntImm::make(denseKMajor(at) ? 1 : 0), imp::IntImm::make(options.tensorCore ? 1 : 0)})});
  return function;
}

std::string explainNmSpmm(const imp::Function&, const imp::Intrinsic& op) {
  NmParameters nm = parametersOf(op);
  std::ostringstream out;
  out << op.tensors[0] << " = " << op.tensors[1] << " * " << op.tensors[2] << " is the N:M SpMM intrinsic ("
      << op.tensors[2] << " nm(" << nm.N << "," << nm.M << "," << nm.L << "), " << 100.0 * (1.0 - double(nm.N) / nm.M)
      << "% sparse): CUDA kernels generated for these N, M, L"
      << (nm.aKMajor ? " and " + op.tensors[1] + " k-major (its tiles copied by 16-byte copies of its columns)" : "")
      << "; ";
  if (nm.tensorCores) {
    out << "tensorcore(): on tensor cores, each warp 64x32 of C by mma.sync m16n8k8 on TF32, every value of "
        << op.tensors[1] << " and " << op.tensors[2]
        << " split into two TF32 values and multiplied three times (3xTF32), each k-tile's products summed in "
           "registers of their own and added into float32 totals (as accurate as float32 FMA: measured closer to "
           "the exact sums than cuBLAS's SGEMM; an infinite entry gives NaN); tiles ";
    const auto fitting = nmSpmmPreferredTiles(nm.N, nm.M, nm.L, true);
    for (size_t t = 0; t < fitting.size(); ++t) {
      const NmSpmmTile& tile = nmSpmmTiles()[fitting[t]];
      const int windows = nmSpmmTileWindows(tile, nm.N, nm.M);
      out << (t ? ", " : "") << tile.name << " " << tile.rows() << "x" << tile.cols() << " (k-tiles of " << windows
          << " window" << (windows > 1 ? "s" : "") << ", " << nmSpmmStages(tile, nm.N, nm.M, nm.L) << " stages)";
    }
    out << "; split-K when m*n is small; the plan is autotuned per shape when the product is large";
    return out.str();
  }
  std::vector<std::string> tiles;
  for (const auto& tile : nmSpmmTiles())
    if (!tile.tensorCores && nmSpmmTileFits(tile, nm.N, nm.M, nm.L) && nmSpmmTileTakesA(tile, nm.aKMajor))
      tiles.push_back(std::string(tile.name) + " " + std::to_string(tile.rows()) + "x" + std::to_string(tile.cols()));
  if (tiles.empty()) {
    out << "no register-tiled kernel fits these N, M, L (L must be a multiple of 4 that divides or is divided by a "
           "tile's width, and M at most 128), so one thread computes each entry of "
        << op.tensors[0];
    return out.str();
  }
  int windows = nmSpmmWindowsPerTile(nm.N, nm.M);
  out << "tiles ";
  for (size_t t = 0; t < tiles.size(); ++t) out << (t ? ", " : "") << tiles[t];
  out << " (8x8 per thread, warps of 8x4 threads), k-tiles of " << windows << " window" << (windows > 1 ? "s" : "")
      << " (" << windows * nm.M << " columns of " << op.tensors[1] << ", " << windows * nm.N << " kept rows of "
      << op.tensors[2] << "), A's tile loaded whole (non-packing) through a 2-3 stage cp.async pipeline"
      << (nmSpmmPacks(nm.N, nm.M) ? ", and, this being above 70% sparse, packing kernels that load only the columns "
                                    "the kept rows read (col_info)"
                                  : "")
      << "; split-K when m*n is small; the plan is autotuned per shape when the product is large, stream-K "
         "kernels of the mbarrier tiles among the candidates where the tiles leave the GPU's last wave part empty, "
         "and persistent grids of whole tiles (with stream-K for the last wave's tiles) where there is more than a "
         "wave of tiles";
  std::vector<std::string> transposing;
  for (const auto& tile : nmSpmmTiles())
    if (!nm.aKMajor && nmSpmmTileTransposesA(tile, nm.N, nm.M, nm.L)) transposing.push_back(tile.name);
  if (!transposing.empty()) {
    out << "; and, among the candidates, the k-major kernels of ";
    for (size_t t = 0; t < transposing.size(); ++t) out << (t ? ", " : "") << transposing[t];
    out << " on a k-major copy of " << op.tensors[1]
        << " that a tiled transpose makes first (a scratch buffer per statement), timed with it";
  }
  return out.str();
}

namespace {

std::string deviceCode(const imp::Intrinsic& op, const std::string& prefix) {
  NmParameters nm = parametersOf(op);
  return nmSpmmDeviceCode(nm.N, nm.M, nm.L, prefix, nm.aKMajor, nm.tensorCores);
}

// The printed .cu's launch: the default plan (nmSpmmDefaultPlan) in C.
std::string hostDefinitions(const imp::Intrinsic& op, const std::string& prefix) {
  NmParameters nm = parametersOf(op);
  std::vector<const NmSpmmTile*> fitting;
  for (int index : nmSpmmPreferredTiles(nm.N, nm.M, nm.L, nm.tensorCores)) fitting.push_back(&nmSpmmTiles()[index]);
  std::ostringstream out;
  const std::string N = std::to_string(nm.N), M = std::to_string(nm.M), L = std::to_string(nm.L);
  out << "// " << prefix << ": launches the N:M SpMM kernels for C = A * B, B in nm(" << N << "," << M << "," << L
      << "), with the default plan (the library autotunes; this file does not).\n"
      << "static int32_t " << prefix << "_run(tcc_tensor* C, tcc_tensor* A, tcc_tensor* B) {\n"
      << "  const int m = A->dims[0], k = A->dims[1], n = B->dims[1];\n"
      << "  if (B->dims[0] != k || C->dims[0] != m || C->dims[1] != n) return 3;\n"
      << "  const int w = (k + " << M << " - 1) / " << M << " * " << N << ", q = (n + " << L << " - 1) / " << L << ";\n"
      << "  if (m == 0 || n == 0) return 0;\n"
      << "  const float* a = (const float*)A->vals;\n"
      << "  const float* b = (const float*)B->vals;\n"
      << "  const int* d = B->levels[1].crd;\n"
      << "  float* c = (float*)C->vals;\n";
  if (fitting.empty()) {
    out << "  long long blocks = ((long long)m * n + 255) / 256;\n"
        << "  if (blocks > 65535) blocks = 65535;\n"
        << "  " << prefix << "_simple<<<(unsigned)blocks, 256>>>(a, b, d, c, m, n, k, w, q, 0, 0);\n"
        << "  return cudaGetLastError() == cudaSuccess ? 0 : 2;\n}\n";
    return out.str();
  }
  out << "  typedef void (*Kernel)(const float*, const float*, const int*, float*, int, int, int, int, int, int, int);\n"
      << "  // Tiles that fit, most preferred first: rows, columns, threads, shared bytes, windows per k-tile.\n"
      << "  static const int tiles[" << fitting.size() << "][5] = {";
  for (size_t t = 0; t < fitting.size(); ++t)
    out << (t ? ", " : "") << "{" << fitting[t]->rows() << ", " << fitting[t]->cols() << ", " << fitting[t]->threads()
        << ", " << nmSpmmSharedBytes(*fitting[t], nm.N, nm.M, nm.L) << ", "
        << nmSpmmTileWindows(*fitting[t], nm.N, nm.M)
        << "}";
  out << "};\n  static const Kernel kernels[" << fitting.size() << "] = {";
  for (size_t t = 0; t < fitting.size(); ++t) out << (t ? ", " : "") << prefix << "_" << fitting[t]->name;
  out << "};\n"
      << "  const int count = " << fitting.size() << ";\n"
      << "  int sms = 1;\n"
      << "  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess || sms < 1) sms = 1;\n"
      << "  int chosen = -1, splits = 1;\n"
      << "  for (int t = 0; t < count && chosen < 0; ++t)\n"
      << "    if ((long long)((m + tiles[t][0] - 1) / tiles[t][0]) * ((n + tiles[t][1] - 1) / tiles[t][1]) >= sms) "
         "chosen = t;\n"
      << "  if (chosen < 0) {\n"
      << "    chosen = count - 1;\n"
      << "    long long ctas = (long long)((m + tiles[chosen][0] - 1) / tiles[chosen][0]) *\n"
      << "                     ((n + tiles[chosen][1] - 1) / tiles[chosen][1]);\n"
      << "    long long want = (2LL * sms + ctas - 1) / ctas;\n"
      << "    splits = (int)(want < 1 ? 1 : want > 16 ? 16 : want);\n"
      << "  }\n"
      << "  long long kTiles = ((k + " << M << " - 1) / " << M << " + tiles[chosen][4] - 1) / tiles[chosen][4];\n"
      << "  if (kTiles < 1) kTiles = 1;\n"
      << "  if (splits > kTiles) splits = (int)kTiles;\n"
      << "  const int tilesPerSplit = (int)((kTiles + splits - 1) / splits);\n"
      << "  splits = (int)((kTiles + tilesPerSplit - 1) / tilesPerSplit);\n"
      << "  if (splits > 1 && cudaMemset(c, 0, sizeof(float) * (size_t)m * n) != cudaSuccess) return 2;\n"
      << "  if (cudaFuncSetAttribute(kernels[chosen], cudaFuncAttributeMaxDynamicSharedMemorySize, tiles[chosen][3]) !=\n"
      << "      cudaSuccess) return 2;\n"
      << "  dim3 grid((n + tiles[chosen][1] - 1) / tiles[chosen][1], (m + tiles[chosen][0] - 1) / tiles[chosen][0], "
         "splits);\n"
      << "  kernels[chosen]<<<grid, tiles[chosen][2], tiles[chosen][3]>>>(a, b, d, c, m, n, k, w, q, tilesPerSplit, "
         "splits > 1);\n"
      << "  return cudaGetLastError() == cudaSuccess ? 0 : 2;\n}\n";
  return out.str();
}

std::string hostStatement(const imp::Intrinsic& op, const std::string& prefix) {
  return "if (int32_t tcc_status = " + prefix + "_run(" + op.tensors[0] + ", " + op.tensors[1] + ", " + op.tensors[2] +
         ")) return tcc_status;";
}

}  // namespace

const CudaIntrinsicExpansion kNmSpmmCudaExpansion = {deviceCode, hostDefinitions, hostStatement};

}  // namespace tcc::lowering
