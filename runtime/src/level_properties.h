// Checking that a tensor's storage keeps the promises its format declares.
// Generated kernels trust them: a unique level is iterated without merging
// repeats (a repeat would be stored over instead of added), an ordered one
// is co-iterated by merging. Data that breaks them gives wrong numbers, so
// it is refused instead.
#pragma once

#include "tcc/runtime/tensor.h"

namespace tcc::rt::detail {

// Coordinates count as repeated or out of order only among positions whose
// ancestors hold the same coordinates (one segment of the level, or, below
// a nonunique level, the segments of all its positions that share a
// coordinate). So for COO, {compressed(nonunique), singleton}, the
// singleton level promises that no (i, j) repeats and that j never
// decreases within the run of one i.
//
// Assumes the storage is well formed (Tensor::validate's structural
// checks). Runs in O(positions); an unordered level also takes one stamp
// per coordinate, or a hash table where the level is far wider than what
// it stores or lies below a nonunique level.
// Throws std::invalid_argument naming the level and the first offending
// position with its coordinates.
void checkLevelProperties(const Tensor& tensor);

}  // namespace tcc::rt::detail
