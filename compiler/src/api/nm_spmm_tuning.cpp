#include "nm_spmm_tuning.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace tcc::detail {

NmSpmmTuning nmSpmmTuningNamed(const char* name) {
  NmSpmmTuning tuning;
  std::istringstream words(name ? name : "");
  for (std::string word; std::getline(words, word, ',');) {
    if (word == "oneshot") {
      tuning.screenAgain = false;
      tuning.finalists = 1;
    } else if (word == "steps") {
      tuning.timeGraphs = false;
    } else if (word == "lead") {
      tuning.finalLeadIn = 2e-3;
    } else if (word.rfind("lead=", 0) == 0) {
      const double milliseconds = std::atof(word.c_str() + 5);
      if (milliseconds > 0) tuning.finalLeadIn = std::min(milliseconds, 100.0) * 1e-3;
    }
  }
  return tuning;
}

int nmSpmmLaunchesPerSample(double seconds) {
  return static_cast<int>(std::clamp(2e-4 / std::max(seconds, 1e-7), 1.0, 32.0));
}

double nmSpmmMedian(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::infinity();
  auto middle = values.begin() + (values.size() - 1) / 2;
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

NmSpmmTuned tuneNmSpmm(size_t count, const std::function<void(size_t, int)>& warmUp,
                       const std::function<double(size_t, int)>& time, const NmSpmmTuning& tuning) {
  NmSpmmTuned tuned;
  tuned.candidates.resize(count);
  auto timed = [&](size_t candidate, int launches) {
    tuned.launches += launches;
    return time(candidate, launches);
  };
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < count; ++i) {
    NmSpmmCandidateTimes& times = tuned.candidates[i];
    warmUp(i, 1);
    ++tuned.launches;
    times.screens.push_back(timed(i, 1));
    if (times.screens[0] >= tuning.screenAbove * best) {
      const bool again = tuning.screenAgain && times.screens[0] < tuning.dropAtOnce * best;
      if (again) times.screens.push_back(timed(i, nmSpmmLaunchesPerSample(best)));
      if (!again || times.screens[1] >= tuning.dropAbove * best) {
        times.seconds = *std::min_element(times.screens.begin(), times.screens.end());  // dropped
        continue;
      }
    }
    const double fastest = *std::min_element(times.screens.begin(), times.screens.end());
    // Launches over a millisecond: 3 samples of one launch, the screens among them.
    const bool longLaunch = fastest > 1e-3;
    if (longLaunch) times.samples = times.screens;
    const int launches = nmSpmmLaunchesPerSample(fastest);
    while (times.samples.size() < (longLaunch ? 3u : 5u)) times.samples.push_back(timed(i, launches));
    times.seconds = nmSpmmMedian(times.samples);
    best = std::min(best, times.seconds);
  }
  // The finalists, fastest first; timed in turns (each round starts one further along).
  std::vector<size_t> finalists;
  for (size_t i = 0; i < count; ++i)
    if (!tuned.candidates[i].samples.empty() && tuned.candidates[i].seconds <= tuning.finalWithin * best)
      finalists.push_back(i);
  std::stable_sort(finalists.begin(), finalists.end(),
                   [&](size_t a, size_t b) { return tuned.candidates[a].seconds < tuned.candidates[b].seconds; });
  if (finalists.size() > tuning.finalists) finalists.resize(tuning.finalists);
  if (finalists.size() > 1) {
    const int rounds = best > 1e-3 ? 3 : 5;
    for (int round = 0; round < rounds; ++round)
      for (size_t turn = 0; turn < finalists.size(); ++turn) {
        const size_t finalist = finalists[(round + turn) % finalists.size()];
        NmSpmmCandidateTimes& times = tuned.candidates[finalist];
        if (tuning.finalLeadIn > 0) {
          const int lead = static_cast<int>(std::clamp(std::ceil(tuning.finalLeadIn / times.seconds), 1.0, 256.0));
          warmUp(finalist, lead);
          tuned.launches += lead;
        }
        times.rounds.push_back(timed(finalist, nmSpmmLaunchesPerSample(times.seconds)));
      }
    for (size_t finalist : finalists)
      tuned.candidates[finalist].seconds = nmSpmmMedian(tuned.candidates[finalist].rounds);
    tuned.chosen = *std::min_element(finalists.begin(), finalists.end(), [&](size_t a, size_t b) {
      return tuned.candidates[a].seconds < tuned.candidates[b].seconds;
    });
    return tuned;
  }
  for (size_t i = 1; i < count; ++i)
    if (tuned.candidates[i].seconds < tuned.candidates[tuned.chosen].seconds) tuned.chosen = i;
  return tuned;
}

std::vector<size_t> nmSpmmRanking(const NmSpmmTuned& tuned) {
  std::vector<size_t> finalists, others;
  for (size_t i = 0; i < tuned.candidates.size(); ++i) {
    if (i == tuned.chosen || tuned.candidates[i].samples.empty()) continue;
    (tuned.candidates[i].rounds.empty() ? others : finalists).push_back(i);
  }
  auto faster = [&](size_t a, size_t b) { return tuned.candidates[a].seconds < tuned.candidates[b].seconds; };
  std::stable_sort(finalists.begin(), finalists.end(), faster);
  std::stable_sort(others.begin(), others.end(), faster);
  std::vector<size_t> ranking{tuned.chosen};
  ranking.insert(ranking.end(), finalists.begin(), finalists.end());
  ranking.insert(ranking.end(), others.begin(), others.end());
  return ranking;
}

}  // namespace tcc::detail
