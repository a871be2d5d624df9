// A tensor as the dense reference evaluator's array, for the GPU tests that
// hand it their inputs.
#pragma once

#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::test {

inline DenseArray denseOf(const rt::Coo& coo) {
  DenseArray array;
  array.dims.assign(coo.dims.begin(), coo.dims.end());
  array.values = rt::toDense(coo);
  return array;
}

}  // namespace tcc::test
