// Random compositions of scheduling commands, as DSL text. The generator
// tracks the loops each command leaves, so later commands name variables
// that earlier ones introduced; a composition may still be illegal, and
// the compiler must then refuse it with a located reason.
#pragma once

#include <map>
#include <random>
#include <string>
#include <vector>

namespace tcc::test {

struct ScheduleSpace {
  std::vector<std::string> loops;                       // the default loop order, outermost first
  std::map<std::string, std::string> positionAccesses;  // a variable a sparse level iterates -> the access pos takes
  // The wider mix (bound, precompute, dense_workspace, every race strategy,
  // vector loops); off, the generator draws exactly the original narrow mix.
  bool wideMix = false;
  std::map<std::string, int> sizes;        // dimension of each original variable, for bound
  std::vector<std::string> precomputable;  // sub-expressions precompute may take
  // The cuda target's units: parallelize draws GPUBlock, GPUWarp and
  // GPUThread (every race strategy the GPU has, and NoRaces) instead of CPU
  // units, and most schedules end by mapping the outermost loop (and, under
  // a block or warp, the next one) to the GPU. Off: the CPU mixes as above.
  bool gpuUnits = false;
  // Several precomputes in one statement: half the schedules end with one
  // or two precomputes of other sub-expressions than the schedule took
  // (two where it took none). Drawn last: off, a seed's schedule is
  // exactly the one it always gave; on, the same with them appended.
  bool severalPrecomputes = false;
  // The name a fuse's variable starts with; statements of one program
  // scheduled together each need their own (a command applies to the
  // statement that holds the variable it names).
  std::string fusedBase = "f";
};

// One command per element, in the order they apply.
std::vector<std::string> randomScheduleCommands(const ScheduleSpace& space, std::mt19937& random);

}  // namespace tcc::test
