// The table of intrinsics: one entry per intrinsic, its recognition and
// each backend's expansion (see tcc/lowering/intrinsics.h).
#include "nm_spmm.h"
#include "permanent.h"
#include "tca_spmm.h"

namespace tcc::lowering {

const std::vector<IntrinsicLowering>& intrinsicLowerings() {
  static const std::vector<IntrinsicLowering> table = {
      {kPermanentIntrinsic, recognizePermanent, explainPermanent, cppPermanentStatement,
       {nullptr, cudaPermanentDeclarations, cudaPermanentStatement}},
      {kNmSpmmIntrinsic, recognizeNmSpmm, explainNmSpmm, nullptr, kNmSpmmCudaExpansion},
      {kTcaSpmmIntrinsic, recognizeTcaSpmm, explainTcaSpmm, nullptr,
       {tcaSpmmDeviceCode, tcaSpmmHostDefinitions, tcaSpmmHostStatement}},
  };
  return table;
}

}  // namespace tcc::lowering
