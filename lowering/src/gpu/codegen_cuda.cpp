// The CUDA backend: kernels printed from the Gpu loops of each function
// (grid-strided, so any launch size is correct), warp sums through
// shuffles, atomicAdd for racing updates, and a host launcher per function.
#include "codegen_cuda.h"

#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "../c_like_printer.h"
#include "tcc/lowering/gpu_kernels.h"
#include "tcc/lowering/intrinsics.h"

namespace tcc::lowering {

using namespace ir::imp;

namespace {

constexpr const char* kDeviceHelpers = R"tcc(
template <typename T> __host__ __device__ static inline T tcc_min(T a, T b) { return a < b ? a : b; }
template <typename T> __host__ __device__ static inline T tcc_max(T a, T b) { return a < b ? b : a; }
// A float16 input's value (IEEE binary16 bits) as a float, exactly (a
// template: a unit that never calls it compiles without a warning).
template <typename = void> __device__ static inline float tcc_half_to_float(uint16_t half) {
  float value;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(half));
  return value;
}

// The segment s of a level's pos array that holds `position`:
// pos[s] <= position < pos[s + 1], skipping empty segments.
__device__ inline int64_t tcc_segment_of(const int64_t* pos, int64_t segments, int64_t position) {
  int64_t low = 0, high = segments;
  while (high - low > 1) {
    int64_t middle = low + (high - low) / 2;
    if (pos[middle] <= position) low = middle; else high = middle;
  }
  return low;
}

// The first position in [begin, end) of a sorted coordinate segment whose
// coordinate is at least `coordinate` (end when there is none).
__device__ inline int64_t tcc_lower_bound(const int32_t* crd, int64_t begin, int64_t end, int64_t coordinate) {
  while (begin < end) {
    int64_t middle = begin + (end - begin) / 2;
    if (crd[middle] < coordinate) begin = middle + 1; else end = middle;
  }
  return begin;
}

// The running thread's index in the launch (its copy of a workspace).
__device__ inline int64_t tcc_gpu_thread_index() { return (int64_t)blockIdx.x * blockDim.x + threadIdx.x; }
// The threads in the launch: the stride between a thread's entries of its
// copy (copies interleaved, so a warp's lanes touch consecutive addresses).
__device__ inline int64_t tcc_gpu_thread_count() { return (int64_t)gridDim.x * blockDim.x; }

// A GPU thread's sparse workspace (gpu_sparse_workspace.cpp): its n
// coordinates sorted in place with their values (heapsort: no recursion,
// no extra memory), then the values of repeated coordinates added; returns
// the entries left.
template <typename T>
__device__ static inline void tcc_sparse_workspace_sift(int32_t* crd, T* vals, int64_t root, int64_t n) {
  for (int64_t child = 2 * root + 1; child < n; root = child, child = 2 * root + 1) {
    if (child + 1 < n && crd[child + 1] > crd[child]) child++;
    if (crd[root] >= crd[child]) return;
    int32_t c = crd[root]; crd[root] = crd[child]; crd[child] = c;
    T v = vals[root]; vals[root] = vals[child]; vals[child] = v;
  }
}
template <typename T> __device__ static inline int64_t tcc_gpu_sparse_workspace_merge(int32_t* crd, T* vals, int64_t n) {
  for (int64_t root = n / 2 - 1; root >= 0; root--) tcc_sparse_workspace_sift(crd, vals, root, n);
  for (int64_t end = n - 1; end > 0; end--) {
    int32_t c = crd[0]; crd[0] = crd[end]; crd[end] = c;
    T v = vals[0]; vals[0] = vals[end]; vals[end] = v;
    tcc_sparse_workspace_sift(crd, vals, 0, end);
  }
  int64_t kept = 0;
  for (int64_t e = 0; e < n; e++) {
    if (kept > 0 && crd[kept - 1] == crd[e]) {
      vals[kept - 1] += vals[e];
    } else {
      crd[kept] = crd[e];
      vals[kept] = vals[e];
      kept++;
    }
  }
  return kept;
}

// The sum of `value` over the 32 lanes of a warp, in every lane.
template <typename T> __device__ static inline T tcc_warp_sum(T value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The sum of `value` over a block's threads, in every thread: warp sums,
// then the warps' sums through shared memory. Every thread of the block
// must call it (blockDim.x a multiple of 32).
template <typename T> __device__ static inline T tcc_block_sum(T value) {
  __shared__ T warpSums[32];
  value = tcc_warp_sum(value);
  __syncthreads();  // the previous call's readers are done with warpSums
  if (threadIdx.x % 32 == 0) warpSums[threadIdx.x / 32] = value;
  __syncthreads();
  T total = T(0);
  for (unsigned warp = 0; warp < blockDim.x / 32; ++warp) total += warpSums[warp];
  return total;
}
)tcc";

// Kernels need no system header: NVRTC compiles them as they are.
// Host code reads single entries of device arrays (a pos range's ends).
// The device buffers a launcher allocates are held in slots: each freed
// where the launcher frees it, and, where it returns early (a CUDA error),
// when it returns, after the kernels that use them.
constexpr const char* kHostHelpers = R"tcc(
template <int N> struct tcc_device_buffers {
  void* held[N] = {};
  void hold(int slot, void* buffer) { held[slot] = buffer; }
  cudaError_t release(int slot) {
    cudaError_t done = cudaDeviceSynchronize();
    cudaError_t freed = cudaFree(held[slot]);
    held[slot] = 0;
    return done != cudaSuccess ? done : freed;
  }
  ~tcc_device_buffers() {
    bool any = false;
    for (int k = 0; k < N; ++k) any = any || held[k];
    if (!any) return;
    (void)cudaDeviceSynchronize();
    for (int k = 0; k < N; ++k)
      if (held[k]) (void)cudaFree(held[k]);
  }
};
static bool tcc_device_read_failed = false;
template <typename T> static inline T tcc_read_device(const T* array, int64_t index) {
  T value = T();
  if (cudaMemcpy(&value, array + index, sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) tcc_device_read_failed = true;
  return value;
}
// a * b, or the int64 limit on the product's side where it would overflow
// (the products of the rules that pick a kernel per input; the launcher's
// saturatingMul in tcc/lowering/gpu_kernels.h; a template, as
// tcc_longest_segment: a unit that never calls it compiles without a warning).
template <typename = void> static inline int64_t tcc_saturating_mul(int64_t a, int64_t b) {
  const int64_t most = 9223372036854775807LL, least = -most - 1;
  if (a > 0 ? (b > 0 ? a > most / b : b < least / a) : (b > 0 ? a < least / b : (a != 0 && b < most / a)))
    return (a < 0) != (b < 0) ? least : most;
  return a * b;
}
// The most positions any of `segments` segments of a device pos array
// holds (the longest row), from a host copy of the array (a template, as
// tcc_read_device: a unit that never calls it compiles without a warning).
template <typename T> static inline int64_t tcc_longest_segment(const T* pos, int64_t segments) {
  if (segments <= 0) return 0;
  T* copy = new T[segments + 1];
  int64_t longest = 0;
  if (cudaMemcpy(copy, pos, sizeof(T) * (segments + 1), cudaMemcpyDeviceToHost) != cudaSuccess) {
    tcc_device_read_failed = true;
  } else {
    for (int64_t s = 0; s < segments; ++s) longest = copy[s + 1] - copy[s] > longest ? copy[s + 1] - copy[s] : longest;
  }
  delete[] copy;
  return longest;
}
)tcc";

constexpr const char* kNvrtcTypes = R"tcc(
typedef int int32_t;
typedef long long int64_t;
typedef unsigned short uint16_t;
)tcc";

class CudaKernelPrinter : public CLikePrinter {
 public:
  CudaKernelPrinter(std::ostream& out, FloatingPointMode floatingPoint)
      : CLikePrinter(out), roundedProducts_(floatingPoint == FloatingPointMode::Strict) {}
  using CLikePrinter::visit;

  // fp strict: a floating-point product is __fmul_rn / __dmul_rn, which
  // the CUDA compilers never merge with an add into an FMA, whatever
  // --fmad (nvcc's default contracts `s += a * b`, across statements too).
  void visit(const Binary* op) override {
    const char* product = roundedProducts_ && op->op == BinaryOp::Mul ? roundedProductOf(op->a, op->b) : nullptr;
    if (!product) {
      CLikePrinter::visit(op);
      return;
    }
    out_ << product << "(";
    op->a.accept(*this);
    out_ << ", ";
    op->b.accept(*this);
    out_ << ")";
  }

  void visit(const Assign* op) override {
    const char* product = roundedProducts_ && op->hasCompound && op->compound == BinaryOp::Mul
                              ? roundedProductOf(op->var, op->value)
                              : nullptr;
    if (!product) {
      CLikePrinter::visit(op);
      return;
    }
    indent();
    op->var.accept(*this);
    out_ << " = " << product << "(";
    op->var.accept(*this);
    out_ << ", ";
    op->value.accept(*this);
    out_ << ");\n";
  }

  void printKernel(const GpuKernel& kernel) {
    const auto* loop = kernel.loop.as<For>();
    out_ << "// kernel: " << (loop->comment.empty() ? "the loop" : loop->comment) << ", over "
         << toString(loop->loopKind) << "s\n";
    out_ << "extern \"C\" __global__ void __launch_bounds__(" << kernel.threadsPerBlock << ") " << kernel.name << "(";
    for (size_t k = 0; k < kernel.parameters.size(); ++k) {
      const Expr& parameter = kernel.parameters[k];
      Type type = parameter.type();
      if (k) out_ << ", ";
      if (type.isPointer) {
        out_ << (kernel.readOnly[k] ? "const " : "") << cTypeName(type.element()) << "* __restrict__ ";
      } else {
        out_ << cTypeName(type) << " ";
      }
      parameter.accept(*this);
    }
    out_ << ") {\n";
    depth_ = 1;
    kernel.loop.accept(*this);
    out_ << "}\n";
    depth_ = 0;
  }

  void visit(const For* op) override {
    LoopKind enclosing = units_.empty() ? LoopKind::Serial : units_.back();
    bool gpu = isGpuLoop(op->loopKind);
    const bool reduced = op->loopKind == LoopKind::GpuThread &&
                         (enclosing == LoopKind::GpuWarp || enclosing == LoopKind::GpuBlock) && !op->reductions.empty();
    // Every lane holds the same total before the loop (zero, or, inside a
    // serial loop of the warp or block, the sums of the iterations before):
    // each lane's part starts from zero and the lanes' sum is added to that
    // total, not the total summed again, times the lanes.
    if (reduced) {
      indent();
      out_ << "{\n";
      ++depth_;
      for (const auto& reduction : op->reductions) {
        indent();
        out_ << cTypeName(reduction.var.type()) << " ";
        reduction.var.accept(*this);
        out_ << "_before = ";
        reduction.var.accept(*this);
        out_ << ";\n";
        indent();
        reduction.var.accept(*this);
        out_ << " = 0;\n";
      }
    }
    if (gpu) units_.push_back(op->loopKind);
    CLikePrinter::visit(op);
    if (gpu) units_.pop_back();
    if (reduced) {
      for (const auto& reduction : op->reductions) {
        indent();
        reduction.var.accept(*this);
        out_ << " = ";
        reduction.var.accept(*this);
        out_ << (enclosing == LoopKind::GpuWarp ? "_before + tcc_warp_sum(" : "_before + tcc_block_sum(");
        reduction.var.accept(*this);
        out_ << ");\n";
      }
      --depth_;
      indent();
      out_ << "}\n";
    }
  }

  void visit(const Declare* op) override {
    if (op->var.type().isPointer) threadCopies_.insert(op->var.as<Var>()->name);
    CLikePrinter::visit(op);
  }

  // A warp or block that is not split among its threads computes the same
  // values in every thread; one thread stores them. Each thread stores to
  // its own copy of a workspace (a pointer the kernel declares), which it
  // reads later.
  void visit(const Store* op) override {
    LoopKind unit = units_.empty() ? LoopKind::GpuThread : units_.back();
    const auto* buffer = op->buffer.as<Var>();
    if (unit == LoopKind::GpuThread || (buffer && threadCopies_.count(buffer->name))) {
      CLikePrinter::visit(op);
      return;
    }
    indent();
    out_ << (unit == LoopKind::GpuWarp ? "if (threadIdx.x % 32 == 0) {\n" : "if (threadIdx.x == 0) {\n");
    ++depth_;
    CLikePrinter::visit(op);
    --depth_;
    indent();
    out_ << "}\n";
  }

 protected:
  // No DSL program gets here with a loop on CPU threads or in vector lanes:
  // lowering for the cuda target refuses a CPUThread, CPUVector or
  // DefaultUnit parallelize at the command (requireCpuTarget), and every
  // other such loop (a per-thread workspace's merge, threads owning ranges,
  // rows in chunks) is made only under a loop that parallelize asked for.
  void printLoopAnnotations(const For* op) override {
    if (op->loopKind == LoopKind::Parallel || op->loopKind == LoopKind::Vectorized) {
      const auto* var = op->var.as<Var>();
      throw std::logic_error(std::string("internal: the CUDA printer was given a loop ") +
                             (op->loopKind == LoopKind::Parallel ? "on CPU threads" : "in CPU vector lanes") +
                             " over " + (var ? var->name : std::string("?")) + ", which lowering for the cuda "
                             "target never makes (it refuses CPU parallel units at their parallelize); a compiler bug");
    }
    if (op->unrollFactor > 0) {
      indent();
      out_ << "#pragma unroll " << op->unrollFactor << "\n";
    }
  }

  void printLoopHeader(const For* op) override {
    if (!isGpuLoop(op->loopKind)) {
      printSerialLoopHeader(op);
      return;
    }
    // units_ already holds this loop; the one before it encloses it.
    LoopKind enclosing = units_.size() >= 2 ? units_[units_.size() - 2] : LoopKind::Serial;
    std::string start, step;
    switch (op->loopKind) {
      case LoopKind::GpuBlock: start = "blockIdx.x"; step = "gridDim.x"; break;
      case LoopKind::GpuWarp:
        if (enclosing == LoopKind::GpuBlock) {
          start = "threadIdx.x / 32";
          step = "blockDim.x / 32";
        } else {
          start = "(blockIdx.x * blockDim.x + threadIdx.x) / 32";
          step = "gridDim.x * (blockDim.x / 32)";
        }
        break;
      default:
        if (enclosing == LoopKind::GpuWarp) {
          start = "threadIdx.x % 32";
          step = "32";
        } else if (enclosing == LoopKind::GpuBlock) {
          start = "threadIdx.x";
          step = "blockDim.x";
        } else {
          start = "blockIdx.x * blockDim.x + threadIdx.x";
          step = "gridDim.x * blockDim.x";
        }
        break;
    }
    std::string type = cTypeName(op->var.type());
    indent();
    out_ << "for (" << type << " ";
    op->var.accept(*this);
    out_ << " = ";
    op->begin.accept(*this);
    out_ << " + (" << type << ")(" << start << "); ";
    op->var.accept(*this);
    out_ << " < ";
    op->end.accept(*this);
    out_ << "; ";
    op->var.accept(*this);
    out_ << " += (" << type << ")(" << step << ")) {\n";
  }

  void printAtomicStore(const Store* op) override {
    if (!op->accumulate) {
      printPlainStore(op);
      return;
    }
    indent();
    // CUDA's 64-bit integer atomicAdd is unsigned; two's complement adds
    // signed values to the same bits.
    const bool int64 = op->buffer.type().kind == ScalarKind::Int64;
    out_ << (int64 ? "atomicAdd((unsigned long long*)&" : "atomicAdd(&");
    op->buffer.accept(*this);
    out_ << "[";
    op->index.accept(*this);
    out_ << (int64 ? "], (unsigned long long)(" : "], ");
    op->value.accept(*this);
    out_ << (int64 ? "));\n" : ");\n");
  }

 private:
  // The intrinsic a product of `a` and `b` rounds through, as C's usual
  // conversions type it (double where either is); none for integers.
  static const char* roundedProductOf(const Expr& a, const Expr& b) {
    const ScalarKind x = a.type().kind, y = b.type().kind;
    if (a.type().isPointer || b.type().isPointer) return nullptr;
    if (x == ScalarKind::Float64 || y == ScalarKind::Float64) return "__dmul_rn";
    if (x == ScalarKind::Float32 || y == ScalarKind::Float32) return "__fmul_rn";
    return nullptr;
  }

  const bool roundedProducts_;
  std::vector<LoopKind> units_;
  std::set<std::string> threadCopies_;
};

// The host launcher nvcc compiles: the usual entry point, taking tensors
// whose arrays live in device memory.
class CudaHostPrinter : public CLikePrinter {
 public:
  CudaHostPrinter(std::ostream& out, const GpuFunction& function) : CLikePrinter(out), function_(function) {}
  using CLikePrinter::visit;

  void printFunction() {
    const Function& host = function_.host;
    out_ << "extern \"C\" int32_t " << host.name << "(tcc_tensor** tcc_tensors) {\n";
    depth_ = 1;
    for (size_t i = 0; i < host.parameters.size(); ++i) {
      const auto& parameter = host.parameters[i];
      indent();
      out_ << "tcc_tensor* " << parameter.name << " = tcc_tensors[" << i << "];"
           << (parameter.isOutput ? "  // output" : "") << "\n";
    }
    out_ << "\n";
    indent();
    out_ << "tcc_device_read_failed = false;\n";
    if (int slots = deviceBufferSlots(); slots > 0) {
      indent();
      out_ << "tcc_device_buffers<" << slots << "> tcc_buffers;  // freed on every return\n";
    }
    host.body.accept(*this);
    indent();
    out_ << "if (cudaDeviceSynchronize() != cudaSuccess || tcc_device_read_failed) return 2;\n";
    indent();
    out_ << "return 0;\n}\n";
    depth_ = 0;
  }

  // A dense workspace that GPU loops share, in device memory for the call;
  // a sparse output's array, handed to the output (the caller frees it).
  void visit(const Allocate* op) override {
    // (An entry more: no allocation of 0 bytes.)
    std::string bytes = "sizeof(" + cTypeName(op->buffer.type().element()) + ") * ((size_t)(" + hostText(op->count) +
                        ") + 1)";
    std::string buffer = hostText(op->buffer);
    if (function_.outputArrays.count(buffer)) {
      indent();
      out_ << "if (cudaMalloc((void**)&" << buffer << ", " << bytes << ") != cudaSuccess) return 2;  // the output's\n";
      if (op->zeroInitialize) {
        indent();
        out_ << "if (cudaMemset(" << buffer << ", 0, " << bytes << ") != cudaSuccess) return 2;\n";
      }
      return;
    }
    int slot = nextSlot_++;
    slotOf_[buffer] = slot;
    indent();
    out_ << "if (cudaMalloc((void**)&" << buffer << ", " << bytes << ") != cudaSuccess) return 2;\n";
    indent();
    out_ << "tcc_buffers.hold(" << slot << ", " << buffer << ");\n";
    if (!op->zeroInitialize) return;  // (every entry written before it is read)
    indent();
    out_ << "if (cudaMemset(" << buffer << ", 0, " << bytes << ") != cudaSuccess) return 2;\n";
  }

  // (Once the kernels are done with it: release synchronizes first.)
  void visit(const Free* op) override {
    std::string buffer = hostText(op->buffer);
    auto slot = slotOf_.find(buffer);
    if (slot == slotOf_.end()) throw LoweringError("internal: the CUDA launcher frees " + buffer + ", never allocated");
    indent();
    out_ << "if (tcc_buffers.release(" << slot->second << ") != cudaSuccess) return 2;  // " << buffer << "\n";
  }

  // The host reads a device array's entry with a copy.
  void visit(const Load* op) override {
    out_ << "tcc_read_device(";
    op->buffer.accept(*this);
    out_ << ", ";
    op->index.accept(*this);
    out_ << ")";
  }

  void visit(const Intrinsic* op) override {
    const GpuIntrinsicCall* call = function_.intrinsicCall(op);
    const IntrinsicLowering* entry = intrinsicLowering(op->name);
    if (!call || !entry || !entry->cuda.hostStatement)
      throw LoweringError("intrinsic '" + op->name + "' has no CUDA expansion");
    indent();
    out_ << entry->cuda.hostStatement(*op, call->prefix) << "\n";
  }

  void visit(const Evaluate* op) override {
    const auto* call = op->value.as<Call>();
    const GpuKernel* kernel = call ? function_.kernelNamed(call->name) : nullptr;
    if (!kernel) {
      CLikePrinter::visit(op);
      return;
    }
    const auto* loop = kernel->loop.as<For>();
    indent();
    out_ << "{\n";
    ++depth_;
    indent();
    out_ << "int64_t tcc_extent = (int64_t)(" << hostText(loop->end) << ") - (int64_t)(" << hostText(loop->begin)
         << ");\n";
    indent();
    out_ << "if (tcc_extent > 0) {\n";
    ++depth_;
    indent();
    out_ << "int64_t tcc_blocks = (tcc_extent + " << kernel->iterationsPerBlock() - 1 << ") / "
         << kernel->iterationsPerBlock() << ";\n";
    indent();
    out_ << "if (tcc_blocks > 2147483647LL) tcc_blocks = 2147483647LL;\n";
    std::vector<int> scratchSlots;
    if (!kernel->scratch.empty()) scratchSlots = printScratchAllocation(*kernel);
    indent();
    out_ << kernel->name << "<<<(unsigned)tcc_blocks, " << kernel->threadsPerBlock << ">>>(";
    for (size_t k = 0; k < kernel->parameters.size(); ++k) {
      if (k) out_ << ", ";
      kernel->parameters[k].accept(*this);
    }
    out_ << ");\n";
    indent();
    out_ << "if (cudaGetLastError() != cudaSuccess) return 2;\n";
    for (size_t k = 0; k < kernel->scratch.size(); ++k) {
      // (Once the kernel is done with it.)
      indent();
      out_ << "if (tcc_buffers.release(" << scratchSlots[k] << ") != cudaSuccess) return 2;  // ";
      kernel->parameters[kernel->scratch[k].parameter].accept(*this);
      out_ << "\n";
    }
    --depth_;
    indent();
    out_ << "}\n";
    --depth_;
    indent();
    out_ << "}\n";
  }

 private:
  // The GPU threads' copies of workspaces: fewer blocks where they would
  // pass the limit (the kernel's loops stride over the rest), then one
  // buffer per workspace for the launch's threads.
  std::vector<int> printScratchAllocation(const GpuKernel& kernel) {
    indent();
    out_ << "int64_t tcc_scratch_bytes_per_thread = 0";
    for (const auto& scratch : kernel.scratch)
      out_ << " + (int64_t)(" << hostText(scratch.entriesPerThread) << ") * " << scratch.bytesPerEntry();
    out_ << ";\n";
    indent();
    out_ << "if (tcc_scratch_bytes_per_thread > 0) {\n";
    ++depth_;
    indent();
    out_ << "int64_t tcc_scratch_blocks = " << kGpuScratchBytesLimit << "LL / tcc_scratch_bytes_per_thread / "
         << kernel.threadsPerBlock << ";\n";
    indent();
    out_ << "if (tcc_scratch_blocks < 1) return " << kGpuScratchTooLargeStatus << ";\n";
    indent();
    out_ << "if (tcc_blocks > tcc_scratch_blocks) tcc_blocks = tcc_scratch_blocks;\n";
    --depth_;
    indent();
    out_ << "}\n";
    std::vector<int> slots;
    for (const auto& scratch : kernel.scratch) {
      const Expr& buffer = kernel.parameters[scratch.parameter];
      std::string name = hostText(buffer);
      slots.push_back(nextSlot_++);
      indent();
      out_ << cTypeName(buffer.type()) << " " << name << " = 0;\n";
      indent();
      out_ << "if (cudaMalloc((void**)&" << name << ", (size_t)(tcc_blocks * " << kernel.threadsPerBlock
           << " * (int64_t)(" << hostText(scratch.entriesPerThread) << ") * " << scratch.bytesPerEntry()
           << " + 1)) != cudaSuccess) return 2;\n";
      indent();
      out_ << "tcc_buffers.hold(" << slots.back() << ", " << name << ");\n";
    }
    return slots;
  }

  // One slot per buffer the host allocates (host code has no loops: each
  // allocation runs at most once) and per GPU thread scratch buffer.
  int deviceBufferSlots() const {
    struct CountAllocations : IRVisitor {
      using IRVisitor::visit;
      int count = 0;
      void visit(const Allocate* op) override {
        ++count;
        IRVisitor::visit(op);
      }
    } allocations;
    function_.host.body.accept(allocations);
    int slots = allocations.count;
    for (const auto& kernel : function_.kernels) slots += static_cast<int>(kernel.scratch.size());
    return slots;
  }

  // An expression as the host evaluates it: a device array's entry (a
  // compressed top level's B1_pos[0], say) read with a copy, never
  // dereferenced on the host.
  std::string hostText(const Expr& expr) {
    std::ostringstream out;
    CudaHostPrinter printer(out, function_);
    expr.accept(printer);
    return out.str();
  }

  const GpuFunction& function_;
  int nextSlot_ = 0;
  std::map<std::string, int> slotOf_;
};

void printKernels(std::ostream& out, const std::vector<GpuFunction>& functions, FloatingPointMode floatingPoint) {
  for (const auto& function : functions) {
    for (const auto& kernel : function.kernels) {
      CudaKernelPrinter printer(out, floatingPoint);
      printer.printKernel(kernel);
      out << "\n";
    }
    for (const auto& call : function.intrinsics) {
      const IntrinsicLowering* entry = intrinsicLowering(call.op->name);
      if (entry && entry->cuda.deviceCode) out << entry->cuda.deviceCode(*call.op, call.prefix) << "\n";
    }
  }
}

void printIntrinsicHostDefinitions(std::ostream& out, const std::vector<GpuFunction>& functions) {
  for (const auto& function : functions)
    for (const auto& call : function.intrinsics) {
      const IntrinsicLowering* entry = intrinsicLowering(call.op->name);
      if (entry && entry->cuda.hostDefinitions) out << entry->cuda.hostDefinitions(*call.op, call.prefix) << "\n";
    }
}

class CudaCodeGenerator : public CodeGenerator {
 public:
  explicit CudaCodeGenerator(FloatingPointMode floatingPoint) : floatingPoint_(floatingPoint) {}
  std::string emit(const std::vector<Function>& functions) const override {
    std::vector<GpuFunction> split;
    for (const auto& function : functions) split.push_back(splitIntoKernels(function));
    return emitCudaUnit(split, floatingPoint_);
  }
  TargetKind target() const override { return TargetKind::Cuda; }

 private:
  FloatingPointMode floatingPoint_;
};

// The unit's line on its floating-point mode.
std::string floatingPointLine(FloatingPointMode floatingPoint) {
  return floatingPoint == FloatingPointMode::Strict
             ? "// Floating-point mode: strict. Device products are __fmul_rn/__dmul_rn, never contracted into FMA\n"
               "// whatever --fmad says; the intrinsics' own kernels keep their numerics.\n"
             : "// Floating-point mode: fast (products may contract into FMA).\n";
}

}  // namespace

std::string emitCudaUnit(const std::vector<GpuFunction>& functions, FloatingPointMode floatingPoint) {
  std::ostringstream out;
  out << "// Generated by tcc for CUDA. Self-contained: compile with `nvcc -arch=sm_90 -c`.\n"
      << "// Each entry point takes tcc_tensor structs whose arrays are device pointers,\n"
      << "// launches its kernels and waits for them; it returns 0, or 2 when CUDA fails.\n"
      << floatingPointLine(floatingPoint) << "#include <stdint.h>\n#include <cuda_runtime.h>\n\n"
      << abiText() << kDeviceHelpers << kHostHelpers << "\n";
  printKernels(out, functions, floatingPoint);
  printIntrinsicHostDefinitions(out, functions);
  for (const auto& function : functions) {
    CudaHostPrinter printer(out, function);
    printer.printFunction();
    out << "\n";
  }
  return out.str();
}

std::string emitCudaKernels(const std::vector<GpuFunction>& functions, FloatingPointMode floatingPoint) {
  std::ostringstream out;
  out << "// Generated by tcc for NVRTC: the kernels alone.\n"
      << floatingPointLine(floatingPoint) << kNvrtcTypes << kDeviceHelpers << "\n";
  printKernels(out, functions, floatingPoint);
  return out.str();
}

std::unique_ptr<CodeGenerator> makeCudaCodeGenerator(FloatingPointMode floatingPoint) {
  return std::make_unique<CudaCodeGenerator>(floatingPoint);
}

}  // namespace tcc::lowering
