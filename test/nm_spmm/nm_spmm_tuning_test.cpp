// The nm_spmm autotuner's choice among candidate plans (nm_spmm_tuning.h),
// on made-up launch times: no GPU.
#include "nm_spmm_tuning.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace tcc::detail {
namespace {

// Launch times: candidate i takes steady[i] seconds a launch, except that
// its first timed samples take what `first[i]` lists; `drift` scales every
// sample by the number of samples timed before it (a device whose clock
// moves during the tuning).
struct FakeDevice {
  std::vector<double> steady;
  std::vector<std::vector<double>> first;
  std::function<double(int)> drift = [](int) { return 1.0; };
  std::vector<int> samplesOf = std::vector<int>(64, 0);
  std::vector<int> warmUps = std::vector<int>(64, 0);
  int samples = 0;

  NmSpmmTuned tune(const NmSpmmTuning& tuning = {}) {
    first.resize(steady.size());
    return tuneNmSpmm(
        steady.size(), [&](size_t i, int) { ++warmUps[i]; },
        [&](size_t i, int) {
          const int index = samplesOf[i]++;
          const double seconds = index < int(first[i].size()) ? first[i][index] : steady[i];
          return seconds * drift(samples++);
        },
        tuning);
  }
};

TEST(NmSpmmTuning, ChoosesTheFastestOfSteadyCandidates) {
  FakeDevice device{{1.0e-4, 0.9e-4, 1.2e-4, 0.95e-4}};
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(tuned.chosen, 1u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(device.warmUps[i], 1) << i;
}

TEST(NmSpmmTuning, OneSlowFirstLaunchDoesNotDropTheFastestCandidate) {
  // Candidate 2 is the fastest, but its screen (first timed launch) is 50%
  // slower than candidate 1's time: screened again, it is sampled and chosen.
  FakeDevice device{{1.0e-4, 0.9e-4, 0.8e-4}, {{}, {}, {1.35e-4}}};
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(tuned.chosen, 2u);
  EXPECT_EQ(tuned.candidates[2].screens.size(), 2u);
  EXPECT_FALSE(tuned.candidates[2].samples.empty());

  // The tuner up to round 29 dropped it on that one launch.
  FakeDevice again{{1.0e-4, 0.9e-4, 0.8e-4}, {{}, {}, {1.35e-4}}};
  const NmSpmmTuned oneshot = again.tune(nmSpmmTuningNamed("oneshot"));
  EXPECT_EQ(oneshot.chosen, 1u);
  EXPECT_TRUE(oneshot.candidates[2].samples.empty());
}

TEST(NmSpmmTuning, ClearlySlowerCandidatesAreDroppedAfterTwoScreens) {
  FakeDevice device{{1.0e-4, 1.6e-4, 1.12e-4, 2.5e-4}};
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(tuned.chosen, 0u);
  EXPECT_EQ(tuned.candidates[1].screens.size(), 2u);
  EXPECT_TRUE(tuned.candidates[1].samples.empty());
  EXPECT_DOUBLE_EQ(tuned.candidates[1].seconds, 1.6e-4);
  // Twice as slow or more: dropped on its first screen.
  EXPECT_EQ(tuned.candidates[3].screens.size(), 1u);
  EXPECT_TRUE(tuned.candidates[3].samples.empty());
  // 12% slower: not screened again (under 25%), sampled, not a finalist (over 3%).
  EXPECT_EQ(tuned.candidates[2].screens.size(), 1u);
  EXPECT_EQ(tuned.candidates[2].samples.size(), 5u);
  EXPECT_TRUE(tuned.candidates[2].rounds.empty());
}

TEST(NmSpmmTuning, FinalistsAreComparedInTheSameRounds) {
  // Candidate 1 is 2% faster, but the device slows by 3% after the first 8
  // samples, while candidate 0 is still being timed: its samples look
  // faster. The final rounds time both under the same conditions.
  auto slowing = [](int sample) { return sample < 8 ? 0.97 : 1.0; };
  FakeDevice device{{1.0e-4, 0.98e-4}};
  device.drift = slowing;
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(tuned.chosen, 1u);
  EXPECT_EQ(tuned.candidates[0].rounds.size(), 5u);
  EXPECT_EQ(tuned.candidates[1].rounds.size(), 5u);

  FakeDevice again{{1.0e-4, 0.98e-4}};
  again.drift = slowing;
  EXPECT_EQ(again.tune(nmSpmmTuningNamed("oneshot")).chosen, 0u);
}

TEST(NmSpmmTuning, AtMostThreeFinalistsAndThreeRoundsForLongLaunches) {
  FakeDevice device{{2.00e-3, 2.01e-3, 2.02e-3, 2.03e-3, 2.04e-3}};
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(tuned.chosen, 0u);
  int finalists = 0;
  for (const auto& times : tuned.candidates) {
    finalists += !times.rounds.empty();
    if (!times.rounds.empty()) EXPECT_EQ(times.rounds.size(), 3u);
    // A launch over a millisecond: 3 samples of one launch, the screen among them.
    EXPECT_EQ(times.samples.size(), 3u);
  }
  EXPECT_EQ(finalists, 3);
  // 5 warm-ups, 5 screens, 10 more samples, 9 final rounds: one launch each.
  EXPECT_EQ(tuned.launches, 29);
}

TEST(NmSpmmTuning, TheLaunchesMadeAreBounded) {
  // 40 short candidates, every other one slow on its first launch: at most
  // a warm-up, two screens, five samples each and 3 x 5 final rounds, of
  // at most 32 launches a sample.
  FakeDevice device;
  for (int i = 0; i < 40; ++i) {
    device.steady.push_back((1.0 + 0.001 * i) * 1e-5);
    device.first.push_back(i % 2 ? std::vector<double>{1.8e-5} : std::vector<double>{});
  }
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(tuned.chosen, 0u);
  EXPECT_LE(device.samples, 40 * 7 + 15);
  EXPECT_LE(tuned.launches, 40 * (1 + 1 + 6 * 32) + 15 * 32);
}

TEST(NmSpmmTuning, OneCandidateIsChosenWithoutFinalRounds) {
  FakeDevice device{{3.0e-4}};
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(tuned.chosen, 0u);
  EXPECT_TRUE(tuned.candidates[0].rounds.empty());
  EXPECT_EQ(tuned.candidates[0].samples.size(), 5u);
}

TEST(NmSpmmTuning, SamplesAreAboutATenthOfAMillisecondOfLaunches) {
  EXPECT_EQ(nmSpmmLaunchesPerSample(1e-3), 1);
  EXPECT_EQ(nmSpmmLaunchesPerSample(2e-4), 1);
  EXPECT_EQ(nmSpmmLaunchesPerSample(1e-5), 20);
  EXPECT_EQ(nmSpmmLaunchesPerSample(1e-9), 32);
  EXPECT_EQ(nmSpmmMedian({3, 1, 2}), 2);
  EXPECT_EQ(nmSpmmMedian({4, 1, 3, 2}), 2);
  EXPECT_EQ(nmSpmmMedian({}), std::numeric_limits<double>::infinity());
}

// A device whose clock follows the power draw of the last kernel it ran:
// candidate i takes base[i] seconds right after a launch of a low-power
// candidate and base[i] * slowdown after one of a high-power candidate.
struct PowerCappedDevice {
  std::vector<double> base;
  std::vector<bool> highPower;
  double slowdown = 1.05;
  size_t last = 0;
  std::vector<std::pair<size_t, int>> warmUps;  // (candidate, launches), in order

  double launch(size_t i) {
    const double seconds = base[i] * (highPower[last] ? slowdown : 1.0);
    last = i;
    return seconds;
  }
  NmSpmmTuned tune(const NmSpmmTuning& tuning) {
    return tuneNmSpmm(
        base.size(),
        [&](size_t i, int launches) {
          warmUps.emplace_back(i, launches);
          for (int l = 0; l < launches; ++l) launch(i);
        },
        [&](size_t i, int launches) {
          double total = 0;
          for (int l = 0; l < launches; ++l) total += launch(i);
          return total / launches;
        },
        tuning);
  }
};

TEST(NmSpmmTuning, ALeadInTimesEachFinalistAtTheClockItsOwnLaunchesSet) {
  // Candidate 0 draws more power: after its own launches it takes
  // 0.97e-4 * 1.05 = 1.0185e-4, behind candidate 1's launches 0.97e-4.
  // Candidate 1 takes 1.0e-4 after itself, 1.05e-4 after candidate 0.
  // In a long run of either alone (a call's steady state) candidate 1 is faster.
  NmSpmmTuning lead = nmSpmmTuningNamed("lead=1");
  PowerCappedDevice device{{0.97e-4, 1.0e-4}, {true, false}};
  const NmSpmmTuned tuned = device.tune(lead);
  EXPECT_EQ(tuned.chosen, 1u);
  EXPECT_NEAR(tuned.candidates[0].seconds, 1.0185e-4, 1e-9);
  EXPECT_NEAR(tuned.candidates[1].seconds, 1.0e-4, 1e-9);
  // Each finalist's timed turn comes right after its lead-in: about a
  // millisecond of its own launches (1e-3 / its time, rounded up).
  size_t leadIns = 0;
  for (size_t w = 0; w < device.warmUps.size(); ++w) {
    if (device.warmUps[w].second == 1) continue;  // a candidate's first warm-up
    EXPECT_EQ(device.warmUps[w].second, 10);      // ceil(1e-3 / 1.0e-4 or 1.0185e-4)
    ++leadIns;
  }
  EXPECT_EQ(leadIns, 10u);  // 2 finalists x 5 rounds

  // Without the lead-in, candidate 0's turns follow candidate 1's
  // launches often enough to look faster, and it is chosen.
  PowerCappedDevice plain{{0.97e-4, 1.0e-4}, {true, false}};
  EXPECT_EQ(plain.tune(nmSpmmTuningNamed(nullptr)).chosen, 0u);
}

TEST(NmSpmmTuning, TheRankingPutsTheChosenFirstThenFinalistsThenTheSampled) {
  // Candidate 3 drops (over twice the best); 0, 1 and 4 are finalists
  // (within 3%); 2 is sampled but 10% slower.
  FakeDevice device{{1.00e-4, 1.01e-4, 1.10e-4, 2.5e-4, 1.02e-4}};
  const NmSpmmTuned tuned = device.tune();
  EXPECT_EQ(nmSpmmRanking(tuned), (std::vector<size_t>{0, 1, 4, 2}));
  // The finalists' order is their final rounds', whatever their samples said.
  FakeDevice later{{1.00e-4, 1.01e-4, 1.10e-4, 2.5e-4, 1.02e-4}};
  later.first = {{}, {}, {}, {}, std::vector<double>(6, 0.99e-4)};  // 4's screen and samples look fastest
  const NmSpmmTuned again = later.tune();
  EXPECT_EQ(again.chosen, 0u);
  EXPECT_EQ(nmSpmmRanking(again), (std::vector<size_t>{0, 1, 4, 2}));
  FakeDevice one{{3.0e-4}};
  EXPECT_EQ(nmSpmmRanking(one.tune()), (std::vector<size_t>{0}));
}

TEST(NmSpmmTuning, TunerNamedOneshotIsTheEarlierTuner) {
  const NmSpmmTuning oneshot = nmSpmmTuningNamed("oneshot"), standard = nmSpmmTuningNamed(nullptr);
  EXPECT_FALSE(oneshot.screenAgain);
  EXPECT_EQ(oneshot.finalists, 1u);
  EXPECT_TRUE(standard.screenAgain);
  EXPECT_EQ(standard.finalists, 3u);
  EXPECT_TRUE(nmSpmmTuningNamed("other").screenAgain);
}

TEST(NmSpmmTuning, TunerWordsCombine) {
  const NmSpmmTuning standard = nmSpmmTuningNamed("");
  EXPECT_TRUE(standard.timeGraphs);
  EXPECT_EQ(standard.finalLeadIn, 0);
  EXPECT_FALSE(nmSpmmTuningNamed("steps").timeGraphs);
  EXPECT_DOUBLE_EQ(nmSpmmTuningNamed("lead").finalLeadIn, 2e-3);
  EXPECT_DOUBLE_EQ(nmSpmmTuningNamed("lead=5").finalLeadIn, 5e-3);
  EXPECT_EQ(nmSpmmTuningNamed("lead=x").finalLeadIn, 0);
  const NmSpmmTuning both = nmSpmmTuningNamed("oneshot,steps,lead=3");
  EXPECT_FALSE(both.screenAgain);
  EXPECT_FALSE(both.timeGraphs);
  EXPECT_DOUBLE_EQ(both.finalLeadIn, 3e-3);
}

}  // namespace
}  // namespace tcc::detail
