// What a case's outputs should be. The dense reference evaluator is the
// oracle today; an MLIR oracle (export the program, run it through MLIR's
// sparsifier) plugs in beside it by implementing the same interface and
// returning nullopt for programs it cannot export.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "tcc/runtime/coo.h"
#include "tcc/tcc.h"
#include "tcc/test/reference.h"

namespace tcc::differential {

using Outputs = std::map<std::string, test::DenseArray>;

class Oracle {
 public:
  virtual ~Oracle() = default;
  virtual std::string name() const = 0;
  // Every tensor the program writes, densely; nullopt when this oracle
  // cannot evaluate the program (the checker then skips it).
  virtual std::optional<Outputs> evaluate(const Program& program,
                                          const std::map<std::string, rt::Coo>& inputs) const = 0;
};

class ReferenceOracle : public Oracle {
 public:
  std::string name() const override { return "reference"; }
  std::optional<Outputs> evaluate(const Program& program, const std::map<std::string, rt::Coo>& inputs) const override;
};

// The program exported with --emit mlir and run through MLIR 16's
// sparsifier (test/support's MLIR oracle): an independent compiler. Takes
// the programs MLIR 16 can express and, when its tools are installed,
// returns nullopt for the rest; a tool that fails is reported on stderr and
// the case is left to the other oracles.
class MlirOracle : public Oracle {
 public:
  std::string name() const override { return "MLIR 16"; }
  std::optional<Outputs> evaluate(const Program& program, const std::map<std::string, rt::Coo>& inputs) const override;
  static bool available();
};

}  // namespace tcc::differential
