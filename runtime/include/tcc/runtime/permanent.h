// The sparse matrix permanent: the precompiled kernel behind `p = perm(A)`.
//
// SparsePerman (Kaya 2019; Elbek & Kaya's CPU baseline): Nijenhuis and
// Wilf's Gray-code form of Ryser's formula over the matrix's columns in CSC,
// the columns sorted by ascending nonzero count, a count of the zero row
// sums so the product is skipped while any is zero, and the 2^(n-1)
// iterations cut into chunks that OpenMP threads take one at a time, each
// with a private row-sum vector set up for its chunk's first iteration.
// Under mpirun, with a DistributedScope open, the chunks are shared over
// the ranks (tcc/runtime/distributed.h).
//
// Float mode sums in double precision. Exact mode (an integer result
// tensor) needs integer entries and accumulates in 128-bit integers; any
// overflow, there or in the result's type, is an error. n is at most 64.
//
// Generated kernels call tcc_permanent(); how a run reports progress,
// checkpoints and stops is set for the calling thread by a
// PermanentOptionsScope (the kernel ABI has no room for options).
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "tcc/runtime/abi.h"

namespace tcc::rt {

enum class ProgressMode {
  Off,
  Auto,  // on stderr, if it is a terminal, once a run has taken 3 seconds
  On,    // on stderr every second, and a summary line at the end
};

struct PermanentOptions {
  ProgressMode progress = ProgressMode::Auto;
  // Resume from this file if it holds a checkpoint of the same matrix, and
  // save the completed chunks there every few seconds, when stopped, and at
  // the end. Empty: no checkpoint.
  std::string checkpointPath;
  int threads = 0;          // 0: OpenMP's default
  int64_t chunkLimit = 0;   // > 0: stop, as Ctrl-C does, after completing this many chunks in this run
};

// The options of every permanent the calling thread computes while the
// scope lives; scopes nest.
class PermanentOptionsScope {
 public:
  explicit PermanentOptionsScope(PermanentOptions options);
  ~PermanentOptionsScope();
  PermanentOptionsScope(const PermanentOptionsScope&) = delete;
  PermanentOptionsScope& operator=(const PermanentOptionsScope&) = delete;

 private:
  const PermanentOptions* previous_;
  PermanentOptions options_;
};

// What tcc_permanent returns when it fails; tcc_permanent_last_error() says why.
inline constexpr int kPermanentFailedStatus = 4;

// The body of a C entry point: 0 when `body` returns, kPermanentFailedStatus
// with the reason in `lastError` when it throws (no exception crosses the ABI).
template <typename Body>
int permanentStatusOf(std::string& lastError, Body&& body) noexcept {
  lastError.clear();
  try {
    body();
    return 0;
  } catch (const std::exception& error) {
    lastError = error.what();
  } catch (...) {
    lastError = "perm: unknown failure";
  }
  return kPermanentFailedStatus;
}

}  // namespace tcc::rt

extern "C" {
// result: an order-0 tensor (float64 or float32: float mode; int64 or
// int32: exact mode); matrix: an order-2 tensor in any format.
int tcc_permanent(tcc_tensor* result, const tcc_tensor* matrix);
// The calling thread's last failure message ("" if none).
const char* tcc_permanent_last_error(void);
}
