// Runs generated cases, in this process or one child process per case (so
// a crashing kernel is a finding, not the end of the run), and turns every
// finding into a minimized regression file.
#pragma once

#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "case_model.h"
#include "checker.h"

namespace tcc::differential {

struct CampaignOptions {
  bool isolate = false;           // fork per case
  int timeoutSeconds = 120;       // per isolated case
  bool minimizeFindings = true;
  // Known open bugs are recognized on the case as generated; minimizing
  // them too costs time that finding new bugs could use.
  bool minimizeKnownBugs = false;
  int minimizeAttempts = 500;
  std::string saveDir;            // "" saves nothing
  std::vector<const Oracle*> oracles;
  // Cuda-target cases are compiled (NVRTC) but not run, even on a GPU.
  bool compileOnly = false;
};

// checkProgram in a child process: a crash or a timeout is a verdict
// (Outcome::Crash). Call it before this process has run an OpenMP kernel
// or used the GPU (a CUDA context does not survive a fork).
Verdict checkProgramIsolated(const std::string& programText, const std::map<std::string, rt::Coo>& inputs,
                             const std::vector<const Oracle*>& oracles, int timeoutSeconds,
                             bool compileOnly = false);

// Checks one case with the campaign's oracles, isolated when asked.
Verdict checkCase(const Case& c, const CampaignOptions& options);

struct Finding {
  Case generated;
  Verdict verdict;
  std::optional<std::string> knownBug;
  std::optional<Case> minimized;
  Verdict minimizedVerdict;
  std::string savedPath;
};

// Classifies, minimizes and saves a case whose verdict is a finding
// (mismatch, internal error, crash or invalid case).
Finding investigate(const Case& c, const Verdict& verdict, const CampaignOptions& options);

bool isFinding(Outcome outcome);

}  // namespace tcc::differential
