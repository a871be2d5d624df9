#include "kernel_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <vector>

namespace tcc::rt::permanent::gpu {
namespace {

constexpr const char* kParameters =
    "const long long* __restrict__ chunks, unsigned long long chunkSize, int logThreadsPerChunk, long long threads,\n"
    "    double* __restrict__ partials, double* __restrict__ globalRows, const int* __restrict__ columnStart,\n"
    "    const int* __restrict__ rows, const double* __restrict__ values, const double* __restrict__ start, int n";

constexpr const char* kPrelude =
    "typedef unsigned long long tcc_u64;\n"
    "\n"
    "// Each chunk's slices added in order, compensated (Neumaier).\n"
    "extern \"C\" __global__ void tcc_perm_reduce(const double* __restrict__ partials, int threadsPerChunk,\n"
    "                                            long long chunkCount, double* __restrict__ chunkSums) {\n"
    "  const long long chunk = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (chunk >= chunkCount) return;\n"
    "  const double* slice = partials + chunk * threadsPerChunk;\n"
    "  double sum = 0, compensation = 0;\n"
    "  for (int k = 0; k < threadsPerChunk; ++k) {\n"
    "    const double value = slice[k], next = sum + value;\n"
    "    compensation += fabs(sum) >= fabs(value) ? (sum - next) + value : (value - next) + sum;\n"
    "    sum = next;\n"
    "  }\n"
    "  chunkSums[chunk] = sum + compensation;\n"
    "}\n\n";

// The thread's slice [begin, end) of its chunk, and gray(begin).
constexpr const char* kThreadSlice =
    "  const tcc_u64 span = chunkSize >> logThreadsPerChunk;\n"
    "  const tcc_u64 begin = (tcc_u64)chunks[t >> logThreadsPerChunk] * chunkSize +\n"
    "                        (tcc_u64)(t & ((1LL << logThreadsPerChunk) - 1)) * span;\n"
    "  const tcc_u64 end = begin + span;\n"
    "  const tcc_u64 gray = begin ^ (begin >> 1);\n";

std::string number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string result = text;
  if (result.find_first_of(".en") == std::string::npos) result += ".0";  // a double literal
  return result;
}

// A name and a number ("x3"), built by appending: GCC 12 warns (-Wrestrict,
// a false positive) on "literal" + std::to_string(...).
std::string numbered(char name, int number) {
  std::string text(1, name);
  text += std::to_string(number);
  return text;
}

std::string x(int row) { return numbered('x', row); }

// The product of `factors` in four independent chains (the multiplier
// pipelines them where one chain would wait on each product).
std::string productExpression(const std::vector<std::string>& factors) {
  if (factors.empty()) return "1.0";
  std::vector<std::string> chains(std::min<size_t>(4, factors.size()));
  for (size_t k = 0; k < factors.size(); ++k) {
    std::string& chain = chains[k % chains.size()];
    chain += (chain.empty() ? "" : " * ") + factors[k];
  }
  std::string result;
  for (size_t k = 0; k < chains.size(); ++k) result += (k ? " * " : "") + ("(" + chains[k] + ")");
  return result;
}

// The register-resident generated kernels share their shape; they differ
// in which rows live in registers and what a column's flip does.
struct GeneratedKernel {
  const RyserProblem& problem;
  int registerRows;     // rows 0..registerRows-1 are registers; the rest global (Hybrid)
  int registerColumns;  // columns 0..registerColumns-1 touch registers only
  int unroll;           // steps per unrolled block: a power of two dividing every thread's slice
  bool blockProduct;    // keep the product of the rows the block's columns miss (Hybrid)
  bool productLevels = false;  // and the frequent rows' product in levels by first column
  int sliceBits = 64;   // a thread's slice is at most 2^sliceBits steps: later columns flip only at its start
  // Rows liveRows.. change only at a thread's start (Hybrid: rows of the
  // columns >= sliceBits alone, last after permanent ordering): their
  // product is computed there once.
  int liveRows = 0;
  // Column 0 summed out in pairs of steps (with block product and levels,
  // unroll >= 4): each row column 0 touches keeps both its sums, x_i
  // (column 0 out) and z_i = x_i + a_i0 (column 0 in); steps g and g + 1
  // (g even) differ only in column 0, so together they add
  // +-(product of the other rows) (prod x_i - prod z_i) over column 0's rows.
  bool pairs = false;
  // With pairs, whether column 0's rows keep z_i in registers (else each
  // pair forms x_i + a_i0 as it multiplies: no registers, |column 0| adds).
  bool keepColumn0Sums = true;
  // Resident blocks per SM the kernel is compiled for (0: the compiler's
  // choice): __launch_bounds__(256, minBlocks) caps the registers per
  // thread at 65536 / (256 minBlocks).
  int minBlocks = 0;
  // The block's last flip chosen by if-tests in order of frequency instead
  // of a switch.
  bool chainDispatch = false;
  std::string launchBounds() const {
    return std::to_string(kGeneratedThreadsPerBlock) + (minBlocks > 0 ? ", " + std::to_string(minBlocks) : "");
  }

  // Whether column 0 touches the row (in pair mode).
  bool column0Row(int row) const {
    if (!pairsApply()) return false;
    for (int32_t k = problem.columnStart[0]; k < problem.columnStart[1]; ++k)
      if (problem.rows[k] == row) return true;
    return false;
  }
  // Whether the row keeps z_i in a register.
  bool paired(int row) const { return keepColumn0Sums && column0Row(row); }

  int n() const { return problem.n; }
  bool hasGlobal() const { return registerRows < n(); }
  bool hasFrozen() const { return liveRows < n(); }
  // The loop's expression for the global part's product.
  std::string globalProductUpdate() const {
    return std::string("globalProduct = tcc_perm_global_product(xg)") + (hasFrozen() ? " * frozenProduct" : "") + ";";
  }
  // Row i >= registerRows of a block's thread k is at
  // globalRows[(block * globalCount + i - registerRows) * 256 + k]: a warp's
  // accesses coalesce, and each row is a constant offset from the thread's
  // xg (an immediate in the load), so the rows cost no address registers.
  std::string global(int row) const {
    return "xg[" + std::to_string((row - registerRows) * kGeneratedThreadsPerBlock) + "]";
  }

  // The parameters of column c's device functions: its register rows (by
  // reference), then, for a column with global rows, the global part.
  std::string functionParameters(int column) const {
    std::string text;
    bool globals = false;
    for (int32_t k = problem.columnStart[column]; k < problem.columnStart[column + 1]; ++k) {
      const int row = problem.rows[k];
      if (row < registerRows) {
        text += (text.empty() ? "" : ", ") + ("double& " + x(row));
        if (column > 0 && paired(row)) text += ", double& " + numbered('z', row);
      } else {
        globals = true;
      }
    }
    if (globals) text += std::string(text.empty() ? "" : ", ") + "volatile double* xg";
    return text;
  }
  std::string callArguments(int column) const {
    std::string text;
    bool globals = false;
    for (int32_t k = problem.columnStart[column]; k < problem.columnStart[column + 1]; ++k) {
      const int row = problem.rows[k];
      if (row < registerRows) {
        text += (text.empty() ? "" : ", ") + x(row);
        if (column > 0 && paired(row)) text += ", " + numbered('z', row);
      } else {
        globals = true;
      }
    }
    if (globals) text += std::string(text.empty() ? "" : ", ") + "xg";
    return text;
  }
  bool touchesGlobal(int column) const {
    for (int32_t k = problem.columnStart[column]; k < problem.columnStart[column + 1]; ++k)
      if (problem.rows[k] >= registerRows) return true;
    return false;
  }

  void printColumnFunctions(std::ostream& out) const {
    for (int c = 0; c + 1 < n(); ++c) {
      for (const char* direction : {"inc", "dec"}) {
        const char* op = direction[0] == 'i' ? " += " : " -= ";
        out << "__device__ __forceinline__ void tcc_perm_c" << c << "_" << direction << "("
            << functionParameters(c) << ") {\n";
        for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k) {
          const int row = problem.rows[k];
          out << "  " << (row < registerRows ? x(row) : global(row)) << op << number(problem.values[k]) << ";\n";
          if (c > 0 && paired(row)) out << "  " << numbered('z', row) << op << number(problem.values[k]) << ";\n";
        }
        out << "}\n";
      }
    }
    out << "\n";
  }

  // The global rows' product (Hybrid), read coalesced: the rows a thread's
  // steps change, and apart those only its start changes.
  void printGlobalProduct(std::ostream& out) const {
    if (!hasGlobal()) return;
    std::vector<std::string> live, frozen;
    for (int row = registerRows; row < n(); ++row) (row < liveRows ? live : frozen).push_back(global(row));
    out << "// The product of the row sums kept in global memory that a thread's steps change.\n"
        << "__device__ __forceinline__ double tcc_perm_global_product(const volatile double* xg) {\n"
        << "  return " << productExpression(live) << ";\n}\n\n";
    if (hasFrozen())
      out << "// The product of the rows only columns >= " << sliceBits << " touch: fixed for a thread's slice.\n"
          << "__device__ __forceinline__ double tcc_perm_frozen_product(const volatile double* xg) {\n"
          << "  return " << productExpression(frozen) << ";\n}\n\n";
  }

  std::string flip(int column, const std::string& direction) const {
    std::string call = "tcc_perm_c" + std::to_string(column) + "_" + direction + "(" + callArguments(column) + ")";
    return call;
  }

  // Rows whose sums change inside an unrolled block (those of columns
  // < log2 U) when the kernel keeps the product of the others per block:
  // 0 when it does not.
  int blockFrequentRows() const {
    if (!blockProduct || unroll < 2) return 0;
    const int frequent = problem.rowsTouchedBy(__builtin_ctz(unroll));
    return frequent < registerRows ? frequent : 0;
  }

  // x at `begin`: the columns in gray(begin) added to x(0), from column
  // `firstColumn` on. With global rows, the register rows' sums first (the
  // columns' register entries), then each global row's sum in a register
  // and stored once: the flip functions would make each global entry a
  // chain of volatile read-modify-writes.
  void printSetup(std::ostream& out, int firstColumn) const {
    if (!hasGlobal()) {
      for (int c = firstColumn; c + 1 < n(); ++c) out << "  if ((gray >> " << c << ") & 1) " << flip(c, "inc") << ";\n";
      return;
    }
    for (int c = firstColumn; c + 1 < n(); ++c) {
      std::string body;
      for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k) {
        const int row = problem.rows[k];
        if (row >= registerRows) continue;
        // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on " " + std::string.
        const std::string increment = " += " + number(problem.values[k]) + ";";
        body += ' ';
        body += x(row);
        body += increment;
        if (c > 0 && paired(row)) {
          body += ' ';
          body += numbered('z', row);
          body += increment;
        }
      }
      if (!body.empty()) out << "  if ((gray >> " << c << ") & 1) {" << body << " }\n";
    }
    std::vector<std::vector<std::pair<int, double>>> entries(n());
    for (int c = firstColumn; c + 1 < n(); ++c)
      for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k)
        if (problem.rows[k] >= registerRows) entries[problem.rows[k]].emplace_back(c, problem.values[k]);
    for (int row = registerRows; row < n(); ++row) {
      out << "  {\n    double g = " << number(problem.start[row]) << ";\n";
      for (const auto& [c, value] : entries[row]) out << "    if ((gray >> " << c << ") & 1) g += " << number(value) << ";\n";
      out << "    " << global(row) << " = g;\n  }\n";
    }
  }

  // What a flip of `column` changes in d: 0 nothing, 1 only rows column 1
  // also touches (d from their sums and the kept product of the others),
  // 2 others too (both products again).
  int pairUpdateKind(int column) const {
    int kind = 0;
    for (int32_t k = problem.columnStart[column]; k < problem.columnStart[column + 1]; ++k) {
      const int row = problem.rows[k];
      if (!column0Row(row)) continue;
      kind = std::max(kind, column == 1 || column1Row(row) ? 1 : 2);
    }
    return kind;
  }
  bool column1Row(int row) const {
    if (n() < 3) return false;
    for (int32_t k = problem.columnStart[1]; k < problem.columnStart[2]; ++k)
      if (problem.rows[k] == row) return true;
    return false;
  }

  bool touchesPaired(int column) const {
    for (int32_t k = problem.columnStart[column]; k < problem.columnStart[column + 1]; ++k)
      if (column0Row(problem.rows[k])) return true;
    return false;
  }
  // Pairs apply where the levels do: a block product, unrolled blocks of
  // at least 4 steps (so a pair's signs are known at generation time).
  bool pairsApply() const { return pairs && productLevels && unroll >= 4 && blockFrequentRows() > 0; }

  // What a step costs on average, by the kernel's own structure: float64
  // additions and multiplications, global accesses (a flip's read and write
  // of each global entry, the global product's reads) weighted by
  // globalAccessCost; a thread's set-up is left out (a slice has 2^13 steps).
  KernelCost cost(double globalAccessCost) const {
    KernelCost result;
    const int frequent = blockFrequentRows();
    const bool pairMode = pairsApply();
    const bool levelMode = frequent > 0 && productLevels;
    const int levels = frequent > 0 ? __builtin_ctz(unroll) : 0;
    // Level sizes (rows by their first column < log2 U; in pair mode level 0
    // is column 0's rows and holds d).
    std::vector<int> levelSize(std::max(1, levels), 0);
    if (frequent > 0) {
      std::vector<int> firstColumn(frequent, levels - 1);
      for (int c = levels - 1; c >= 0; --c)
        for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k)
          if (problem.rows[k] < frequent) firstColumn[problem.rows[k]] = c;
      for (int row = 0; row < frequent; ++row) ++levelSize[firstColumn[row]];
    }
    const int column0Size = problem.columnSize(0);
    const int liveGlobal = std::max(0, liveRows - registerRows);
    auto flipCost = [&](int c, double& adds, double& global) {
      for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k) {
        const int row = problem.rows[k];
        if (row < registerRows) {
          adds += 1 + (c > 0 && paired(row) ? 1 : 0);
        } else {
          global += 2;
        }
      }
      if (touchesGlobal(c)) global += liveGlobal;  // the global product's reads
    };
    double adds = 0, multiplications = 0, global = 0;
    auto updateLevels = [&](int from) {
      for (int l = from; l >= (pairMode ? 1 : 0); --l) multiplications += levelSize[l];
    };
    int sharedWithColumn1 = 0;  // column 0's rows column 1 touches too
    for (int32_t k = problem.columnStart[0]; k < problem.columnStart[1]; ++k) sharedWithColumn1 += column1Row(problem.rows[k]);
    auto stepFlip = [&](int c) {
      flipCost(c, adds, global);
      if (touchesGlobal(c)) multiplications += liveGlobal;
      const int kind = pairMode ? pairUpdateKind(c) : 0;
      if (kind == 1) {
        multiplications += 2 * sharedWithColumn1 + 1;
        if (!keepColumn0Sums) adds += sharedWithColumn1;
      } else if (kind == 2) {
        multiplications += 2 * std::max(0, column0Size - 1) + 1;
        if (!keepColumn0Sums) adds += column0Size;
      }
    };
    const int registerFactors = registerRows + (hasGlobal() ? 1 : 0);
    const int restFactors = registerRows - frequent + (hasGlobal() ? 1 : 0);
    const int logUnroll = unroll >= 2 ? __builtin_ctz(unroll) : 0;
    // Steps inside a block.
    for (int j = pairMode ? 2 : 1; j < unroll; j += pairMode ? 2 : 1) {
      const int c = __builtin_ctz(j);
      stepFlip(c);
      if (levelMode) updateLevels(c);
      else if (frequent > 0) multiplications += frequent;  // the frequent rows and the block product
      else multiplications += registerFactors - 1;
      if (!pairMode) adds += 1;
    }
    if (pairMode) multiplications += unroll / 2;  // a fused multiply-add per pair
    // The block's last step: column c >= log2 U with probability 2^-(c - log2 U + 1).
    const int lastFlipping = std::min(n() - 1, sliceBits);
    for (int c = logUnroll; c < lastFlipping; ++c) {
      const double weight = std::ldexp(1.0, -(c - logUnroll + 1));
      double a = 0, m = 0, g = 0;
      std::swap(a, adds), std::swap(m, multiplications), std::swap(g, global);
      stepFlip(c);
      std::swap(a, adds), std::swap(m, multiplications), std::swap(g, global);
      adds += weight * a, multiplications += weight * m, global += weight * g;
    }
    if (frequent > 0) {
      multiplications += std::max(0, restFactors - 1);
      if (levelMode) updateLevels(levels - 1);
      else multiplications += frequent;
    } else {
      multiplications += registerFactors - 1;
    }
    if (!pairMode) adds += 1;
    result.additions = adds / unroll;
    result.multiplications = multiplications / unroll;
    result.globalAccesses = global / unroll;
    result.perStep = result.additions + result.multiplications + globalAccessCost * result.globalAccesses;
    // Doubles a thread keeps: register rows, column 0's second sums, the levels and products.
    result.liveDoubles = registerRows + (pairMode && keepColumn0Sums ? column0Size : 0) + levels + 4;
    return result;
  }

  // The loop with column 0 summed out in pairs of steps. Levels 1 .. L-1
  // (L = log2 unroll) as in printKernel, s_1 the product of every row but
  // column 0's; d = prod x_i - prod z_i over column 0's rows.
  // The end of an unrolled block: leave at the range's end, else flip the
  // one column whose Gray-code bit changes there (it is not known when the
  // kernel is generated). With chainDispatch, if-tests in order of
  // frequency (column log2 U at half the blocks: two on average), else a
  // switch. afterFlip, where given, adds code after each column's flip.
  // The summing kernel's signature, its thread's slice of the range and,
  // with global rows, the thread's column of them.
  void printKernelPrologue(std::ostream& out, const std::string& comment) const {
    out << "// " << comment << "\n"
        << "extern \"C\" __global__ void __launch_bounds__(" << launchBounds() << ") tcc_perm_sum("
        << kParameters << ") {\n"
        << "  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        << "  if (t >= threads) return;\n"
        << kThreadSlice;
    if (hasGlobal())
      out << "  // volatile: the compiler would otherwise keep the global rows in registers across the loop\n"
          << "  volatile double* xg = globalRows + (long long)blockIdx.x * " << (n() - registerRows) * kGeneratedThreadsPerBlock
          << " + threadIdx.x;\n";
  }

  void printBlockEnd(std::ostream& out, int unroll, int logUnroll, int sliceBits, bool chainDispatch,
                     const std::function<std::string(int)>& afterFlip = {}) const {
    out << "    if (base + " << unroll << " == end) break;\n"
        << "    const tcc_u64 h = base + " << unroll << ";\n"
        << "    const int column = __ffsll((long long)h) - 1;\n"
        << "    const bool added = ((h ^ (h >> 1)) >> column) & 1;\n"
        << (chainDispatch ? "" : "    switch (column) {\n");
    for (int c = logUnroll; c + 1 < n() && c < sliceBits; ++c) {
      if (chainDispatch)
        out << "    " << (c > logUnroll ? "else " : "") << "if (column == " << c << ") {\n";
      else
        out << "      case " << c << ":\n";
      out << "        if (added) " << flip(c, "inc") << ";\n"
          << "        else " << flip(c, "dec") << ";\n";
      if (touchesGlobal(c)) out << "        " << globalProductUpdate() << "\n";
      if (afterFlip) out << afterFlip(c);
      out << (chainDispatch ? "    }\n" : "        break;\n");
    }
    out << (chainDispatch ? "" : "    }\n");
  }

  void printPairKernel(std::ostream& out, const std::string& comment) const {
    const int frequent = blockFrequentRows();
    const int levels = __builtin_ctz(unroll);
    std::vector<int> firstColumn(frequent, levels - 1);
    for (int c = levels - 1; c >= 0; --c)
      for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k)
        if (problem.rows[k] < frequent) firstColumn[problem.rows[k]] = c;
    std::vector<std::vector<std::string>> levelRows(levels);
    // Column 0's rows: those column 1 touches too (their products formed at
    // each pair that changes d), the others' products kept in tx, tz.
    std::vector<std::string> pairedX, pairedZ, keptX, keptZ, rest;
    std::vector<double> column0Value(n(), 0.0);
    for (int32_t k = problem.columnStart[0]; k < problem.columnStart[1]; ++k) column0Value[problem.rows[k]] = problem.values[k];
    for (int row = 0; row < frequent; ++row) {
      if (column0Row(row)) {
        const std::string z = keepColumn0Sums ? numbered('z', row) : "(" + x(row) + " + " + number(column0Value[row]) + ")";
        (column1Row(row) ? pairedX : keptX).push_back(x(row));
        (column1Row(row) ? pairedZ : keptZ).push_back(z);
      } else {
        levelRows[firstColumn[row]].push_back(x(row));
      }
    }
    for (int row = frequent; row < registerRows; ++row) rest.push_back(x(row));
    if (hasGlobal()) rest.push_back("globalProduct");
    const std::string updateBlockProduct = "blockProduct = " + productExpression(rest) + ";\n";
    auto level = [](int c) { return numbered('s', c); };
    auto updateLevels = [&](int from, const std::string& indent) {
      std::string text;
      for (int c = from; c >= 1; --c) {
        std::vector<std::string> factors = levelRows[c];
        factors.push_back(c + 1 < levels ? level(c + 1) : "blockProduct");
        text += indent + level(c) + " = " + productExpression(factors) + ";\n";
      }
      return text;
    };
    if (!keptX.empty()) pairedX.push_back("tx"), pairedZ.push_back("tz");
    const std::string updateD = "d = " + productExpression(pairedX) + " - " + productExpression(pairedZ) + ";\n";
    const std::string updateKept =
        keptX.empty() ? std::string() : "tx = " + productExpression(keptX) + ", tz = " + productExpression(keptZ) + ";\n";
    auto updatePair = [&](int column, const std::string& indent) {
      const int kind = pairUpdateKind(column);
      if (kind == 0) return std::string();
      return (kind == 2 && !updateKept.empty() ? indent + updateKept : std::string()) + indent + updateD;
    };

    printKernelPrologue(out, comment);
    out << "  // x at `begin` (column 0 out: begin is a multiple of 4) plus the columns in gray(begin);\n"
        << "  // z: column 0's rows with column 0 in\n";
    for (int row = 0; row < registerRows; ++row) out << "  double " << x(row) << " = " << number(problem.start[row]) << ";\n";
    if (keepColumn0Sums)
      for (int32_t k = problem.columnStart[0]; k < problem.columnStart[1]; ++k)
        out << "  double " << numbered('z', problem.rows[k]) << " = "
            << number(problem.start[problem.rows[k]] + problem.values[k]) << ";\n";
    printSetup(out, 1);
    if (hasFrozen()) out << "  const double frozenProduct = tcc_perm_frozen_product(xg);\n";
    if (hasGlobal()) out << "  double " << globalProductUpdate() << "\n";
    out << "  // rows " << frequent << ".. change only at the last step of a block of " << unroll << "\n"
        << "  double " << updateBlockProduct << "  double";
    for (int c = 1; c < levels; ++c) out << (c > 1 ? ", " : " ") << level(c);
    out << ";\n" << updateLevels(levels - 1, "  ");
    if (!updateKept.empty()) out << "  double " << updateKept;
    out << "  double " << updateD << "  double sum = 0;\n";
    const int logUnroll = levels;
    out << "  for (tcc_u64 base = begin;; base += " << unroll << ") {\n";
    for (int j = 0; j < unroll; j += 2) {
      if (j > 0) {
        const int column = __builtin_ctz(j);
        if (column + 1 < logUnroll) {
          const bool added = !((j >> (column + 1)) & 1);
          out << "    " << flip(column, added ? "inc" : "dec") << ";\n";
        } else {
          out << "    if ((base >> " << logUnroll << ") & 1) " << flip(column, "dec") << ";\n"
              << "    else " << flip(column, "inc") << ";\n";
        }
        out << updateLevels(column, "    ");
        out << updatePair(column, "    ");
      }
      out << "    sum " << ((j >> 1) & 1 ? "-=" : "+=") << " " << level(1) << " * d;  // steps " << j << ", " << j + 1
          << "\n";
    }
    printBlockEnd(out, unroll, logUnroll, sliceBits, chainDispatch,
                  [&](int column) { return updatePair(column, "        "); });
    out << "    " << updateBlockProduct << updateLevels(levels - 1, "    ") << "  }\n"
        << "  partials[t] = sum;\n}\n";
  }

  void printKernel(std::ostream& out, const std::string& comment) const {
    if (pairsApply()) return printPairKernel(out, comment);
    // The product of a step: every register row and the global part; or,
    // with a block product, the frequent rows and the block product, which
    // holds the rest and changes only at a block's last step.
    const int frequent = blockFrequentRows();
    std::vector<std::string> registers, rest;
    for (int row = 0; row < registerRows; ++row) (frequent == 0 || row < frequent ? registers : rest).push_back(x(row));
    if (hasGlobal()) (frequent == 0 ? registers : rest).push_back("globalProduct");
    if (frequent > 0) registers.push_back("blockProduct");
    std::string product = productExpression(registers);
    const std::string updateBlockProduct =
        frequent > 0 ? "blockProduct = " + productExpression(rest) + ";\n" : std::string();
    // With a block product, the frequent rows go in levels: level c holds the
    // rows whose first column is c (< log2 U), and s_c = (level c's rows) *
    // s_{c+1}, s_{log2 U} = blockProduct. Column c's rows are all in levels
    // <= c, so after it flips only s_c .. s_0 are multiplied again, and
    // the step's product is s_0: half the steps multiply level 0 alone.
    const int levels = frequent > 0 && productLevels ? __builtin_ctz(unroll) : 0;
    std::vector<std::vector<std::string>> levelRows(levels);
    if (levels > 0) {
      std::vector<int> firstColumn(frequent, levels - 1);
      for (int c = levels - 1; c >= 0; --c)
        for (int32_t k = problem.columnStart[c]; k < problem.columnStart[c + 1]; ++k)
          if (problem.rows[k] < frequent) firstColumn[problem.rows[k]] = c;
      for (int row = 0; row < frequent; ++row) levelRows[firstColumn[row]].push_back(x(row));
      product = "s0";
    }
    auto level = [](int c) { return numbered('s', c); };
    // Statements that multiply levels `from` .. 0 again.
    auto updateLevels = [&](int from, const std::string& indent) {
      std::string text;
      for (int c = from; c >= 0; --c) {
        std::vector<std::string> factors = levelRows[c];
        factors.push_back(c + 1 < levels ? level(c + 1) : "blockProduct");
        text += indent + level(c) + " = " + productExpression(factors) + ";\n";
      }
      return text;
    };

    printKernelPrologue(out, comment);
    out << "  // x at `begin`: x(0) plus the columns in gray(begin)\n";
    for (int row = 0; row < registerRows; ++row) out << "  double " << x(row) << " = " << number(problem.start[row]) << ";\n";
    printSetup(out, 0);
    if (hasFrozen()) out << "  const double frozenProduct = tcc_perm_frozen_product(xg);\n";
    if (hasGlobal()) out << "  double " << globalProductUpdate() << "\n";
    if (frequent > 0) {
      out << "  // rows " << frequent << ".. change only at the last step of a block of " << unroll << "\n"
          << "  double " << updateBlockProduct;
      if (levels > 0) {
        out << "  double";
        for (int c = 0; c < levels; ++c) out << (c ? ", " : " ") << level(c);
        out << ";\n" << updateLevels(levels - 1, "  ");
      }
    }
    out << "  double sum = (begin & 1) ? -(" << product << ") : " << product << ";\n";
    if (unroll >= 2) {
      // Steps base+1 .. base+U-1 of each aligned block of U steps flip
      // columns ctz(j) < log2 U, in a direction fixed by j except at j = U/2,
      // with the sign (-1)^j: straight-line code; step base+U flips a
      // column >= log2 U, chosen by a switch.
      const int logUnroll = __builtin_ctz(unroll);
      out << "  for (tcc_u64 base = begin;; base += " << unroll << ") {\n";
      for (int j = 1; j < unroll; ++j) {
        const int column = __builtin_ctz(j);
        if (column + 1 < logUnroll) {
          const bool added = !((j >> (column + 1)) & 1);
          out << "    " << flip(column, added ? "inc" : "dec") << ";\n";
        } else {
          out << "    if ((base >> " << logUnroll << ") & 1) " << flip(column, "dec") << ";\n"
              << "    else " << flip(column, "inc") << ";\n";
        }
        if (touchesGlobal(column)) out << "    " << globalProductUpdate() << "\n";
        if (levels > 0) out << updateLevels(column, "    ");
        out << "    sum " << (j % 2 ? "-=" : "+=") << " " << product << ";\n";
      }
      printBlockEnd(out, unroll, logUnroll, sliceBits, chainDispatch);
      if (frequent > 0) out << "    " << updateBlockProduct << updateLevels(levels - 1, "    ");
      out << "    sum += " << product << ";\n"
          << "  }\n";
    }
    out << "  partials[t] = sum;\n}\n";
  }
};

}  // namespace

size_t baselineSharedBytes(int n, int nonzeros, int threadsPerBlock) {
  return sizeof(double) * (static_cast<size_t>(nonzeros) + static_cast<size_t>(n) * threadsPerBlock) +
         sizeof(int) * (static_cast<size_t>(n) + 1 + nonzeros);
}

std::string baselineKernelSource() {
  std::ostringstream out;
  out << "// GPU-SparsePerman: the CSC and each thread's row sums x in shared memory\n"
      << "// (x_i of a block's thread k at x[i * blockDim.x + k]), zero row sums counted.\n"
      << kPrelude
      << "extern \"C\" __global__ void __launch_bounds__(1024) tcc_perm_sum(" << kParameters << ") {\n"
      << "  extern __shared__ double tcc_shared[];\n"
      << "  const int nonzeros = columnStart[n];\n"
      << "  double* sharedValues = tcc_shared;\n"
      << "  double* x = sharedValues + nonzeros + threadIdx.x;\n"
      << "  int* sharedStart = (int*)(sharedValues + nonzeros + (long long)n * blockDim.x);\n"
      << "  int* sharedRows = sharedStart + n + 1;\n"
      << "  for (int k = threadIdx.x; k < nonzeros; k += blockDim.x) {\n"
      << "    sharedValues[k] = values[k];\n"
      << "    sharedRows[k] = rows[k];\n"
      << "  }\n"
      << "  for (int k = threadIdx.x; k <= n; k += blockDim.x) sharedStart[k] = columnStart[k];\n"
      << "  __syncthreads();\n"
      << "  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "  if (t >= threads) return;\n"
      << kThreadSlice
      << "  const int stride = blockDim.x;\n"
      << "  for (int i = 0; i < n; ++i) x[i * stride] = start[i];\n"
      << "  for (int c = 0; c + 1 < n; ++c)\n"
      << "    if ((gray >> c) & 1)\n"
      << "      for (int k = sharedStart[c]; k < sharedStart[c + 1]; ++k) x[sharedRows[k] * stride] += sharedValues[k];\n"
      << "  int zeros = 0;\n"
      << "  for (int i = 0; i < n; ++i) zeros += x[i * stride] == 0.0;\n"
      << "  double sum = 0;\n"
      << "  for (tcc_u64 g = begin; g < end; ++g) {\n"
      << "    if (g != begin) {\n"
      << "      const int column = __ffsll((long long)g) - 1;\n"
      << "      const double sign = ((g ^ (g >> 1)) >> column) & 1 ? 1.0 : -1.0;\n"
      << "      for (int k = sharedStart[column]; k < sharedStart[column + 1]; ++k) {\n"
      << "        double& entry = x[sharedRows[k] * stride];\n"
      << "        const int wasZero = entry == 0.0;\n"
      << "        entry += sign * sharedValues[k];\n"
      << "        zeros += (entry == 0.0) - wasZero;\n"
      << "      }\n"
      << "    }\n"
      << "    if (zeros == 0) {\n"
      << "      double p0 = 1, p1 = 1, p2 = 1, p3 = 1;\n"
      << "      int i = 0;\n"
      << "      for (; i + 4 <= n; i += 4) {\n"
      << "        p0 *= x[i * stride];\n"
      << "        p1 *= x[(i + 1) * stride];\n"
      << "        p2 *= x[(i + 2) * stride];\n"
      << "        p3 *= x[(i + 3) * stride];\n"
      << "      }\n"
      << "      for (; i < n; ++i) p0 *= x[i * stride];\n"
      << "      const double product = (p0 * p1) * (p2 * p3);\n"
      << "      sum += (g & 1) ? -product : product;\n"
      << "    }\n"
      << "  }\n"
      << "  partials[t] = sum;\n"
      << "}\n";
  return out.str();
}

int liveRowsOf(const RyserProblem& problem, int sliceBits) {
  return problem.n < 2 ? problem.n : problem.rowsTouchedBy(std::min(sliceBits, problem.n - 1));
}

std::string pureRegKernelSource(const RyserProblem& problem, int unroll, bool chainDispatch) {
  std::ostringstream out;
  out << "// CodeGen-PureReg for a " << problem.n << " x " << problem.n
      << " matrix (degree-sorted columns): every row sum x_i in a register,\n"
      << "// one inclusion and one exclusion function per column, its values as constants.\n"
      << kPrelude;
  GeneratedKernel kernel{problem, problem.n, problem.n, unroll, false};
  kernel.liveRows = problem.n;
  kernel.chainDispatch = chainDispatch;
  kernel.printColumnFunctions(out);
  kernel.printKernel(out, "Thread t sums (-1)^g prod_i x_i(g) over its slice of a chunk.");
  return out.str();
}

std::string hybridKernelSource(const RyserProblem& problem, const Partition& partition, int unroll, int sliceBits,
                               bool blockProduct, bool productLevels, int pairs, int minBlocks,
                               bool chainDispatch) {
  std::ostringstream out;
  out << "// CodeGen-Hybrid for a " << problem.n << " x " << problem.n << " matrix (permanent ordering): rows 0.."
      << partition.registerRows - 1 << " in registers,\n"
      << "// rows " << partition.registerRows << ".." << problem.n - 1
      << " in global memory (coalesced; rows from " << std::max(partition.registerRows, liveRowsOf(problem, sliceBits))
      << " change only at a thread's start); columns 0.." << partition.registerColumns - 1 << " touch registers only.\n"
      << kPrelude;
  GeneratedKernel kernel{problem, partition.registerRows, partition.registerColumns, unroll, blockProduct};
  kernel.sliceBits = sliceBits;
  kernel.productLevels = productLevels;
  kernel.pairs = pairs != kNoPairs;
  kernel.keepColumn0Sums = pairs == kPairsKeepingSums;
  kernel.minBlocks = minBlocks;
  kernel.chainDispatch = chainDispatch;
  kernel.liveRows = std::max(partition.registerRows, liveRowsOf(problem, sliceBits));
  kernel.printColumnFunctions(out);
  kernel.printGlobalProduct(out);
  kernel.printKernel(out, "Thread t sums (-1)^g prod_i x_i(g) over its slice of a chunk.");
  return out.str();
}

bool hybridUsesPairs(const RyserProblem& problem, const Partition& partition, int unroll, bool blockProduct,
                     bool productLevels) {
  GeneratedKernel kernel{problem, partition.registerRows, partition.registerColumns, unroll, blockProduct};
  kernel.productLevels = productLevels;
  kernel.pairs = true;
  return kernel.pairsApply();
}

KernelCost hybridKernelCost(const RyserProblem& problem, const Partition& partition, int unroll, int sliceBits,
                            int pairs, double globalAccessCost) {
  GeneratedKernel kernel{problem, partition.registerRows, partition.registerColumns, unroll, true};
  kernel.sliceBits = sliceBits;
  kernel.productLevels = true;
  kernel.pairs = pairs != kNoPairs;
  kernel.keepColumn0Sums = pairs == kPairsKeepingSums;
  kernel.liveRows = std::max(partition.registerRows, liveRowsOf(problem, sliceBits));
  return kernel.cost(globalAccessCost);
}

KernelCost pureRegKernelCost(const RyserProblem& problem, int unroll, int sliceBits) {
  GeneratedKernel kernel{problem, problem.n, problem.n, unroll, false};
  kernel.sliceBits = sliceBits;
  kernel.liveRows = problem.n;
  return kernel.cost(0);
}

}  // namespace tcc::rt::permanent::gpu
