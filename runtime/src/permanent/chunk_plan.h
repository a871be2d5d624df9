// How a permanent's 2^(n-1) iterations are cut into chunks, the partial
// sums of chunks as checkpoint text, and the sum of all partials, in chunk
// order: shared by the single-process driver and the one over MPI ranks, so
// both give the same bits whatever ran which chunk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "gray_code_ryser.h"
#include "permanent_matrix.h"

namespace tcc::rt::permanent {

// 2^(n-1) iterations in 2^chunkBits chunks of a power-of-two size: at least
// 4096 chunks (or one per iteration), more once a chunk would pass 2^23
// iterations, at most 65536.
struct ChunkPlan {
  uint64_t iterations = 1;
  int64_t chunks = 1;
  uint64_t chunkSize = 1;
};

ChunkPlan planChunks(int n);

std::string int128Text(Int128 value);

// A partial sum as checkpoint text (hex float, or a decimal integer) and back.
std::string partialText(double value);
std::string partialText(Int128 value);
bool parsePartial(const std::string& text, double& value);
bool parsePartial(const std::string& text, Int128& value);

// Fills `partials` from the checkpoint at `path` when there is one and
// returns the chunks it holds; throws PermanentError for a checkpoint of
// another computation or a bad partial sum.
template <typename Sum>
std::vector<int64_t> resumeFromCheckpoint(const std::string& path, const SortedColumnMatrix& matrix,
                                          const char* mode, const ChunkPlan& plan, std::vector<Sum>& partials);

// The sum of the partials in chunk order: compensated (Neumaier) in
// floating point; exact, with overflow an error, for 128-bit integers.
double addInChunkOrder(const std::vector<double>& partials, int n);
Int128 addInChunkOrder(const std::vector<Int128>& partials, int n);

PermanentError overflowError(int n);

// A run that ended after `completed` of `chunks` chunks (interrupted or at
// the chunk limit), saying where its checkpoint is, if it has one.
PermanentError unfinishedRunError(int64_t completed, int64_t chunks, const std::string& checkpointPath);

}  // namespace tcc::rt::permanent
