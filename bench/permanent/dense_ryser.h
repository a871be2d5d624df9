// The peer: Nijenhuis and Wilf's Gray-code Ryser on the dense matrix, as
// a dense code would run it: every step updates all n row sums, no column
// ordering, no zero tracking, one thread.
#pragma once

#include <vector>

namespace tcc::bench {

double denseGrayCodeRyser(const std::vector<double>& rowMajor, int n);

}  // namespace tcc::bench
