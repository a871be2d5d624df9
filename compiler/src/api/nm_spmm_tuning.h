// Internal to the library: how the nm_spmm intrinsic's autotuner picks one
// of a shape's candidate plans from their timings. Pure: the timings come
// from callbacks (the host step times launches on the device; the tests
// give made-up times), so the choice is tested without a GPU.
//
// Each candidate gets one untimed launch, then a screen: one timed launch.
// One whose screen is not clearly slower than the best so far is sampled
// (the median of 5 samples of about 0.2 ms of launches, 3 where a launch
// takes over a millisecond). One whose screen is `screenAbove` slower but
// not `dropAtOnce` slower is screened once more (a sample of about 0.2 ms)
// and dropped only if that is still `dropAbove` slower than the best: one
// slow launch does not drop a plan (round 30 measured first launches up to
// 1.5x a plan's later ones). Then the candidates within `finalWithin` of
// the best (at most `finalists`) are timed again together, taking turns in
// each round, and the one with the lowest median of those rounds is
// chosen: the finalists are compared in the same state of the GPU, whose
// clock moves at its power cap (bench/nm_spmm/RESULTS.md, rounds 30-31).
// With a lead-in (`finalLeadIn`), each finalist's turn starts with that
// long of its own launches, untimed, the timed ones queued right behind:
// timed at the clock its own power draw sets rather than the one the
// finalist before it left (round 35 measures whether that matters).
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

namespace tcc::detail {

struct NmSpmmTuning {
  double screenAbove = 1.25;   // a screen this much slower than the best so far is screened again...
  double dropAbove = 1.10;     // ...and dropped if the second stays this much slower;
  double dropAtOnce = 2.0;     // one this much slower is dropped at once
  bool screenAgain = true;     // false: one slow screen drops a candidate (the tuner up to round 29)
  size_t finalists = 3;        // at most this many candidates timed again together (1: none)
  double finalWithin = 1.03;   // those within this factor of the best
  double finalLeadIn = 0;      // seconds of untimed launches before each finalist's timed turn (0: none)
  // For the host step: on the `graph` launch path, a candidate's launches
  // are timed as a call makes them, by replaying a graph recorded for it
  // (false: launch by launch, as the tuner up to round 34 timed them).
  bool timeGraphs = true;
};

// TCC_NM_SPMM_TUNER: words separated by commas, each changing the default:
// oneshot, the tuner up to round 29 (one screen, no final rounds); steps,
// the launches timed one by one on every path; lead or lead=MS, a lead-in
// of MS milliseconds (2 if not given) before each finalist's turn. Unset,
// empty or unknown words: the default.
NmSpmmTuning nmSpmmTuningNamed(const char* name);

struct NmSpmmCandidateTimes {
  std::vector<double> screens;  // seconds per launch of each screen
  std::vector<double> samples;  // seconds per launch of each sample (none: dropped by its screens)
  std::vector<double> rounds;   // seconds per launch in each final round (none: not a finalist)
  double seconds = std::numeric_limits<double>::infinity();  // what it is ranked by
};

struct NmSpmmTuned {
  size_t chosen = 0;
  std::vector<NmSpmmCandidateTimes> candidates;
  long long launches = 0;  // timed and untimed launches made
};

// Launches per timed sample for a launch of `seconds`: about 0.2 ms of work, 1-32 launches.
int nmSpmmLaunchesPerSample(double seconds);

// The median (the lower middle of an even count); infinity for none.
double nmSpmmMedian(std::vector<double> values);

// Picks one of `count` candidates (count >= 1). warmUp(i, launches): that
// many untimed launches of candidate i, back to back; one right before its
// screen (its first use of the candidate), and with a lead-in before each
// of its final turns. time(i, launches): seconds per launch of that many
// launches of candidate i, back to back.
NmSpmmTuned tuneNmSpmm(size_t count, const std::function<void(size_t, int)>& warmUp,
                       const std::function<double(size_t, int)>& time, const NmSpmmTuning& tuning = {});

// The candidates in the order the tuning ranked them: the chosen one first,
// then the other finalists by their final rounds, then the other sampled
// candidates by their samples (dropped ones are left out).
std::vector<size_t> nmSpmmRanking(const NmSpmmTuned& tuned);

}  // namespace tcc::detail
