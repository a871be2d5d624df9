// Lowering: concrete index notation -> one imperative IR function.
//
// The lowerer walks the CIN top-down. Each forall becomes a loop chosen from
// the merge lattice of the iterators over its index variable (a plain for
// loop over one compressed level or a dense range, or while-loops that
// co-iterate several sparse levels); where-statements become dense
// workspaces (allocated once, reset through their list of touched
// coordinates); assignments become loads and stores. Sparse outputs are
// assembled while computing: each compressed output level appends its
// coordinates in order, with amortised growth.
//
// Assumes: the statement is concrete and its loop order visits every
// sparse tensor's levels in storage order (concretizeForLowering makes
// sure of both); dense outputs arrive allocated and zeroed by the runtime.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "tcc/ir/imperative.h"
#include "tcc/ir/index_stmt.h"

namespace tcc::lowering {

class LoweringError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a kernel returns when a bound(...) of its schedule does not hold for
// the tensors it was given; 0 means success.
inline constexpr int kBrokenBoundStatus = 3;

struct LowerOptions {
  std::string functionName = "compute";
  // Assemble sparse outputs in a pass of their own (pos and crd only), then
  // compute the values into arrays of the exact size, instead of assembling
  // while computing.
  bool separateAssembly = false;
  // The CUDA target: loops parallelized over GPUBlock, GPUWarp or
  // GPUThread become Gpu loops (see gpu/plan_gpu_loop.cpp), which the CUDA
  // backend turns into kernels.
  bool cudaTarget = false;
};

// `parameters` lists the kernel's tensors in the order the entry point
// receives them; tensors written by `cin` that are not parameters are
// temporaries (workspaces).
ir::imp::Function lower(const ir::IndexStmt& cin, const std::vector<ir::TensorVar>& parameters,
                        const LowerOptions& options = {});

// Whether the lowerer can assemble an output stored in `format`: dense
// levels followed by unique compressed levels, in any mode order. Other
// formats are computed in the nearest supported one and converted.
bool isAssemblableOutputFormat(const ir::Format& format);
ir::Format nearestAssemblableFormat(const ir::Format& format);

}  // namespace tcc::lowering
