// The C++ backend: prints imperative IR as readable, self-contained C++,
// with OpenMP pragmas for parallel and vectorized loops.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "c_like_printer.h"
#include "dense_row_tiling.h"
#include "gpu/codegen_cuda.h"
#include "simd_reductions.h"
#include "tcc/ir/imperative_printer.h"
#include "tcc/lowering/codegen.h"
#include "tcc/lowering/cpp_loop_forms.h"
#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

class CppPrinter : public CLikePrinter {
 public:
  CppPrinter(std::ostream& out, FloatingPointMode floatingPoint, CppLoopForms forms)
      : CLikePrinter(out), floatingPoint_(floatingPoint), forms_(forms) {}
  using CLikePrinter::visit;

  void printFunction(const Function& function) {
    // The copies below are for speed alone; a large body (the merge cases
    // of many sparse operands) is printed once, so that the C++ compiler
    // builds one body, not two or three (a 12,000-line kernel printed
    // twice took over two minutes to build).
    const bool copies = !printedOnceOnly(function);
    vectorizesGatherSums_ =
        copies && floatingPoint_ == FloatingPointMode::Fast && gatherSumsAloneNeedReassociation(function);
    inputValues_ = inputValuesSum(function);
    chunkNames_.clear();
    if (vectorizesGatherSums_) {
      // Through GCC, and Clang on x86 cores other than AMD's (the prelude's
      // TCC_REASSOCIATED_ROWS), the body is printed twice, as two
      // functions: one with the reassociated row loops for inputs that fit
      // in cache, which the entry point calls, and the entry point itself
      // with the streaming loops. The size test is made once a call: a flag
      // tested in every row cost registers and time in the row loop, and one
      // body in the other's function slowed it (Clang: short TTV fibres
      // 5-14% slower). Clang on AMD cores and other compilers run the entry
      // point's partial sums on every input.
      printRowLoopsCopy(function, kReassociatedRows, reassociatedName(function), RowLoops::Reassociated);
    }
    printsGatherSums_ = vectorizesGatherSums_ && holdsGatherDot(function);
    if (printsGatherSums_) {
      // On an AMD core with AVX-512 (GCC and Clang), a third copy, which
      // the entry point calls for streaming inputs: its long row sums of
      // the form tcc_gather_sum computes run as 512-bit gathers
      // (printGatherSum). The entry point's own loops then serve inputs in
      // cache through Clang, as before.
      printRowLoopsCopy(function, "TCC_GATHER_SUMS", gathersName(function), RowLoops::Gathers);
    }
    const bool streamingCopy = copies && !vectorizesGatherSums_ && containsStreamingStore(function.body);
    streamingThreshold_ = streamsOnlyWholeCopies(function) ? kStreamingCopyValues : kStreamingStoreValues;
    if (streamingCopy) {
      // A copy whose sparse outputs' appends go past the caches, which the
      // entry point calls for large inputs (see kStreamingStoreValues).
      out_ << "#if " << streamingThreshold_ << " >= 0\n";
      printFunctionHead(function, "static __attribute__((noinline))", streamingStoresName(function));
      streamedBuffers_ = streamedBuffers(function);
      for (const auto& buffer : streamedBuffers_) {
        indent();
        out_ << "bool " << streamsName(buffer) << " = false;  // whether " << buffer
             << "'s pages were resident when allocated\n";
      }
      streamingStores_ = true;
      function.body.accept(*this);
      streamingStores_ = false;
      indent();
      out_ << "tcc_stream_fence();\n";
      indent();
      out_ << "return 0;\n}\n";
      out_ << "#endif\n";
    }
    printFunctionHead(function, "extern \"C\"", function.name);
    if (vectorizesGatherSums_) printStreamingSwitch(function);
    if (streamingCopy) printStreamingStoresSwitch(function);
    function.body.accept(*this);
    rowLoops_ = RowLoops::PartialSums;
    indent();
    out_ << "return 0;\n}\n";
    depth_ = 0;
  }

  // Bodies of more lines of imperative IR than this are printed once.
  static constexpr size_t kLargestCopiedBodyLines = 4000;
  static bool printedOnceOnly(const Function& function) {
    std::string text = toString(function);
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) > kLargestCopiedBodyLines;
  }

  static std::string reassociatedName(const Function& function) { return function.name + "_reassociated"; }
  static std::string gathersName(const Function& function) { return function.name + "_gathers"; }

  // Whether a loop of the function is a gather sum tcc_gather_sum computes.
  static bool holdsGatherDot(const Function& function) {
    struct Scan : IRVisitor {
      bool found = false;
      void visit(const For* op) override {
        if (readsThroughLoadedIndex(op) && gatherDotOf(op)) found = true;
        IRVisitor::visit(op);
      }
    } scan;
    function.body.accept(scan);
    return scan.found;
  }
  static std::string streamingStoresName(const Function& function) { return "streaming_stores_" + function.name; }

  // Streaming stores (imp::Store::streaming: a sparse output's appended
  // coordinates and values, written once in order and never read by the
  // kernel) skip the write-allocate read of each output line: without
  // them a store that misses the caches first reads the line from memory,
  // 12 bytes of reads for every entry of a CSR output of doubles beside the
  // 12 written. A kernel with such stores is printed twice, and the entry
  // point calls the copy with streaming stores when its inputs hold more
  // than TCC_STREAMING_STORE_VALUES stored values in all (the prelude's
  // default: see there; the output is then too large to stay in cache for
  // whoever reads it next, and an output that fits is better left there).
  // In the copy a store streams only while the array it writes was
  // resident when allocated (tcc_pages_resident, checked after each
  // allocation of the array): on pages the operating system faults in and
  // zeroes during the call, the zeroed lines are in cache and a plain store
  // costs no read, and streaming stores were 37 % slower there (the Xeon
  // host, one thread). A parallel loop with streaming stores runs in a
  // region of its own, each thread fencing its stores when its share ends.
  static constexpr const char* kStreamingStoreValues = "TCC_STREAMING_STORE_VALUES";
  // A kernel whose streaming stores all copy arrays out in whole vectors
  // (streamingCopyOf: a row-parallel output's chunks) follows the
  // prelude's TCC_STREAMING_COPY_VALUES instead, which AMD cores take too.
  static constexpr const char* kStreamingCopyValues = "TCC_STREAMING_COPY_VALUES";

  static bool streamable(const Store* op) {
    const Type element = op->buffer.type().element();
    return op->streaming && (element == Type::int32() || element == Type::int64() || element == Type::float32() ||
                             element == Type::float64());
  }

  // The stored values of all inputs, as a printed sum ("" when the function
  // has no inputs).
  static std::string inputValuesSum(const Function& function) {
    std::ostringstream sum;
    bool first = true;
    for (const auto& parameter : function.parameters) {
      if (parameter.isOutput) continue;
      sum << (first ? "" : " + ") << "(int64_t)" << parameter.name << "->vals_size";
      first = false;
    }
    return sum.str();
  }

  void printStreamingStoresSwitch(const Function& function) {
    const std::string values = inputValuesSum(function);
    if (values.empty()) return;
    out_ << "#if " << streamingThreshold_ << " >= 0\n";
    indent();
    out_ << "// large inputs: the sparse outputs are appended to past the caches\n";
    indent();
    out_ << "if (" << values << " > " << streamingThreshold_ << ") return " << streamingStoresName(function)
         << "(tcc_tensors);\n";
    out_ << "#endif\n";
  }

  static std::string streamsName(const std::string& buffer) { return "tcc_streams_" + buffer; }

  // The buffers streaming stores write, by name.
  static std::set<std::string> streamedBuffers(const Function& function) {
    struct Scan : IRVisitor {
      std::set<std::string> names;
      void visit(const Store* op) override {
        if (streamable(op)) names.insert(op->buffer.as<Var>()->name);
      }
    } scan;
    function.body.accept(scan);
    return scan.names;
  }

  // Whether every streaming store of the function is in a loop that
  // copies arrays out whole (streamingCopyOf), and there is one.
  static bool streamsOnlyWholeCopies(const Function& function) {
    struct Scan : IRVisitor {
      std::set<const Store*> copied;
      size_t streaming = 0;
      using IRVisitor::visit;
      void visit(const For* op) override {
        if (auto copy = streamingCopyOf(op)) copied.insert(copy->stores.begin(), copy->stores.end());
        IRVisitor::visit(op);
      }
      void visit(const Store* op) override { streaming += op->streaming ? 1 : 0; }
    } scan;
    function.body.accept(scan);
    return scan.streaming > 0 && scan.streaming == scan.copied.size();
  }

  static bool containsStreamingStore(const Stmt& stmt) {
    struct Scan : IRVisitor {
      bool found = false;
      void visit(const Store* op) override { found = found || op->streaming; }
    } scan;
    stmt.accept(scan);
    return scan.found;
  }

  // `<linkage> [attributes] int32_t <name>(tcc_tensor** tcc_tensors) {` and
  // the parameters' names.
  void printFunctionHead(const Function& function, const std::string& linkage, const std::string& name) {
    out_ << linkage;
    if (vectorizesGatherSums_) {
      // See kShortestGatherVector: GCC may reassociate this function's sums,
      // at the vector width it picks for itself.
      out_ << "\n#if " << kGccOnX86 << "\n"
           << "__attribute__((optimize(\"associative-math\", \"no-signed-zeros\"), "
              "target(\"prefer-vector-width=256\")))\n"
           << "#endif\n";
    } else if (floatingPoint_ == FloatingPointMode::Strict && tilesAloneWantVectors(function)) {
      // Strict mode's flags leave GCC at 256-bit vectors on AVX-512 hosts.
      // A register tile's lanes are independent sums (no sum across lanes,
      // no contraction), so 512-bit vectors give the same bits in half the
      // instructions.
      out_ << "\n#if " << kGccOnX86 << "\n"
           << "__attribute__((target(\"prefer-vector-width=512\")))\n"
           << "#endif\n";
    } else {
      out_ << " ";
    }
    out_ << "int32_t " << name << "(tcc_tensor** tcc_tensors) {\n";
    depth_ = 1;
    for (size_t i = 0; i < function.parameters.size(); ++i) {
      const auto& parameter = function.parameters[i];
      indent();
      out_ << "tcc_tensor* " << parameter.name << " = tcc_tensors[" << i << "];"
           << (parameter.isOutput ? "  // output" : "") << "\n";
    }
    out_ << "\n";
  }

  void visit(const Intrinsic* op) override {
    indent();
    out_ << cppIntrinsicStatement(*op) << "\n";
  }

  // A loop that only copies arrays to an offset of streamed ones
  // (`for (k = 0; k < n; k++) dst[base + k] = src[k];` for each pair, a
  // row-parallel output's chunk going out): the stores and their bases.
  struct StreamingCopy {
    std::vector<const Store*> stores;
    std::vector<Expr> bases;  // undefined: no offset
  };
  static std::optional<StreamingCopy> streamingCopyOf(const For* op) {
    const auto* zero = op->begin.as<IntImm>();
    const auto* var = op->var.as<Var>();
    if (op->loopKind != LoopKind::Serial || !zero || zero->value != 0 || !var) return std::nullopt;
    StreamingCopy copy;
    if (const auto* block = op->body.as<Block>()) {
      for (const auto& stmt : block->stmts) {
        const auto* store = stmt.as<Store>();
        if (!store) return std::nullopt;
        copy.stores.push_back(store);
      }
    } else if (const auto* store = op->body.as<Store>()) {
      copy.stores.push_back(store);
    }
    auto isVar = [&](const Expr& e) {
      const auto* v = e.as<Var>();
      return v && v->name == var->name;
    };
    auto usesVar = [&](const Expr& e) {
      struct Scan : IRVisitor {
        std::string name;
        bool found = false;
        void visit(const Var* v) override { found = found || v->name == name; }
      } scan;
      scan.name = var->name;
      e.accept(scan);
      return scan.found;
    };
    for (const auto* store : copy.stores) {
      const auto* load = store->value.as<Load>();
      if (!streamable(store) || store->accumulate || store->atomic || !load || !isVar(load->index) ||
          !load->buffer.as<Var>() || !(load->buffer.type() == store->buffer.type()))
        return std::nullopt;
      const auto* sum = store->index.as<Binary>();
      if (isVar(store->index))
        copy.bases.push_back(Expr());
      else if (sum && sum->op == BinaryOp::Add && isVar(sum->b) && !usesVar(sum->a))
        copy.bases.push_back(sum->a);
      else
        return std::nullopt;
    }
    if (copy.stores.empty() || usesVar(op->end)) return std::nullopt;
    return copy;
  }

  // In the copy with streaming stores, such a copy loop is printed twice:
  // when every array it streams into streams (its flags tested once,
  // before it), as whole-vector streaming stores (tcc_stream_bytes:
  // compilers do not vectorize 4- and 8-byte ones; on the Xeon host at 16
  // threads 64-byte stores moved 6-16 % more), else as the plain loop. (The
  // merge loops keep a flag test at every store: printed twice they ran no
  // faster on the host, round 19.)
  bool printStreamingCopy(const For* op) {
    if (!streamingStores_ || streamVersion_ != StreamVersion::Flags) return false;
    auto copy = streamingCopyOf(op);
    if (!copy) return false;
    std::set<std::string> streamed;
    for (const auto* store : copy->stores) streamed.insert(store->buffer.as<Var>()->name);
    indent();
    out_ << "if (";
    bool first = true;
    for (const auto& buffer : streamed) out_ << (first ? "" : " && ") << streamsName(buffer), first = false;
    out_ << ") {\n";
    ++depth_;
    for (size_t k = 0; k < copy->stores.size(); ++k) {
      const Store* store = copy->stores[k];
      indent();
      out_ << "tcc_stream_bytes(";
      store->buffer.accept(*this);
      if (copy->bases[k].defined()) {
        out_ << " + ";
        copy->bases[k].accept(*this);
      }
      out_ << ", ";
      store->value.as<Load>()->buffer.accept(*this);
      out_ << ", sizeof(*";
      store->buffer.accept(*this);
      out_ << ") * (";
      op->end.accept(*this);
      out_ << "));\n";
    }
    --depth_;
    indent();
    out_ << "} else {\n";
    ++depth_;
    streamVersion_ = StreamVersion::Plain;
    visit(op);
    streamVersion_ = StreamVersion::Flags;
    --depth_;
    indent();
    out_ << "}\n";
    return true;
  }

  void visit(const For* op) override {
    if (printStreamingCopy(op)) return;
    if (streamingStores_ && op->loopKind == LoopKind::Parallel && !insideStreamingRegion_ &&
        containsStreamingStore(op->body)) {
      // Each thread fences its own streaming stores before the region ends.
      indent();
      out_ << "#pragma omp parallel\n";
      indent();
      out_ << "{\n";
      ++depth_;
      insideStreamingRegion_ = true;
      visit(op);
      insideStreamingRegion_ = false;
      indent();
      out_ << "tcc_stream_fence();\n";
      --depth_;
      indent();
      out_ << "}\n";
      return;
    }
    if (auto nest = findDenseRowNest(op)) {
      printRegisterTiled(op, *nest);
      return;
    }
    if (rowLoops_ == RowLoops::Reassociated && forms_.shortSegmentsInOrder && op != versionedLoop_) {
      if (auto segments = segmentLoopOf(op)) {
        printShortSegmentsSwitch(op, *segments);
        return;
      }
    }
    if (floatingPoint_ == FloatingPointMode::Fast && !simdSumReductions(op).empty()) {
      if (readsThroughLoadedIndex(op))
        printPartialSums(op);
      else if (readsAtStride(op))
        printStridedPartialSums(op);
      else
        printSimdSumOrShortLoop(op);
      return;
    }
    if (floatingPoint_ == FloatingPointMode::Strict &&
        (forms_.strictFirstTwoBySelect || forms_.strictLongRowsFourATrip) && isStrictGatherSum(op)) {
      printStrictGatherSum(op, *gatherDotOf(op));
      return;
    }
    CLikePrinter::visit(op);
  }

  // Arrays come from the prelude's allocator (large ones in 2 MB pages,
  // tcc/runtime/array_alloc.h). In the copy with streaming stores, an
  // allocation of a streamed array says whether its pages are resident.
  void visit(const Allocate* op) override {
    indent();
    const std::string type = cTypeName(op->buffer.type());
    const std::string bytes = "(long long)sizeof(" + cTypeName(op->buffer.type().element()) + ") * (";
    op->buffer.accept(*this);
    out_ << " = (" << type << ")";
    if (op->reallocate) {
      out_ << "tcc_realloc(";
      op->buffer.accept(*this);
      out_ << ", " << bytes;
      op->keptCount.accept(*this);
      out_ << "), ";
    } else {
      out_ << (op->zeroInitialize ? "tcc_alloc_zeroed(" : "tcc_alloc(");
    }
    out_ << bytes;
    op->count.accept(*this);
    out_ << "));\n";
    const auto* buffer = op->buffer.as<Var>();
    if (!streamingStores_ || !buffer || !streamedBuffers_.count(buffer->name)) return;
    indent();
    out_ << streamsName(buffer->name) << " = tcc_pages_resident(" << buffer->name << ", sizeof(*" << buffer->name
         << ") * (";
    op->count.accept(*this);
    out_ << "));\n";
  }

 protected:
  void printPlainStore(const Store* op) override {
    if (!streamingStores_ || !streamable(op) || streamVersion_ == StreamVersion::Plain) {
      CLikePrinter::printPlainStore(op);
      return;
    }
    indent();
    out_ << "tcc_store(";
    op->buffer.accept(*this);
    out_ << ", ";
    op->index.accept(*this);
    out_ << ", ";
    op->value.accept(*this);
    out_ << ", " << streamsName(op->buffer.as<Var>()->name) << ");\n";
  }

  void printAtomicStore(const Store* op) override {
    indent();
    out_ << "#pragma omp atomic\n";
    printPlainStore(op);
  }

  void printLoopAnnotations(const For* op) override {
    if (isGpuLoop(op->loopKind))
      throw std::runtime_error("the C++ backend cannot print a loop mapped to GPU " + std::string(toString(op->loopKind)) +
                               "s; compile for the cuda target");
    if (op->loopKind == LoopKind::Parallel) {
      std::string chunk = std::to_string(op->parallelChunk ? op->parallelChunk : 16);
      if (!op->parallelChunk && chunksByValues(op)) chunk = printChunkByValues(op);
      indent();
      out_ << (insideStreamingRegion_ ? "#pragma omp for" : "#pragma omp parallel for") << " schedule(dynamic, "
           << chunk << ")" << reductionClauses(op) << (insideStreamingRegion_ ? " nowait" : "") << "\n";
    } else if (op->loopKind == LoopKind::Vectorized) {
      indent();
      out_ << "#pragma omp simd" << reductionClauses(op) << "\n";
    } else if (floatingPoint_ == FloatingPointMode::Fast) {
      printSimdSumPragma(op);
    } else {
      printStrictGatherSumUnroll(op);
    }
    if (op->unrollFactor > 0) {
      indent();
      // An OpenMP loop must follow its pragma directly (g++ rejects another
      // pragma between them), so there the factor is left to the compiler.
      if (op->loopKind == LoopKind::Serial)
        out_ << "#pragma GCC unroll " << op->unrollFactor << "\n";
      else
        out_ << "// unroll(" << op->unrollFactor << ") is not applied to an OpenMP loop\n";
    }
  }

 private:
  // Tile widths along the dense loop, widest first: 64 doubles are eight
  // 512-bit registers (a whole 64-column row in one pass over the sparse
  // loops was 5-10% faster than two passes of 32); 16 keeps MTTKRP's
  // rank 16 to one pass; what no tile covers runs untiled.
  static constexpr int kTileWidths[] = {64, 32, 16, 8};

  struct TileNames {
    std::string k, begin, lane, tile, kType;
  };

  // See dense_row_tiling.h: the output row lives in `<buffer>_tile` across
  // the sparse loops, one tile of columns at a time. Where the update can
  // run a vector at a time (valueInVectors), the tile is a few variables of
  // GCC's vector types (Clang takes them too), so that no compiler has to
  // find the vectors itself: GCC 12 turned the unrolled array of 64 doubles
  // into 64 scalar registers and scalar FMAs, and through GCC 13.3 on a
  // Sapphire Rapids host the vector form ran 1.03x (fast) and 1.16x
  // (strict) faster (bench/eigen, tcc_spmm_tile_variants).
  void printRegisterTiled(const For* root, const DenseRowNest& nest) {
    const std::string k = nest.denseLoop->var.as<Var>()->name;
    const std::string kType = cTypeName(nest.denseLoop->var.type());
    const std::string buffer = nest.store->buffer.as<Var>()->name;
    const TileNames names{k, k + "_tile_begin", k + "_lane", buffer + "_tile", kType};
    const std::string end = text(nest.denseLoop->end);
    const std::optional<Expr> vectorValue = valueInVectors(nest);
    indent();
    out_ << "// the row of " << buffer << " along " << k << " in register tiles, held across the loops below\n";
    // An empty root loop leaves the row alone: no tile is loaded and stored
    // (rows without entries are common in SpMM).
    indent();
    out_ << "if (" << text(root->begin) << " < " << text(root->end) << ") {\n";
    ++depth_;
    indent();
    out_ << kType << " " << names.begin << " = 0;\n";
    for (int width : kTileWidths) {
      indent();
      out_ << "for (; " << names.begin << " + " << width << " <= " << end << "; " << names.begin << " += " << width
           << ") {\n";
      ++depth_;
      if (vectorValue)
        printVectorTile(nest, *vectorValue, names, width);
      else
        printScalarTile(nest, names, width);
      --depth_;
      indent();
      out_ << "}\n";
    }
    // The columns no tile covered, if any (without the test, rows walked
    // their entries once more for nothing).
    indent();
    out_ << "if (" << names.begin << " < " << end << ") {\n";
    nested([&] { withDenseLoopFrom(root, nest, Var::make(names.begin, nest.denseLoop->var.type())).accept(*this); });
    indent();
    out_ << "}\n";
    --depth_;
    indent();
    out_ << "}\n";
  }

  void printScalarTile(const DenseRowNest& nest, const TileNames& names, int width) {
    const std::string buffer = nest.store->buffer.as<Var>()->name;
    indent();
    out_ << cTypeName(nest.store->buffer.type().element()) << " " << names.tile << "[" << width << "];\n";
    printLaneLoop(names, width, [&] {
      indent();
      out_ << names.tile << "[" << names.lane << "] = " << buffer << "[" << text(nest.store->index) << "];\n";
    });
    printTiledLevel(nest, 0, names, width, [&] {
      printLaneLoop(names, width, [&] {
        std::vector<Stmt> body = statementsOf(nest.denseLoop->body);
        for (size_t s = 0; s + 1 < body.size(); ++s) body[s].accept(*this);
        indent();
        out_ << names.tile << "[" << names.lane << "] += " << text(nest.store->value) << ";\n";
      });
    });
    printLaneLoop(names, width, [&] {
      indent();
      out_ << buffer << "[" << text(nest.store->index) << "] = " << names.tile << "[" << names.lane << "];\n";
    });
  }

  // A vector holds at most 64 bytes (one AVX-512 register; compilers split
  // it where vectors are narrower).
  static constexpr int kVectorBytes = 64;

  // The tile as width / lanes vector variables <tile>0, <tile>1, ...; vector
  // v holds columns k_tile_begin + v * lanes and on. `value` is the nest's
  // update (valueInVectors): each load at unit stride in k gets a pointer to
  // its row at k_tile_begin, and vector v reads at that pointer + v * lanes
  // (one address a load, formed once per update, rather than one per
  // vector: GCC kept an index register for each); the parts of the update
  // invariant in k are computed once per update and applied to every lane.
  void printVectorTile(const DenseRowNest& nest, const Expr& value, const TileNames& names, int width) {
    const Type element = nest.store->buffer.type().element();
    const int elementBytes = element == Type::float64() || element == Type::int64() ? 8 : 4;
    const int lanes = std::min(width, kVectorBytes / elementBytes);
    const int vectors = width / lanes;
    const std::string elementName = cTypeName(element);
    const std::string vector = std::string("tcc_") + (element.isFloat() ? "f" : "i") +
                               std::to_string(8 * elementBytes) + "x" + std::to_string(lanes);
    const Expr tileBegin = Var::make(names.begin, nest.denseLoop->var.type());
    // `&buffer[index]` at column k_tile_begin.
    auto rowAddress = [&](const Expr& buffer, const Expr& index) {
      std::ostringstream address;
      address << "&" << text(buffer) << "[" << text(substituted(index, names.k, tileBegin)) << "]";
      return address.str();
    };
    // Vector v of a row: `*(const tcc_f64x8*)(row + 8v)`.
    auto at = [&](const std::string& row, int v, bool isConst) {
      std::ostringstream at;
      at << "*(" << (isConst ? "const " : "") << vector << "*)";
      if (v == 0) at << row;
      else at << "(" << row << " + " << v * lanes << ")";
      return at.str();
    };
    indent();
    out_ << "// " << vectors << (vectors == 1 ? " vector" : " vectors") << " of " << lanes << " lanes: " << names.tile
         << "<v> holds columns " << names.begin << " + " << lanes << "v on\n";
    indent();
    out_ << "typedef " << elementName << " " << vector << " __attribute__((vector_size(" << lanes * elementBytes
         << "), aligned(" << elementBytes << "), may_alias));\n";
    const std::string tileRow = names.tile + "_row";
    indent();
    out_ << elementName << "* " << tileRow << " = " << rowAddress(nest.store->buffer, nest.store->index) << ";\n";
    for (int v = 0; v < vectors; ++v) {
      indent();
      out_ << vector << " " << names.tile << v << " = " << at(tileRow, v, true) << ";\n";
    }
    printTiledLevel(nest, 0, names, width, [&] {
      // Parts of the update invariant in k, computed once (the sparse
      // value: one load, not one per vector), and the rows it loads along k.
      std::map<const ExprNode*, std::string> invariants, rows;
      std::vector<Expr> order;
      collectInvariants(value, names.k, order);
      for (const Expr& invariant : order) {
        std::string name = names.k + "_invariant" + std::to_string(invariants.size());
        invariants.emplace(invariant.get(), name);
        indent();
        out_ << "const " << elementName << " " << name << " = " << text(invariant) << ";\n";
      }
      std::vector<const Load*> loads;
      collectVectorLoads(value, names.k, loads);
      for (const Load* load : loads) {
        std::string name = names.k + "_row" + std::to_string(rows.size());
        rows.emplace(load, name);
        indent();
        out_ << "const " << elementName << "* " << name << " = " << rowAddress(load->buffer, load->index) << ";\n";
      }
      for (int v = 0; v < vectors; ++v) {
        indent();
        out_ << names.tile << v << " += "
             << vectorText(value, names.k, invariants, [&](const Load* load) { return at(rows.at(load), v, true); })
             << ";\n";
      }
    });
    for (int v = 0; v < vectors; ++v) {
      indent();
      out_ << at(tileRow, v, false) << " = " << names.tile << v << ";\n";
    }
  }

  // The loads of `value` that read k, in the order they are printed.
  static void collectVectorLoads(const Expr& value, const std::string& k, std::vector<const Load*>& loads) {
    if (!readsVariable(value, k)) return;
    if (const Load* load = value.as<Load>()) {
      loads.push_back(load);
    } else if (const Binary* binary = value.as<Binary>()) {
      collectVectorLoads(binary->a, k, loads);
      collectVectorLoads(binary->b, k, loads);
    } else if (const Unary* unary = value.as<Unary>()) {
      collectVectorLoads(unary->a, k, loads);
    }
  }

  // The largest parts of `value` that do not read k, other than variables
  // and constants, in the order they are printed.
  static void collectInvariants(const Expr& value, const std::string& k, std::vector<Expr>& order) {
    if (!readsVariable(value, k)) {
      if (!value.as<Var>() && !value.as<IntImm>() && !value.as<FloatImm>()) order.push_back(value);
    } else if (const Binary* binary = value.as<Binary>()) {
      collectInvariants(binary->a, k, order);
      collectInvariants(binary->b, k, order);
    } else if (const Unary* unary = value.as<Unary>()) {
      collectInvariants(unary->a, k, order);
    }
  }

  // `value` a vector at a time: loads that read k through `vectorLoad`,
  // invariant parts by their names (or as they are: variables, constants).
  template <typename VectorLoad>
  std::string vectorText(const Expr& value, const std::string& k,
                         const std::map<const ExprNode*, std::string>& invariants, VectorLoad vectorLoad) {
    if (auto named = invariants.find(value.get()); named != invariants.end()) return named->second;
    if (!readsVariable(value, k)) return text(value);
    std::ostringstream vector;
    if (const Load* load = value.as<Load>())
      vector << vectorLoad(load);
    else if (const Binary* binary = value.as<Binary>())
      vector << "(" << vectorText(binary->a, k, invariants, vectorLoad) << " " << toString(binary->op) << " "
             << vectorText(binary->b, k, invariants, vectorLoad) << ")";
    else
      vector << "-(" << vectorText(value.as<Unary>()->a, k, invariants, vectorLoad) << ")";
    return vector.str();
  }

  // `for (lane < width) { k = begin + lane; <body> }`, fully unrolled.
  template <typename Body>
  void printLaneLoop(const TileNames& names, int width, Body body) {
    indent();
    out_ << "#pragma GCC unroll " << width << "\n";
    indent();
    out_ << "for (int32_t " << names.lane << " = 0; " << names.lane << " < " << width << "; " << names.lane
         << "++) {\n";
    ++depth_;
    indent();
    out_ << names.kType << " " << names.k << " = " << names.begin << " + " << names.lane << ";\n";
    body();
    --depth_;
    indent();
    out_ << "}\n";
  }

  // The nest's sparse loops from `level` in, with `update` printed where
  // the dense loop was.
  template <typename Update>
  void printTiledLevel(const DenseRowNest& nest, size_t level, const TileNames& names, int width, Update update) {
    const For* loop = nest.sparseLoops[level];
    if (!loop->comment.empty()) {
      indent();
      out_ << "// " << loop->comment << "\n";
    }
    printSerialLoopHeader(loop);
    ++depth_;
    for (const Stmt& statement : statementsOf(loop->body)) {
      if (level + 1 < nest.sparseLoops.size() && statement.get() == nest.sparseLoops[level + 1]) {
        printTiledLevel(nest, level + 1, names, width, update);
      } else if (statement.get() == nest.denseLoop) {
        indent();
        out_ << "// " << names.k << " in the tile\n";
        update();
      } else {
        statement.accept(*this);
      }
    }
    --depth_;
    indent();
    out_ << "}\n";
  }

  // Fast mode: a serial loop that only sums into scalars may reassociate.
  // Short trips do not repay a vector loop's set-up (SpMV rows of a few
  // entries ran up to 30% slower vectorized): below kShortestSimdSum
  // iterations the sum runs in order.
  static constexpr int kShortestSimdSum = 32;

  void printSimdSumOrShortLoop(const For* op) {
    indent();
    out_ << "if (" << text(op->end) << " - " << text(op->begin) << " >= " << kShortestSimdSum << ") {\n";
    nested([&] { CLikePrinter::visit(op); });
    indent();
    out_ << "} else {\n";
    printingShortLoop_ = true;
    nested([&] {
      // A serial chain of fused multiply-adds waits on the FMA's latency,
      // longer than an add's: short sums run faster uncontracted. (GCC has
      // no such pragma and warns about unknown ones.)
      out_ << "#ifdef __clang__\n";
      indent();
      out_ << "#pragma clang fp contract(off)\n";
      out_ << "#endif\n";
      CLikePrinter::visit(op);
    });
    printingShortLoop_ = false;
    indent();
    out_ << "}\n";
  }

  // Fast mode, a sum over gathered operands (SpMV's x[crd[p]]): the body
  // unrolled kPartialSums times, each copy adding into its own partial sum,
  // then the partial sums added together, all in scalar instructions. An
  // empty asm statement between the copies keeps the compilers from packing
  // them into vectors (Clang 16 made 256-bit gathers of them, 25% slower).
  // Measured against `omp simd` (512- and 256-bit gathers), 8 partial sums
  // and the copies without the asm statements, this was the fastest row sum
  // through Clang 16, and through GCC on short rows (bench/spmv_fp,
  // tcc_spmv_variants): gathers cost about as much as the scalar loads they
  // replace, and four independent chains hide the add latency a single sum
  // waits on. (GCC's own vectorized loop is faster on longer rows in cache:
  // see kShortestGatherVector.)
  // Out of cache the scalar loop keeps fewer loads in flight than gathers
  // do, so each iteration prefetches the streams it reads at the loop
  // variable (crd, vals) kPrefetchDistance entries ahead: on the 16-core
  // Xeon host, one thread, through GCC, 1.30x the TACO-style loop instead
  // of 0.89x, for about 2% in cache. The prefetch goes to the outer caches
  // only (kPrefetchLocality, prefetcht1): a prefetch into L1 holds one of
  // its few miss buffers for a whole trip to memory, and the gathers of x
  // that miss L1 wait for one. On the 2-core AMD VM, one thread, out of
  // cache (tcc_spmv_variants, five scale-ups), prefetcht1 512 ahead moved
  // 1.00-1.02x the TACO-style loop's bytes against 0.94-0.95x for
  // prefetcht0 256 ahead through Clang (GCC 0.98x against 0.95-0.96x), and
  // on kron(mbeacxc,bcspwr03), whose x misses L1 on most gathers,
  // 1.13-1.16x; in cache it is level with prefetcht0 (1.21x the TACO-style
  // loop for both). (On the
  // Xeon host, where these run only for short rows of streaming inputs,
  // prefetcht0 512 ahead did a little better on whole rows: 1.25x against
  // 1.18x.) The address is formed as an integer: it may lie past the
  // array's end.
  // In the gathers copy (RowLoops::Gathers) the short rows prefetch as far
  // ahead as tcc_gather_sum does (the prelude's TCC_GATHER_PREFETCH): rows
  // of both kinds follow each other, and a short row that prefetched less
  // far than the long row before it would leave the entries between the
  // two distances unprefetched when a long row comes next (see there).
  static constexpr int kPartialSums = 4;
  static constexpr int kPrefetchDistance = 512;
  static constexpr int kPrefetchLocality = 2;
  std::string prefetchDistance() const {
    return rowLoops_ == RowLoops::Gathers ? "TCC_GATHER_PREFETCH" : std::to_string(kPrefetchDistance);
  }
  static_assert(kPartialSums == 4, "the partial sums are added as (s + s_u1) + (s_u2 + s_u3)");

  // Through GCC the partial sums lost to its own vectorized loop (256-bit
  // gathers, what TACO's -O3 -ffast-math build gets) on rows of a dozen
  // entries and more (0.65x TACO-style on dnn_n1024_l1, 32 a row, on the
  // Xeon host; on the 2-core VM this brought GCC's fast SpMV from 1.05x to
  // 1.18x the TACO-style loop, and 1.3-1.5x on rows of 17-101). So when a
  // function's only sums that need reassociating are such gather sums (no
  // register tiles: reassociation let GCC vectorize those across their
  // sums), the function is marked to let GCC reassociate
  // (`optimize("associative-math", "no-signed-zeros")`, at 256 bits), and,
  // for inputs in cache, a row of kShortestGatherVector or more entries runs
  // as one plain loop, which GCC vectorizes, and a shorter one without a
  // loop (printReassociatedRowLoops, printShortRow; for streaming inputs
  // see kStreamingValues).
  // Where the partial sums still run through GCC (streaming inputs: short
  // rows, or every row on AMD), their tail holds an empty asm statement so
  // GCC does not vectorize (and test for) a loop of at most three entries.
  // Clang ignores the attribute and runs the partial sums.
  static constexpr int kShortestGatherVector = 8;

  // The attributes above are GCC's; on x86 only (prefer-vector-width).
  static constexpr const char* kGccOnX86 = "defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)";
  // Where the reassociated copy is compiled and called (the prelude's test).
  static constexpr const char* kReassociatedRows = "TCC_REASSOCIATED_ROWS";

  // Whether the function holds a register-tiled nest and no loop whose
  // pragma reduces across vector lanes or threads (a vectorize or parallel
  // schedule with a reduction), whose sums a wider vector would regroup.
  static bool tilesAloneWantVectors(const Function& function) {
    struct Scan : IRVisitor {
      bool tiled = false, reduces = false;
      void visit(const For* op) override {
        if (findDenseRowNest(op)) tiled = true;
        if (!op->reductions.empty() || op->loopKind == LoopKind::Vectorized) reduces = true;
        IRVisitor::visit(op);
      }
    } scan;
    function.body.accept(scan);
    return scan.tiled && !scan.reduces;
  }

  // Through GCC on the Xeon host, one thread, out of cache a plain
  // vectorized loop kept too few loads in flight (0.98-1.01x the TACO-style
  // loop), the partial sums with their prefetch did better (1.17-1.22x), and
  // strips of kStripEntries that each prefetch ahead did best
  // (printPrefetchingStrips; 1.22-1.25x). The strips tied the in-cache
  // loops on inputs in cache and at 1.4 M entries, and won from 2.7 M on
  // (by 4-30%), so they run when the inputs hold more than kStreamingValues
  // stored values in all (about 12 MB of CSR doubles and coordinates);
  // short rows of such inputs keep the partial sums with their prefetch.
  // On AMD (GCC's -march=native names a Zen core) the strips lost to the
  // TACO-style loop out of cache (0.83x on the 2-core VM) where the partial
  // sums prefetching into L2 moved 0.98x: there every row of streaming
  // inputs runs as partial sums. On the Xeon host the strips stayed ahead
  // of those partial sums (1.30x against 1.18x the TACO-style loop at one
  // thread, 1.20x against 1.03x at 16). The test is made once a call, from
  // the tensors' sizes.
  static constexpr int64_t kStreamingValues = int64_t(1) << 20;
  static constexpr int kStripEntries = 32;
  // How far ahead a strip prefetches: 512 entries moved as much as 256 at
  // one thread (1.25 and 1.13 against 1.22 and 1.15 in two host runs) and
  // more at 16 (1.49 against 1.13 the TACO-style loop's bytes).
  static constexpr int kStripPrefetchDistance = 512;
  // Which row loops printPartialSums prints (see printFunction).
  enum class RowLoops {
    PartialSums,   // the partial sums alone: a function GCC does not reassociate
    Reassociated,  // GCC in cache: the vectorized loop or the in-order one
    Streaming,     // GCC streaming: the prefetching strips (not on AMD) or the partial sums; Clang and other
                   // compilers: the partial sums
    Gathers,       // streaming on an AMD core with AVX-512, GCC and Clang: long rows as tcc_gather_sum
  };

  // A copy of the function, compiled where `guard` holds, that the entry
  // point calls (printStreamingSwitch), its row sums printed as `loops`.
  void printRowLoopsCopy(const Function& function, const std::string& guard, const std::string& name,
                         RowLoops loops) {
    out_ << "#if " << guard << "\n";
    printFunctionHead(function, "static __attribute__((noinline))", name);
    rowLoops_ = loops;
    function.body.accept(*this);
    indent();
    out_ << "return 0;\n}\n";
    out_ << "#endif\n";
    rowLoops_ = RowLoops::Streaming;
    chunkNames_.clear();  // each function declares its own chunks
  }

  void printStreamingSwitch(const Function& function) {
    std::string values = inputValuesSum(function);
    if (values.empty()) values = "0";
    const std::string call = "return " + reassociatedName(function) + "(tcc_tensors);\n";
    out_ << "#if " << kReassociatedRows << "\n";
    indent();
    out_ << "// fp fast: inputs of at most " << kStreamingValues
         << " stored values in all fit in cache: long rows as loops the compiler vectorizes, short rows without a "
            "loop\n";
    indent();
    out_ << "if (" << values << " <= " << kStreamingValues << "LL) " << call;
    out_ << "#endif\n";
    if (!printsGatherSums_) return;
    out_ << "#if TCC_GATHER_SUMS\n";
    indent();
    out_ << "// fp fast: streaming inputs on an AMD core with AVX-512: long rows as 512-bit gathers\n";
    indent();
    out_ << "if (" << values << " > " << kStreamingValues << "LL) return " << gathersName(function)
         << "(tcc_tensors);\n";
    out_ << "#endif\n";
  }

  // Whether the function holds a fast-mode gather sum and no register-tiled
  // nest.
  static bool gatherSumsAloneNeedReassociation(const Function& function) {
    struct Scan : IRVisitor {
      bool gatherSum = false, tiled = false;
      void visit(const For* op) override {
        if (findDenseRowNest(op)) tiled = true;
        if (!simdSumReductions(op).empty() && readsThroughLoadedIndex(op)) gatherSum = true;
        IRVisitor::visit(op);
      }
    } scan;
    function.body.accept(scan);
    return scan.gatherSum && !scan.tiled;
  }

  // Fast mode, inputs in cache (the reassociated copy): a loop of gather
  // sums whose segments (CSR rows, CSF fibres) hold fewer than
  // kShortSegments entries on average runs each sum in order, two entries
  // a trip, as strict mode does (printInOrderSegment); other loops as
  // before. The test is made once per run of the loop, from its first and
  // last positions. On rows of 1-3 entries (Pd, 1.6 on average) the
  // reassociated copy's short rows (four terms apart, then a test an
  // entry) ran 1.4x (Clang 16, the 2-core Xeon VM) to 2.2x (GCC 13.3, the
  // 16-core Xeon host) slower than the in-order loop, and fast SpMV there
  // slower than strict; at about 4 entries a row on average (bcspwr10,
  // bcspwr09, olm1000) they were ahead again, by 10-24%
  // (bench/cpu_peers/RESULTS.md, "Short rows").
  static constexpr int kShortSegments = 3;

  void printShortSegmentsSwitch(const For* op, const SegmentLoop& segments) {
    const std::string pos = text(segments.pos), begin = text(segments.begin), end = text(segments.end);
    indent();
    out_ << "// fp fast: segments of fewer than " << kShortSegments
         << " entries on average: each sum in order, two entries a trip\n";
    indent();
    out_ << "if (" << pos << "[" << end << "] - " << pos << "[" << begin << "] < " << kShortSegments << "LL * (" << end
         << " - " << begin << ")) {\n";
    const For* outer = versionedLoop_;
    versionedLoop_ = op;
    nested([&] {
      shortSegments_ = true;
      visit(op);
      shortSegments_ = false;
    });
    indent();
    out_ << "} else {\n";
    nested([&] { visit(op); });
    indent();
    out_ << "}\n";
    versionedLoop_ = outer;
  }

  // A short segment's sum in order, two entries a trip (strict mode's loop,
  // printStrictGatherSumUnroll), the empty asm statement keeping GCC from
  // vectorizing it in this function, which it may reassociate.
  void printInOrderSegment(const For* op) {
    const std::string var = op->var.as<Var>()->name;
    if (!op->comment.empty()) {
      indent();
      out_ << "// " << op->comment << "\n";
    }
    indent();
    out_ << "{\n";
    nested([&] {
      indent();
      out_ << cTypeName(op->var.type()) << " " << var << " = " << text(op->begin) << ";\n";
      indent();
      out_ << "#pragma GCC unroll " << kStrictGatherSumUnroll << "\n";
      printPlainRowLoop(op, var, text(op->end), true);
    });
    indent();
    out_ << "}\n";
  }

  // A row of fewer than kPartialSums entries runs only the in-order tail,
  // as strict mode would: no partial sums to set up and add.
  void printPartialSums(const For* op) {
    if (shortSegments_ && rowLoops_ == RowLoops::Reassociated) {
      printInOrderSegment(op);
      return;
    }
    std::vector<std::string> renamed = declaredInBody(op);
    for (const std::string& sum : simdSumReductions(op)) renamed.push_back(sum);
    const std::string var = op->var.as<Var>()->name;
    const std::string end = text(op->end);
    if (!op->comment.empty()) {
      indent();
      out_ << "// " << op->comment << "\n";
    }
    if (rowLoops_ != RowLoops::Reassociated) {
      indent();
      out_ << "// fp fast: " << kPartialSums << " partial sums, added together before the last few entries\n";
    }
    indent();
    out_ << "{\n";
    ++depth_;
    indent();
    out_ << cTypeName(op->var.type()) << " " << var << " = " << text(op->begin) << ";\n";
    if (rowLoops_ == RowLoops::Reassociated) {
      printReassociatedRowLoops(op, var, end);
      --depth_;
      indent();
      out_ << "}\n";
      return;
    }
    if (rowLoops_ == RowLoops::Streaming) printPrefetchingStrips(op, var, end);
    if (rowLoops_ == RowLoops::Gathers) printGatherSum(op, var, end);
    // The partial sums: short rows of streaming inputs through GCC, every
    // row of inputs in cache through Clang, every row through other
    // compilers.
    indent();
    out_ << "{\n";
    ++depth_;
    printUnrolledPartialSums(op, renamed, true);
    // The last few entries; in a function GCC may reassociate, in order.
    printPlainRowLoop(op, var, end, vectorizesGatherSums_);
    --depth_;
    indent();
    out_ << "}\n";
    --depth_;
    indent();
    out_ << "}\n";
  }

  // Fast mode, a sum that reads an operand at a stride (SDDMM's D(k,j) down
  // a column of a row-major D under the k loop): printPartialSums's partial
  // sums without its prefetches. As a vector loop (`omp simd`) it gathered
  // that operand a lane at a time and ran slower than strict mode's scalar
  // loop (bench/mlir/RESULTS.md, "Fast SDDMM").
  void printStridedPartialSums(const For* op) {
    std::vector<std::string> renamed = declaredInBody(op);
    for (const std::string& sum : simdSumReductions(op)) renamed.push_back(sum);
    const std::string var = op->var.as<Var>()->name;
    if (!op->comment.empty()) {
      indent();
      out_ << "// " << op->comment << "\n";
    }
    indent();
    out_ << "// fp fast: " << kPartialSums << " partial sums in scalar instructions (an operand read at a stride)\n";
    indent();
    out_ << "{\n";
    nested([&] {
      indent();
      out_ << cTypeName(op->var.type()) << " " << var << " = " << text(op->begin) << ";\n";
      printUnrolledPartialSums(op, renamed, false);
      printPlainRowLoop(op, var, text(op->end), false);
    });
    indent();
    out_ << "}\n";
  }

  // While kPartialSums entries are left: the body's copies, each adding into
  // its own partial sum (`renamed`: the body's names and the sums), an
  // empty asm statement between them, then the partial sums added together;
  // with `prefetch`, each step first prefetches the streams the loop reads
  // at its variable prefetchDistance() entries ahead.
  void printUnrolledPartialSums(const For* op, const std::vector<std::string>& renamed, bool prefetch) {
    const std::vector<std::string> sums = simdSumReductions(op);
    const std::string var = op->var.as<Var>()->name;
    const std::string unrolledCondition = var + " + " + std::to_string(kPartialSums) + " <= " + text(op->end);
    indent();
    out_ << "if (" << unrolledCondition << ") {\n";
    nested([&] {
      declarePartialSumCopies(op, sums);
      indent();
      out_ << "for (; " << unrolledCondition << "; " << var << " += " << kPartialSums << ") {\n";
      nested([&] {
        for (const Expr& buffer : prefetch ? buffersStreamedByLoop(op) : std::vector<Expr>{}) {
          indent();
          const std::string name = text(buffer);
          out_ << "__builtin_prefetch((const void*)((size_t)(" << name << " + " << var << ") + " << prefetchDistance()
               << " * sizeof(*" << name << ")), 0, " << kPrefetchLocality << ");\n";
        }
        for (int copy = 0; copy < kPartialSums; ++copy) {
          if (copy > 0) {
            indent();
            out_ << "__asm__(\"\" ::: \"memory\");  // keeps the copies scalar\n";
          }
          unrolledCopy(op, copy, renamed).accept(*this);
        }
      });
      indent();
      out_ << "}\n";
      combinePartialSums(sums);
    });
    indent();
    out_ << "}\n";
  }

  // Copies 1 .. kPartialSums - 1 of each sum, zeroed (copy 0 is the sum).
  void declarePartialSumCopies(const For* op, const std::vector<std::string>& sums) {
    for (const std::string& sum : sums) {
      indent();
      out_ << cTypeName(sumType(op, sum));
      for (int copy = 1; copy < kPartialSums; ++copy)
        out_ << (copy > 1 ? ", " : " ") << copyName(sum, copy) << " = 0";
      out_ << ";\n";
    }
  }

  // Each sum plus its copies, in pairs: (s + s1) + (s2 + s3).
  void combinePartialSums(const std::vector<std::string>& sums) {
    for (const std::string& sum : sums) {
      indent();
      out_ << sum << " = (" << sum << " + " << copyName(sum, 1) << ") + (" << copyName(sum, 2) << " + "
           << copyName(sum, 3) << ");\n";
    }
  }

  // The row loop's body as a plain loop from `var` to `end`; in order, an
  // empty asm statement keeps GCC from vectorizing it.
  void printPlainRowLoop(const For* op, const std::string& var, const std::string& end, bool inOrder) {
    indent();
    out_ << "for (; " << var << " < " << end << "; " << var << "++) {\n";
    if (inOrder) {
      nested([&] {
        indent();
        out_ << "__asm__(\"\");  // keeps the compiler from vectorizing a short row\n";
      });
    }
    body(op->body);
    indent();
    out_ << "}\n";
  }

  std::string isLongRow(const std::string& var, const std::string& end) const {
    return end + " - " + var + " >= " + std::to_string(kShortestGatherVector);
  }

  // GCC for inputs in cache (see kShortestGatherVector and
  // kStreamingValues): a row of kShortestGatherVector or more entries as
  // one loop GCC may reassociate and vectorize (by the function's
  // attribute), a shorter one as four entries at once, each term apart
  // (printShortRow). Through GCC on the Xeon host, in cache: 1.09x the
  // TACO-style loop with vectorized rows from 8 entries, 1.02x from 16,
  // 1.01x for the rule before (rows from 16 vectorized, shorter ones as
  // partial sums with their prefetch), 0.91x for partial sums on every row.
  void printReassociatedRowLoops(const For* op, const std::string& var, const std::string& end) {
    indent();
    out_ << "// fp fast: a row of " << kShortestGatherVector
         << " or more entries as one loop the compiler vectorizes, a shorter one without a loop\n";
    indent();
    out_ << "if (" << isLongRow(var, end) << ") {\n";
    // Clang ignores GCC's optimize attribute; this block may reassociate.
    out_ << "#if defined(__clang__)\n#pragma clang fp reassociate(on)\n#endif\n";
    nested([&] { printPlainRowLoop(op, var, end, false); });
    indent();
    out_ << "} else {\n";
    nested([&] { printShortRow(op, var, end); });
    indent();
    out_ << "}\n";
  }

  // (The short rows ran in order before. Keeping each term of that loop
  // apart from its add, an add's latency on the chain instead of an FMA's,
  // gained 6% on the host but cost 20-30% on short TTV fibres on the 2-core
  // VM: GCC spilled around it.)
  //
  // A row of fewer than 2 * kPartialSums entries, as GCC runs the tail of
  // its own vectorized loop: kPartialSums entries at once if it holds as
  // many (one step of the partial sums, each term into a sum of its own,
  // which GCC 12 for Sapphire Rapids packs into one vector multiply as its
  // loop's tail does), then the rest (at most kPartialSums - 1) unrolled,
  // one test each, no loop. The in-order loop it replaces mispredicted its
  // exit on rows whose lengths vary and chained every entry's FMA on the one
  // before: on the Xeon host, in cache, rows of 3-8 entries (adder_dcop_05,
  // bcspwr10) ran 0.77-0.81x the TACO-style loop that way (round 18),
  // 1.27-1.32x now (round 19; the 14 matrices 1.17x, were 0.98x). In
  // tcc_spmv_variants, same round: the printed kernel 1.17, its hand-written
  // twin hyb8_blk4 1.20, the same with an empty asm statement between the
  // terms (hyb8_blk4_asm) 1.20, the in-order rule hyb8_seq 1.01, TACO's loop
  // under the attribute 1.00.
  void printShortRow(const For* op, const std::string& var, const std::string& end) {
    static_assert(kShortestGatherVector == 2 * kPartialSums, "after one step of the partial sums, at most 3 are left");
    const std::vector<std::string> sums = simdSumReductions(op);
    const std::vector<std::string> declared = declaredInBody(op);
    std::vector<std::string> renamed = declared;
    renamed.insert(renamed.end(), sums.begin(), sums.end());
    indent();
    out_ << "if (" << end << " - " << var << " >= " << kPartialSums << ") {\n";
    nested([&] {
      declarePartialSumCopies(op, sums);
      for (int copy = 0; copy < kPartialSums; ++copy) unrolledCopy(op, copy, renamed).accept(*this);
      combinePartialSums(sums);
      indent();
      out_ << var << " += " << kPartialSums << ";\n";
    });
    indent();
    out_ << "}\n";
    // The rest, in order, each entry's test inside the one before.
    for (int copy = 0; copy < kPartialSums - 1; ++copy) {
      indent();
      out_ << "if (" << var << (copy ? " + " + std::to_string(copy) : "") << " < " << end << ") {\n";
      ++depth_;
      unrolledCopy(op, copy, declared).accept(*this);
    }
    for (int copy = kPartialSums - 2; copy >= 0; --copy) {
      --depth_;
      indent();
      out_ << "}\n";
    }
  }

  // Streaming inputs (see kStreamingValues): the row runs in strips of
  // kStripEntries entries, each a loop of known length that GCC vectorizes,
  // and each first prefetching the strip kStripPrefetchDistance entries
  // ahead of every stream the loop reads at its variable, one prefetch a
  // cache line.
  void printPrefetchingStrips(const For* op, const std::string& var, const std::string& end) {
    out_ << "#if " << kGccOnX86 << " && !TCC_AMD_ZEN\n";  // the prelude's test for an AMD core
    indent();
    out_ << "if (" << isLongRow(var, end) << ") {\n";
    nested([&] {
      indent();
      out_ << "// fp fast: streaming, in strips of " << kStripEntries << " entries, each prefetching "
           << kStripPrefetchDistance << " entries ahead\n";
      indent();
      out_ << "for (; " << var << " + " << kStripEntries << " <= " << end << ";) {\n";
      nested([&] {
        for (const Expr& buffer : buffersStreamedByLoop(op)) {
          const std::string name = text(buffer);
          indent();
          out_ << "for (size_t tcc_line = 0; tcc_line < " << kStripEntries << " * sizeof(*" << name
               << "); tcc_line += 64)\n";
          indent();
          out_ << "  __builtin_prefetch((const void*)((size_t)(" << name << " + " << var << ") + "
               << kStripPrefetchDistance << " * sizeof(*" << name << ") + tcc_line));\n";
        }
        const std::string strip = var + "_strip";
        indent();
        out_ << "const " << cTypeName(op->var.type()) << " " << strip << " = " << var << " + " << kStripEntries
             << ";\n";
        indent();
        out_ << "for (; " << var << " < " << strip << "; " << var << "++) {\n";
        body(op->body);
        indent();
        out_ << "}\n";
      });
      indent();
      out_ << "}\n";
      printPlainRowLoop(op, var, end, false);
    });
    indent();
    out_ << "} else\n";
    out_ << "#endif\n";
  }

  // Streaming inputs on an AMD core with AVX-512 (the prelude's
  // TCC_GATHER_SUMS; the copy the entry point calls for inputs of more
  // than kStreamingValues stored values, through GCC and Clang), a row sum
  // `sum += vals[p] * x[crd[p]]` of kShortestGatheredRow or more entries:
  // the prelude's tcc_gather_sum, 512-bit gathers of x that prefetch vals
  // twice. Shorter rows and other sums keep the partial sums; inputs in
  // cache and other cores run as before (through Clang in cache the
  // gathers ran 0.96x the TACO-style loop against 1.16x for the partial
  // sums on the 14 matrices).
  // Rows from 64 entries: on kron(bayer10,cage5) (44 a row on average) the
  // gathers from 8 entries ran 0.71-0.93x the partial sums, from 64 level
  // with them (0.91-1.06x over ten runs, the spread of two builds of one
  // kernel); on kron(mbeacxc,bcspwr03) (409 a row, x gathered from L2) the
  // copy ran 1.04-1.13x the partial sums (bench/spmv_fp, "AVX-512 gathers
  // on AMD cores").
  static constexpr int kShortestGatheredRow = 64;
  void printGatherSum(const For* op, const std::string& var, const std::string& end) {
    const std::optional<GatherDot> dot = gatherDotOf(op);
    if (!dot) return;
    indent();
    out_ << "if (" << end << " - " << var << " >= " << kShortestGatheredRow << ") {\n";
    nested([&] {
      indent();
      out_ << "// fp fast: streaming, 512-bit gathers of " << text(dot->x) << ", 8 entries a step\n";
      indent();
      out_ << dot->sum << " += tcc_gather_sum(" << text(dot->vals) << ", " << text(dot->crd) << ", "
           << text(dot->x) << ", " << var << ", " << end << ");\n";
    });
    indent();
    out_ << "} else\n";
  }

  // A parallel loop of gather sums (fast mode, the entry point: every input
  // through Clang, streaming ones through GCC) hands its iterations out in
  // chunks of about kChunkValues stored values (tcc_chunk_by_values), not
  // 16 iterations: the row loops prefetch 512 entries ahead, and a chunk of
  // 16 short rows (704 entries on kron(bayer10,cage5), 44 a row) spent most
  // of its prefetches on the rows after it, another thread's, and left its
  // own first 512 entries to miss; its 497 K rows also made 31 K chunks for
  // 16 threads to take one at a time. On the Xeon host at 16 threads
  // (round 18, the printed row loop under each schedule, five scale-ups of
  // 21-26 M entries), TACO-style time / variant time: chunks of 16 rows
  // 1.17 (kron(bayer10,cage5) 0.99), of about 2 K values 1.32, 8 K 1.48,
  // 32 K 1.61 (bayer10 2.35), one range a thread balanced by entries 1.19,
  // 16 such ranges a thread taken in turn 1.61; 128 K values level with
  // 32 K in round 19, where the printed kernel moved bayer10 at 1.77x the
  // 16-thread triad (0.91x before).
  static constexpr int64_t kChunkValues = 32768;

  bool chunksByValues(const For* op) const {
    if (!vectorizesGatherSums_ || rowLoops_ == RowLoops::Reassociated || inputValues_.empty()) return false;
    struct Scan : IRVisitor {
      bool gatherSum = false;
      void visit(const For* loop) override {
        if (!simdSumReductions(loop).empty() && readsThroughLoadedIndex(loop)) gatherSum = true;
        IRVisitor::visit(loop);
      }
    } scan;
    op->body.accept(scan);
    return scan.gatherSum;
  }

  // Declares the loop's chunk (see kChunkValues) and returns its name, one
  // the function has not declared yet.
  std::string printChunkByValues(const For* op) {
    const std::string base = "tcc_chunk_" + op->var.as<Var>()->name;
    std::string name = base;
    for (int n = 2; !chunkNames_.insert(name).second; ++n) name = base + "_" + std::to_string(n);
    indent();
    out_ << "// fp fast: each thread takes iterations holding about " << kChunkValues << " stored values at a time\n";
    indent();
    out_ << "const int " << name << " = tcc_chunk_by_values((int64_t)(" << text(op->end) << ") - (int64_t)("
         << text(op->begin) << "), " << inputValues_ << ", " << kChunkValues << "LL, omp_get_max_threads());\n";
    return name;
  }

  // The type of a sum the loop adds into.
  static ir::imp::Type sumType(const For* op, const std::string& sum) {
    struct Find : IRVisitor {
      const std::string& name;
      ir::imp::Type type;
      bool found = false;
      explicit Find(const std::string& name) : name(name) {}
      void visit(const Assign* assign) override {
        const Var* target = assign->var.as<Var>();
        if (!found && target && target->name == name) type = assign->var.type(), found = true;
      }
    } find(sum);
    op->body.accept(find);
    return find.type;
  }

  template <typename Print>
  void nested(Print print) {
    ++depth_;
    print();
    --depth_;
  }

  void printSimdSumPragma(const For* op) {
    if (printingShortLoop_) return;
    std::vector<std::string> sums = simdSumReductions(op);
    if (sums.empty()) return;
    indent();
    out_ << "#pragma omp simd";
    for (const std::string& sum : sums) out_ << " reduction(+: " << sum << ")";
    out_ << "  // fp fast: the sum may be reassociated\n";
  }

  // A strict row sum through a loaded index (CSR SpMV's, TTV's) stays one
  // chain of adds in loop order, but two entries a trip: one a trip (the
  // JIT builds with -fno-unroll-loops, g++ -O3 does not unroll) ran short
  // rows up to 1.7x slower than MLIR's loop over the same adds, which
  // clang -O3 unrolls. Unrolled by 4 or 8 it lost on rows of 1-3 entries
  // through GCC (bench/cpu_peers/RESULTS.md, "Strict SpMV: two entries a
  // trip").
  void printStrictGatherSumUnroll(const For* op) {
    if (op->unrollFactor > 0 || simdSumReductions(op).empty() || !readsThroughLoadedIndex(op)) return;
    indent();
    out_ << "#pragma GCC unroll " << kStrictGatherSumUnroll << "  // the same adds in the same order\n";
  }
  static constexpr int kStrictGatherSumUnroll = 2;

  // A strict row sum `sum += vals[p] * x[crd[p]]` (CSR SpMV's, CSF TTV's)
  // that the schedule does not unroll.
  bool isStrictGatherSum(const For* op) const {
    return !printingStrictRowSum_ && op->unrollFactor == 0 && readsThroughLoadedIndex(op) && gatherDotOf(op);
  }

  // The row sum per compiler: GCC's form (printFirstTwoBySelect) under
  // `#if`, Clang's (printLongRowsFourATrip) after `#else`; a form turned
  // off (CppLoopForms) prints the loop two a trip in its place.
  void printStrictGatherSum(const For* op, const GatherDot& dot) {
    out_ << "#if defined(__GNUC__) && !defined(__clang__)\n";
    if (forms_.strictFirstTwoBySelect) printFirstTwoBySelect(op, dot);
    else printStrictLoopTwoATrip(op);
    out_ << "#else\n";
    if (forms_.strictLongRowsFourATrip) printLongRowsFourATrip(op, dot);
    else printStrictLoopTwoATrip(op);
    out_ << "#endif\n";
  }

  // The row sum's loop two a trip (printStrictGatherSumUnroll).
  void printStrictLoopTwoATrip(const For* op) {
    printingStrictRowSum_ = true;
    visit(op);
    printingStrictRowSum_ = false;
  }

  void printLoopComment(const For* op) {
    if (op->comment.empty()) return;
    indent();
    out_ << "// " << op->comment << "\n";
  }

  // `{`, what `inside` prints one level deeper, `}`.
  template <typename Print>
  void printBraced(Print inside) {
    indent();
    out_ << "{\n";
    nested(inside);
    indent();
    out_ << "}\n";
  }

  // The row sum's loop two a trip from where `init` (a statement, or none)
  // leaves the loop's variable, which the forms below declare.
  void printTwoATripFrom(const For* op, const std::string& init) {
    const std::string var = op->var.as<Var>()->name;
    indent();
    out_ << "#pragma GCC unroll " << kStrictGatherSumUnroll << "\n";
    indent();
    out_ << "for (" << init << "; " << var << " < " << text(op->end) << "; " << var << "++) {\n";
    body(op->body);
    indent();
    out_ << "}\n";
  }

  // `sum += vals[p] * x[crd[p]];` for position `p`.
  void printGatherTerm(const GatherDot& dot, const std::string& p) {
    indent();
    out_ << dot.sum << " += " << text(dot.vals) << "[" << p << "] * " << text(dot.x) << "[" << text(dot.crd) << "[" << p
         << "]];\n";
  }

  // Strict mode through GCC, a row sum `sum += vals[p] * x[crd[p]]` (CSR
  // SpMV's, CSF TTV's): the first two entries without a loop, the second's
  // add kept or not by a select (adding -0.0 leaves every sum as it is, so
  // the sums are the sequential ones, bit for bit), then the loop two a trip
  // from the third: on rows whose lengths vary (bcspwr10: 2-14, most 3-5)
  // one data-dependent branch fewer a row than the loop's odd-length test
  // and exit (not measured with counters). Through GCC 13.3 on the 16-core
  // Xeon host this ran bcspwr10 1.13x
  // and Pd 1.08x the loop two a trip (geomean over 15 matrices 1.08, none
  // below 0.96); through Clang 16 it lost on Pd (0.82x), so Clang keeps the
  // loop (bench/cpu_peers/RESULTS.md, "Short rows").
  void printFirstTwoBySelect(const For* op, const GatherDot& dot) {
    const std::string var = op->var.as<Var>()->name, end = text(op->end);
    const std::string vals = text(dot.vals), crd = text(dot.crd), x = text(dot.x);
    const std::string second = var + "_second", type = cTypeName(op->var.type());
    const std::string term = cTypeName(sumType(op, dot.sum));
    printLoopComment(op);
    indent();
    out_ << "// strict, GCC: the first two entries without a loop (the second's add by a select: + -0.0 changes no sum), "
            "the rest two a trip\n";
    printBraced([&] {
      indent();
      out_ << type << " " << var << " = " << text(op->begin) << ";\n";
      indent();
      out_ << "if (" << var << " < " << end << ") {\n";
      nested([&] {
        indent();
        out_ << "const " << type << " " << second << " = " << var << " + 1 < " << end << " ? " << var << " + 1 : " << var
             << ";\n";
        indent();
        out_ << "const " << term << " " << var << "_term0 = " << vals << "[" << var << "] * " << x << "[" << crd << "["
             << var << "]];\n";
        indent();
        out_ << "const " << term << " " << var << "_term1 = " << vals << "[" << second << "] * " << x << "[" << crd
             << "[" << second << "]];\n";
        indent();
        out_ << dot.sum << " += " << var << "_term0;\n";
        indent();
        out_ << dot.sum << " += " << var << " + 1 < " << end << " ? " << var << "_term1 : -0.0;\n";
        printTwoATripFrom(op, var + " += 2");
      });
      indent();
      out_ << "}\n";
    });
  }

  // Strict mode through Clang (the JIT), the same row sum: a row of
  // kLongStrictRow entries or more takes its (length mod 4) first entries
  // by tests, then four a trip; a shorter row the loop two a trip. The adds
  // stay in loop order. Through Clang 16 on the 2-core Xeon VM the loop two
  // a trip ran bcsstk13 (about 42 entries a row) 1.2x and bcsstk16 (60)
  // 1.07x slower than this, and bcsstk13 only level with MLIR's loop eight
  // a trip; four a trip on every row lost on rows of 1-3 (Pd, 0.8x).
  // Through GCC four a trip was no faster on G51 and dwt_992 (the 16-core
  // host's GCC 13.3, this VM's GCC 12), so GCC keeps its form
  // (bench/cpu_peers/RESULTS.md, "Long rows through the JIT").
  static constexpr int kLongStrictRow = 8;

  void printLongRowsFourATrip(const For* op, const GatherDot& dot) {
    const std::string var = op->var.as<Var>()->name, end = text(op->end), rest = var + "_rest";
    const std::string type = cTypeName(op->var.type());
    printLoopComment(op);
    indent();
    out_ << "// strict, Clang: a row of " << kLongStrictRow
         << " or more entries four a trip after its (length mod 4) first ones, a shorter one two a trip\n";
    printBraced([&] {
      indent();
      out_ << type << " " << var << " = " << text(op->begin) << ";\n";
      indent();
      out_ << "if (" << end << " - " << var << " >= " << kLongStrictRow << ") {\n";
      nested([&] {
        indent();
        out_ << "const " << type << " " << rest << " = (" << end << " - " << var << ") & 3;\n";
        indent();
        out_ << "if (" << rest << " > 0) {\n";
        nested([&] {
          // The first (length mod 4) entries, each under its own test.
          for (int k = 0; k < 3; ++k) {
            if (k > 0) {
              indent();
              out_ << "if (" << rest << " > " << k << ") {\n";
              ++depth_;
            }
            printGatherTerm(dot, k == 0 ? var : var + " + " + std::to_string(k));
          }
          for (int k = 2; k > 0; --k) {
            --depth_;
            indent();
            out_ << "}\n";
          }
          indent();
          out_ << var << " += " << rest << ";\n";
        });
        indent();
        out_ << "}\n";
        indent();
        out_ << "for (; " << var << " < " << end << "; " << var << " += 4) {\n";
        nested([&] {
          for (const char* offset : {"", " + 1", " + 2", " + 3"}) printGatherTerm(dot, var + offset);
        });
        indent();
        out_ << "}\n";
      });
      indent();
      out_ << "} else {\n";
      nested([&] { printTwoATripFrom(op, ""); });
      indent();
      out_ << "}\n";
    });
  }

  std::string reductionClauses(const For* op) {
    std::string clauses;
    for (const auto& reduction : op->reductions) {
      clauses += " reduction(+: " + reduction.var.as<Var>()->name;
      if (reduction.size.defined()) clauses += "[0:" + text(reduction.size) + "]";
      clauses += ")";
    }
    return clauses;
  }

  FloatingPointMode floatingPoint_;
  CppLoopForms forms_;
  bool printingShortLoop_ = false;
  bool vectorizesGatherSums_ = false;  // see kShortestGatherVector
  std::string inputValues_;            // the inputs' stored values, printed (inputValuesSum)
  std::set<std::string> chunkNames_;   // the chunks the function declares (printChunkByValues)
  bool streamingStores_ = false;       // printing the copy with streaming stores (kStreamingStoreValues)
  const char* streamingThreshold_ = kStreamingStoreValues;  // the prelude's macro the entry point tests
  std::set<std::string> streamedBuffers_;  // what its streaming stores write
  bool insideStreamingRegion_ = false;  // printing a parallel loop inside its own `omp parallel` region
  // Printing a streaming copy loop's plain version, or anything else
  // (stores test their array's flag).
  enum class StreamVersion { Flags, Plain };
  StreamVersion streamVersion_ = StreamVersion::Flags;
  RowLoops rowLoops_ = RowLoops::PartialSums;
  const For* versionedLoop_ = nullptr;  // the loop printShortSegmentsSwitch is printing twice
  bool shortSegments_ = false;          // printing its version for short segments
  bool printingStrictRowSum_ = false;   // printing a strict row sum's loop for Clang (printStrictGatherSum)
  bool printsGatherSums_ = false;  // the function has a copy with tcc_gather_sum (printFunction)
};

std::string joined(const std::vector<std::string>& flags) {
  std::string text;
  for (const std::string& flag : flags) text += " " + flag;
  return text;
}

class CppCodeGenerator : public CodeGenerator {
 public:
  CppCodeGenerator(FloatingPointMode floatingPoint, CppLoopForms forms) : floatingPoint_(floatingPoint), forms_(forms) {}

  std::string emit(const std::vector<Function>& functions) const override {
    std::ostringstream out;
    bool openmp = false, sparseWorkspaces = false;
    for (const auto& function : functions) {
      openmp = openmp || function.usesOpenMP;
      sparseWorkspaces = sparseWorkspaces || function.usesSparseWorkspaces;
    }
    out << "// Generated by tcc. Self-contained: compile with `c++ -O3 -march=native "
        << (openmp ? "-fopenmp" : "-fopenmp-simd") << joined(cppFloatingPointFlags(floatingPoint_)) << " -c`";
    if (sparseWorkspaces)
      out << "; link with tcc's ISM runtime, e.g. `c++ -O3 -fPIC -shared kernel.cpp -L<tcc prefix>/lib "
             "-ltcc_ism_runtime -Wl,-rpath,<tcc prefix>/lib`";
    out << ".\n";
    out << "// Floating-point mode: " << (floatingPoint_ == FloatingPointMode::Fast ? "fast" : "strict")
        << (floatingPoint_ == FloatingPointMode::Fast
                ? " (FMA contraction, reassociated and vectorized sums; results may differ from strict in the last "
                  "bits).\n"
                : " (no contraction, sums in loop order: the same bits from every compiler).\n");
    out << cppPrelude() << "\n";
    for (const auto& function : functions) {
      CppPrinter printer(out, floatingPoint_, forms_);
      printer.printFunction(function);
      out << "\n";
    }
    return out.str();
  }
  TargetKind target() const override { return TargetKind::Cpu; }

 private:
  FloatingPointMode floatingPoint_;
  CppLoopForms forms_;
};

}  // namespace

const std::vector<std::string>& cppFloatingPointFlags(FloatingPointMode mode) {
  static const std::vector<std::string> strict = {"-ffp-contract=off"};
  // Reassociation is granted per loop by the simd reduction pragmas, not by
  // -fassociative-math for the whole unit: with it, clang and GCC vectorized
  // SpMM's sparse loop across the 32 sums of a register tile (gathers of B,
  // 20x slower). Never -ffinite-math-only: sparse data may hold inf and NaN.
  // -mprefer-vector-width=512 lets AVX-512 hosts use their full width
  // (compilers default to 256 bits for fear of down-clocking).
  static const std::vector<std::string> fast = {
      "-ffp-contract=fast", "-fno-trapping-math", "-fno-math-errno",
#if defined(__x86_64__)
      "-mprefer-vector-width=512",
#endif
  };
  return mode == FloatingPointMode::Fast ? fast : strict;
}

namespace {
CppLoopForms currentForms;
}  // namespace

void setCppLoopForms(const CppLoopForms& forms) { currentForms = forms; }
const CppLoopForms& cppLoopForms() { return currentForms; }

std::unique_ptr<CodeGenerator> makeCodeGenerator(TargetKind target, FloatingPointMode floatingPoint) {
  if (target == TargetKind::Cpu) return std::make_unique<CppCodeGenerator>(floatingPoint, cppLoopForms());
  return makeCudaCodeGenerator(floatingPoint);
}

}  // namespace tcc::lowering
