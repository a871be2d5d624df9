#include "tcc/test/random_schedule.h"

#include <algorithm>
#include <cctype>

namespace tcc::test {

namespace {

// parallelize(var, a GPU unit, a race strategy the cuda target may take).
std::string gpuParallelize(const std::string& var, std::mt19937& random) {
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random); };
  const char* unit = std::vector<const char*>{"GPUBlock", "GPUWarp", "GPUThread"}[pick(3)];
  const char* strategy = std::vector<const char*>{"NoRaces", "Atomics", "Temporary", "ParallelReduction"}[pick(4)];
  return "parallelize(" + var + ", " + unit + ", " + strategy + ")";
}

// Whether the expression's text reads `var` as an index: "A(i,j)" reads j.
bool readsIndex(const std::string& expression, const std::string& var) {
  auto isNamePart = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = expression.find(var); at != std::string::npos; at = expression.find(var, at + 1)) {
    bool startsName = at == 0 || !isNamePart(expression[at - 1]);
    bool endsName = at + var.size() == expression.size() || !isNamePart(expression[at + var.size()]);
    if (startsName && endsName && at > 0 && (expression[at - 1] == '(' || expression[at - 1] == ',' ||
                                             expression[at - 1] == ' '))
      return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> randomScheduleCommands(const ScheduleSpace& space, std::mt19937& random) {
  std::vector<std::string> loops = space.loops;
  std::vector<std::string> commands;
  if (loops.empty()) return commands;
  int fresh = 0;
  std::vector<std::string> precomputed;  // the sub-expressions precompute took
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random); };
  auto name = [&](const std::string& base) { return base + "_" + std::to_string(fresh++); };
  size_t length = 1 + pick(4);
  for (size_t c = 0; c < length; ++c) {
    size_t p = pick(loops.size());
    std::string var = loops[p];
    switch (pick(space.wideMix ? 12 : 7)) {
      case 0: case 1: {
        std::string outer = name(var + "o"), inner = name(var + "i");
        // GPU units: also a warp's or a block's width, so that a block's
        // thread loop has a constant trip count (its block size).
        int factor = space.gpuUnits ? std::vector<int>{1, 3, 4, 7, 32, 64, 256}[pick(7)]
                                    : std::vector<int>{1, 2, 3, 4, 7}[pick(5)];
        commands.push_back((pick(2) ? "split(" : "divide(") + var + ", " + outer + ", " + inner + ", " +
                           std::to_string(factor) + ")");
        loops[p] = inner;
        loops.insert(loops.begin() + static_cast<long>(p), outer);
        break;
      }
      case 2: {
        if (p + 1 >= loops.size()) break;
        std::string fused = name(space.fusedBase);
        commands.push_back("fuse(" + var + ", " + loops[p + 1] + ", " + fused + ")");
        loops[p] = fused;
        loops.erase(loops.begin() + static_cast<long>(p) + 1);
        break;
      }
      case 3: {
        if (loops.size() < 2) break;
        std::vector<std::string> chosen = loops;
        std::shuffle(chosen.begin(), chosen.end(), random);
        chosen.resize(2 + pick(std::min<size_t>(2, loops.size() - 1)));
        std::string text = "reorder(";
        for (size_t v = 0; v < chosen.size(); ++v) text += (v ? ", " : "") + chosen[v];
        commands.push_back(text + ")");
        std::vector<size_t> slots;
        for (size_t q = 0; q < loops.size(); ++q)
          if (std::find(chosen.begin(), chosen.end(), loops[q]) != chosen.end()) slots.push_back(q);
        for (size_t v = 0; v < chosen.size(); ++v) loops[slots[v]] = chosen[v];
        break;
      }
      case 4: {
        auto access = space.positionAccesses.find(var);
        if (access == space.positionAccesses.end()) break;
        std::string position = name(var + "pos");
        commands.push_back("pos(" + var + ", " + position + ", " + access->second + ")");
        loops[p] = position;
        break;
      }
      case 5: {
        if (space.gpuUnits) {
          commands.push_back(gpuParallelize(var, random));
          break;
        }
        const char* strategy = std::vector<const char*>{"NoRaces", "Atomics", "ParallelReduction"}[pick(3)];
        commands.push_back("parallelize(" + var + ", CPUThread, " + strategy + ")");
        break;
      }
      case 6: commands.push_back("unroll(" + var + ", 2)"); break;
      case 7: {
        auto size = space.sizes.find(var);
        if (size == space.sizes.end()) break;
        std::string bounded = name(var + "b");
        bool exact = pick(2);
        commands.push_back("bound(" + var + ", " + bounded + ", " + std::to_string(size->second + (exact ? 0 : 3)) +
                           (exact ? ", MaxExact)" : ", MaxConstraint)"));
        loops[p] = bounded;
        break;
      }
      case 8: {
        if (space.precomputable.empty()) break;
        std::string workspace = name(var + "w");
        const std::string& expression = space.precomputable[pick(space.precomputable.size())];
        commands.push_back("precompute(" + expression + ", " + var + ", " + workspace + ")");
        precomputed.push_back(expression);
        break;
      }
      case 9: commands.push_back(pick(4) ? "dense_workspace(" + var + ")" : "dense_workspace()"); break;
      case 10: {
        if (space.gpuUnits) {
          commands.push_back(gpuParallelize(var, random));
          break;
        }
        const char* unit = pick(3) ? "CPUThread" : "CPUVector";
        const char* strategy =
            std::vector<const char*>{"NoRaces", "Atomics", "Temporary", "ParallelReduction", "Workspace"}[pick(5)];
        commands.push_back("parallelize(" + var + ", " + unit + ", " + strategy + ")");
        break;
      }
      case 11: {
        // An insert-sort-merge workspace over the whole output, or from `var` on.
        const char* policy = std::vector<const char*>{"bucket", "hash", "coord", "map", "vector"}[pick(5)];
        std::string options = std::string("policy = ") + policy + (pick(2) ? ", pipeline = on" : "");
        commands.push_back("sparse_workspace(" + (pick(2) ? var + ", " : std::string()) + options + ")");
        break;
      }
    }
  }
  // The loops left, outermost first, mapped to the GPU: a thread per
  // iteration, or blocks or warps whose threads take the next loop.
  if (space.gpuUnits && pick(10) < 7) {
    size_t unit = pick(3);
    const char* outer = std::vector<const char*>{"GPUThread", "GPUBlock", "GPUWarp"}[unit];
    commands.push_back("parallelize(" + loops[0] + ", " + outer + ", NoRaces)");
    if (unit > 0 && loops.size() > 1 && pick(4) > 0) {
      const char* strategy = std::vector<const char*>{"NoRaces", "Atomics", "ParallelReduction", "Temporary"}[pick(4)];
      commands.push_back("parallelize(" + loops[1] + ", GPUThread, " + strategy + ")");
    }
  }
  if (space.severalPrecomputes && pick(2)) {
    std::vector<std::string> others;
    for (const auto& expression : space.precomputable)
      if (std::find(precomputed.begin(), precomputed.end(), expression) == precomputed.end())
        others.push_back(expression);
    std::shuffle(others.begin(), others.end(), random);
    others.resize(std::min(others.size(), precomputed.empty() ? size_t{2} : size_t{1}));
    for (const auto& expression : others) {
      // Over one of the statement's variables the expression reads, where
      // there is one; its workspace index renamed half the time.
      std::vector<std::string> read;
      for (const auto& var : space.loops)
        if (readsIndex(expression, var)) read.push_back(var);
      const std::vector<std::string>& from = read.empty() ? space.loops : read;
      std::string var = from[pick(from.size())];
      commands.push_back("precompute(" + expression + ", " + var + ", " + (pick(2) ? name(var + "w") : var) + ")");
    }
  }
  return commands;
}

}  // namespace tcc::test
