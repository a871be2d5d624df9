// The chunk driver over a RangeEngine: what the single-process driver in
// permanent.cpp does with OpenMP threads (resume from a checkpoint, report
// progress, save checkpoints, stop on Ctrl-C or a chunk limit, add the
// partials in chunk order, compensated), for an engine that takes chunks in
// batches, such as a GPU's. The GPU permanent (permanent/gpu/) runs on it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "range_engine.h"
#include "tcc/runtime/permanent.h"

namespace tcc::rt::permanent {

// The sum of every chunk's partial sum, computed by `engine` in batches of
// engine.parallelism() chunks; `mode` names the computation in checkpoints
// (a checkpoint resumes only a run of the same mode and matrix). Throws
// PermanentError when the run stops before the end (with the checkpoint's
// state in the message).
double sumOfChunksOnEngine(const SortedColumnMatrix& matrix, const std::string& mode, const PermanentOptions& options,
                           RangeEngine<double>& engine);

// Makes the engine for a matrix already equilibrated and known to have a
// perfect matching.
using FloatEngineFactory = std::function<std::unique_ptr<RangeEngine<double>>(const SortedColumnMatrix& matrix)>;

// The float permanent of `matrix`: 1 for n = 0, 0 without a perfect
// matching, else the Gray-code sum of the equilibrated matrix computed on
// the engine `makeEngine` builds (over MPI ranks when a DistributedScope
// of several is open, each rank with its own engine). The engine sums (-1)^g prod_i x_i(g) with
// x as in gray_code_ryser.h for an order of the columns of its choosing:
// the permanent does not depend on it, but each chunk's partial sum does,
// so `mode` must name the order for checkpoints.
double floatPermanentOnEngine(SortedColumnMatrix matrix, const std::string& mode, const PermanentOptions& options,
                              const FloatEngineFactory& makeEngine);

// Makes the cpu target's float permanents (tcc_permanent) run on the
// engines `makeEngine` builds, under `mode`, instead of the CPU kernel's
// own column order; an empty mode restores that. A rank without a GPU in
// a cuda-target run over MPI computes this way in the GPU kernel's column
// order, so that its chunks are the GPU ranks' chunks. Process-wide: set
// it before the permanents run.
void overrideFloatEngine(std::string mode, FloatEngineFactory makeEngine);

// The options of the calling thread's innermost PermanentOptionsScope, or the defaults.
const PermanentOptions& currentPermanentOptions();

}  // namespace tcc::rt::permanent
