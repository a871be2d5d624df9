// A permanent over MPI ranks. Rank 0 coordinates: it holds the chunk
// ledger (the checkpoint's content), grants batches of chunks to ranks that
// ask (guided self-scheduling: a share of what is left, in proportion to the
// rank's measured speed, so ranks that finish early ask again, and a rank
// too slow to finish another batch before the others finish the run, a CPU
// rank beside GPU ranks, is stopped), collects each
// chunk's partial sum, reports progress and saves the checkpoint; it also
// computes, on a thread of its own. Every other rank asks for a batch, sums
// it with its engine on a compute thread, and sends the finished chunks back
// (with every request and every half second as a heartbeat). Only the
// calling thread of each rank talks MPI, and only with nonblocking calls
// polled against timeouts, so a lost rank stops the run instead of hanging
// it.
//
// Messages are arrays of int64: a report (rank k -> 0) is
//   [flags, count, chunk, word, word, chunk, word, word, ...]
// with each partial sum as two 64-bit words (a double's bits, or a 128-bit
// integer's low and high halves); an order (0 -> k) is [kGrant, chunks...]
// or [kStop].
#include <bit>
#include <cstdio>
#include <mutex>
#include <optional>

#include "../chunk_plan.h"
#include "../compute_thread.h"
#include "../distributed_sum.h"
#include "../interrupt.h"
#include "../progress.h"
#include "chunk_ledger.h"
#include "messenger.h"
#include "mpi_world.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt::permanent {
namespace {

constexpr int kReportTag = 1, kOrderTag = 2;
constexpr int64_t kWantsWork = 1, kFinal = 2, kInterrupted = 4, kOverflow = 8;  // report flags
constexpr int64_t kGrant = 1, kStop = 2;                                        // orders
constexpr double kHeartbeatSeconds = 0.5;
constexpr double kCheckpointIntervalSeconds = 10;
// After a signal, mpirun kills the ranks a moment later: wait this long for
// the others' last chunks, no longer.
constexpr double kSignalGraceSeconds = 0.3;

void encode(double value, int64_t* words) {
  words[0] = std::bit_cast<int64_t>(value);
  words[1] = 0;
}
void encode(Int128 value, int64_t* words) {
  words[0] = static_cast<int64_t>(static_cast<uint64_t>(value));
  words[1] = static_cast<int64_t>(value >> 64);
}
void decode(const int64_t* words, double& value) { value = std::bit_cast<double>(words[0]); }
void decode(const int64_t* words, Int128& value) {
  value = static_cast<Int128>((static_cast<unsigned __int128>(static_cast<uint64_t>(words[1])) << 64) |
                              static_cast<uint64_t>(words[0]));
}

// What every rank tells the others before the work: which computation it
// is about to do (the matrix, and the mode, which names the column order
// that cuts the chunks), and how many chunks its engine takes at once.
struct Hello {
  int64_t fingerprint, mode, parallelism;
};

int64_t modeHash(const char* mode) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (const char* c = mode; *c; ++c) hash = (hash ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  return static_cast<int64_t>(hash);
}

template <typename Sum>
struct Report {
  int64_t flags = 0;
  std::vector<std::pair<int64_t, Sum>> chunks;

  std::vector<int64_t> words() const {
    std::vector<int64_t> words{flags, static_cast<int64_t>(chunks.size())};
    words.reserve(2 + 3 * chunks.size());
    for (const auto& [chunk, sum] : chunks) {
      words.push_back(chunk);
      words.resize(words.size() + 2);
      encode(sum, &words[words.size() - 2]);
    }
    return words;
  }
  static std::optional<Report> parse(const std::vector<int64_t>& words) {
    if (words.size() < 2 || words[1] < 0 || words.size() != 2 + 3 * static_cast<size_t>(words[1])) return std::nullopt;
    Report report;
    report.flags = words[0];
    for (int64_t k = 0; k < words[1]; ++k) {
      Sum sum;
      decode(&words[2 + 3 * k + 1], sum);
      report.chunks.emplace_back(words[2 + 3 * k], sum);
    }
    return report;
  }
};


// Rank 0's loop: serves the other ranks while its own thread computes.
// Returns the failure message ("" when every chunk is done).
template <typename Sum>
std::string coordinate(Messenger& messenger, ChunkLedger<Sum>& ledger, RangeEngine<Sum>& engine, int ranks,
                       const PermanentOptions& options) {
  struct Peer {
    bool told = false, final = false;
    Clock::time_point lastHeard = Clock::now();
  };
  std::vector<Peer> peers(ranks);
  const double silence = silenceSeconds();
  const ChunkPlan& plan = ledger.plan();
  StopFlags stop{&ledger.stopFlag(), &InterruptScope::flag()};
  ComputeThread<Sum> compute(engine, plan.chunkSize, stop, [&](int64_t chunk, const ChunkOutcome<Sum>& outcome) {
    ledger.record(0, chunk, outcome);
  });
  ProgressReporter progress(options.progress, plan.chunks, plan.chunkSize, ledger.doneBefore());
  compute.startPulling([&] { return ledger.grant(0); });

  auto lastSave = Clock::now();
  std::optional<Clock::time_point> signalledAt;
  std::string saveError;
  auto saveNow = [&] {
    try {
      ledger.save();
    } catch (const PermanentError& error) {
      if (saveError.empty()) saveError = error.what();
      ledger.stop(error.what());
    }
    lastSave = Clock::now();
  };
  auto lost = [&](const std::string& why) {
    ledger.stop("lost");
    compute.quit();
    saveNow();
    progress.finish(ledger.completed(), false);
    abortAllRanks(messenger.comm(), "perm: " + why + "; stopped after " + std::to_string(ledger.completed()) +
                                        " of " + std::to_string(plan.chunks) + " chunks" +
                                        (options.checkpointPath.empty()
                                             ? std::string()
                                             : "; checkpoint saved to " + options.checkpointPath +
                                                   ", run again with it to resume"));
  };

  for (;;) {
    messenger.progress();
    while (auto message = messenger.receive(MPI_ANY_SOURCE, kReportTag)) {
      const int rank = message->first;
      Peer& peer = peers[rank];
      peer.lastHeard = Clock::now();
      auto report = Report<Sum>::parse(message->second);
      if (!report) {
        ledger.stop("perm: internal error: a malformed report from rank " + std::to_string(rank));
        continue;
      }
      for (const auto& [chunk, sum] : report->chunks)
        ledger.record(rank, chunk, ChunkOutcome<Sum>{sum, false, false});
      if (report->flags & kOverflow) ledger.record(rank, -1, ChunkOutcome<Sum>{0, false, true});
      if (report->flags & kInterrupted) ledger.stop("interrupted");
      if (report->flags & kFinal) peer.final = true;
      if ((report->flags & kWantsWork) && !peer.told) {
        std::vector<int64_t> batch = ledger.grant(rank);
        if (batch.empty()) {
          messenger.send(rank, kOrderTag, {kStop});
          peer.told = true;
        } else {
          batch.insert(batch.begin(), kGrant);
          messenger.send(rank, kOrderTag, std::move(batch));
        }
      }
    }
    if (InterruptScope::flag().load()) {
      ledger.stop("interrupted");
      if (!signalledAt) {
        signalledAt = Clock::now();
        saveNow();  // mpirun may kill this rank at any moment now
      }
    }
    if (ledger.stopping())
      for (int rank = 1; rank < ranks; ++rank)
        if (!peers[rank].told) {
          messenger.send(rank, kOrderTag, {kStop});
          peers[rank].told = true;
        }

    bool allFinal = true;
    for (int rank = 1; rank < ranks; ++rank) {
      if (peers[rank].final) continue;
      allFinal = false;
      if (secondsSince(peers[rank].lastHeard) > silence)
        lost("rank " + std::to_string(rank) + " sent nothing for " + std::to_string(int(silence)) + " s (lost?)");
      if (signalledAt && secondsSince(*signalledAt) > kSignalGraceSeconds)
        lost("interrupted, and rank " + std::to_string(rank) + " did not answer");
    }
    progress.update(ledger.completed());
    if (!options.checkpointPath.empty() && secondsSince(lastSave) >= kCheckpointIntervalSeconds) saveNow();
    if (allFinal && compute.idle()) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  compute.quit();
  saveNow();
  const int64_t completed = ledger.completed();
  progress.finish(completed, completed == plan.chunks);
  if (options.progress == ProgressMode::On) std::fprintf(stderr, "%s\n", ledger.distributionText().c_str());
  if (!saveError.empty()) return saveError;
  return ledger.failure();
}

// Every other rank's loop: ask for a batch, compute it, send it back.
template <typename Sum>
void serve(Messenger& messenger, RangeEngine<Sum>& engine, uint64_t chunkSize) {
  std::mutex finishedMutex;
  Report<Sum> finished;  // chunks done and not yet sent, and an overflow
  std::atomic<bool> stopRun{false};
  StopFlags stop{&stopRun, &InterruptScope::flag()};
  ComputeThread<Sum> compute(engine, chunkSize, stop, [&](int64_t chunk, const ChunkOutcome<Sum>& outcome) {
    std::lock_guard lock(finishedMutex);
    if (outcome.overflow) {
      finished.flags |= kOverflow;
      stopRun.store(true);
    } else {
      finished.chunks.emplace_back(chunk, outcome.sum);
    }
  });
  compute.startServing();
  const double silence = silenceSeconds();
  bool awaitingOrder = false, stopped = false;
  auto lastSent = Clock::now() - std::chrono::hours(1), askedAt = Clock::now();
  auto sendReport = [&](int64_t flags) {
    Report<Sum> report;
    {
      std::lock_guard lock(finishedMutex);
      std::swap(report, finished);
    }
    report.flags |= flags | (InterruptScope::flag().load() ? kInterrupted : 0);
    messenger.send(0, kReportTag, report.words());
    lastSent = Clock::now();
  };

  for (;;) {
    messenger.progress();
    while (auto message = messenger.receive(0, kOrderTag)) {
      const std::vector<int64_t>& order = message->second;
      awaitingOrder = false;
      if (!order.empty() && order[0] == kGrant && !stopped) {
        compute.give(std::vector<int64_t>(order.begin() + 1, order.end()));
      } else {
        stopped = true;
        stopRun.store(true);
      }
    }
    const bool interrupted = InterruptScope::flag().load() || stopRun.load();
    if (interrupted) stopRun.store(true);
    const bool idle = compute.idle();
    if (stopped && idle) {
      sendReport(kFinal);
      break;
    }
    if (idle && !awaitingOrder) {
      sendReport(interrupted ? 0 : kWantsWork);  // an interrupted rank waits for rank 0's stop
      awaitingOrder = true;
      askedAt = Clock::now();
    } else if (secondsSince(lastSent) >= kHeartbeatSeconds) {
      sendReport(0);
    }
    if (awaitingOrder && secondsSince(askedAt) > silence)
      abortAllRanks(messenger.comm(), "perm: rank 0 did not answer rank " + std::to_string(messenger.rank()) +
                                          " for " + std::to_string(int(silence)) + " s (lost?); all ranks stop");
    std::this_thread::sleep_for(kPollInterval);
  }
  compute.quit();
}

}  // namespace

template <typename Sum>
Sum distributedSumOfChunks(const SortedColumnMatrix& matrix, const char* mode, const PermanentOptions& options,
                           RangeEngine<Sum>& engine) {
  const RankPlacement placement = currentPlacement();
  if (!anyThreadMayCallMpi()) {
    int isMain = 0;
    MPI_Is_thread_main(&isMain);
    if (!isMain)
      throw PermanentError("perm: under MPI (with MPI_THREAD_FUNNELED), permanents must be computed on the thread "
                           "that started MPI");
  }
  Messenger messenger(permanentCommunicator(), placement.rank);
  InterruptScope interrupt(/*alsoTerminate=*/true);

  // The same computation on every rank?
  Hello mine{static_cast<int64_t>(matrix.fingerprint), modeHash(mode), engine.parallelism()};
  std::vector<Hello> hellos(placement.size);
  MPI_Request request;
  messenger.check(MPI_Iallgather(&mine, 3, MPI_INT64_T, hellos.data(), 3, MPI_INT64_T, messenger.comm(), &request),
                  "allgather");
  messenger.await(request, "the start of a permanent");
  for (int rank = 1; rank < placement.size; ++rank)
    if (hellos[rank].fingerprint != hellos[0].fingerprint || hellos[rank].mode != hellos[0].mode)
      throw PermanentError("perm: rank " + std::to_string(rank) + " computes a different permanent than rank 0 " +
                           (hellos[rank].fingerprint != hellos[0].fingerprint
                                ? std::string("(another matrix)")
                                : "(rank 0: the " + std::string(mode) +
                                      " mode; another mode, such as float against exact, or another GPU kernel's "
                                      "column order)") +
                           "; every rank must run the same program on the same input");

  std::optional<ChunkLedger<Sum>> ledger;
  std::string failure;
  if (placement.rank == 0) {
    std::vector<int64_t> parallelism;
    for (const Hello& hello : hellos) parallelism.push_back(hello.parallelism);
    ledger.emplace(matrix, mode, options, parallelism);
    try {
      ledger->resume();
    } catch (const PermanentError& error) {
      failure = error.what();
    }
    if (failure.empty() && options.progress == ProgressMode::On)
      std::fprintf(stderr, "perm: %d ranks (rank 0: %s), %lld of %lld chunks done before\n", placement.size,
                   engine.description().c_str(), static_cast<long long>(ledger->doneBefore()),
                   static_cast<long long>(ledger->plan().chunks));
  }
  broadcastText(messenger, failure);
  if (!failure.empty()) throw PermanentError(failure);

  if (placement.rank == 0) {
    failure = coordinate(messenger, *ledger, engine, placement.size, options);
  } else {
    serve(messenger, engine, planChunks(matrix.n).chunkSize);
  }

  // Rank 0's sum (or failure), on every rank.
  int64_t words[2] = {0, 0};
  if (placement.rank == 0 && failure.empty()) {
    try {
      encode(ledger->total(), words);
    } catch (const PermanentError& error) {
      failure = error.what();
    }
  }
  broadcastText(messenger, failure);
  if (!failure.empty()) throw PermanentError(failure);
  messenger.check(MPI_Ibcast(words, 2, MPI_INT64_T, 0, messenger.comm(), &request), "broadcast");
  messenger.await(request, "the result");
  Sum sum;
  decode(words, sum);
  return sum;
}

template double distributedSumOfChunks<double>(const SortedColumnMatrix&, const char*, const PermanentOptions&,
                                               RangeEngine<double>&);
template Int128 distributedSumOfChunks<Int128>(const SortedColumnMatrix&, const char*, const PermanentOptions&,
                                               RangeEngine<Int128>&);

}  // namespace tcc::rt::permanent
