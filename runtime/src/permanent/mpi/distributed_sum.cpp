// A permanent over MPI ranks. Rank 0 coordinates: it holds the chunk
// ledger (the checkpoint's content), grants batches of chunks to ranks that
// ask (guided self-scheduling: a share of what is left, in proportion to the
// rank's engine, so ranks that finish early ask again), collects each
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
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "../chunk_plan.h"
#include "../distributed_sum.h"
#include "../interrupt.h"
#include "../progress.h"
#include "mpi_session.h"
#include "tcc/runtime/distributed.h"

namespace tcc::rt::permanent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kReportTag = 1, kOrderTag = 2;
constexpr int64_t kWantsWork = 1, kFinal = 2, kInterrupted = 4, kOverflow = 8;  // report flags
constexpr int64_t kGrant = 1, kStop = 2;                                        // orders
constexpr double kHeartbeatSeconds = 0.5;
constexpr double kCheckpointIntervalSeconds = 10;
constexpr double kDefaultSilenceSeconds = 60;
// After a signal, mpirun kills the ranks a moment later: wait this long for
// the others' last chunks, no longer.
constexpr double kSignalGraceSeconds = 0.3;
constexpr int64_t kLargestGrant = 4096;
constexpr auto kPollInterval = std::chrono::microseconds(200);

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A rank silent this long is taken as lost (TCC_PERMANENT_RANK_TIMEOUT seconds).
double silenceSeconds() {
  const char* text = std::getenv("TCC_PERMANENT_RANK_TIMEOUT");
  double seconds = text ? std::atof(text) : 0;
  return seconds > 0 ? seconds : kDefaultSilenceSeconds;
}

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

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

// An unrecoverable state (a lost rank, failed communication): the run cannot
// finish collectively, so after saying why, every rank is stopped.
[[noreturn]] void abortAllRanks(MPI_Comm comm, const std::string& message) {
  std::fprintf(stderr, "tcc: error: %s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
  std::_Exit(1);
}

// Nonblocking point-to-point messages of int64 words, and collectives
// waited on with a timeout.
class Messenger {
 public:
  Messenger(MPI_Comm comm, int rank) : comm_(comm), rank_(rank) {}

  void check(int code, const char* what) const {
    if (code != MPI_SUCCESS)
      abortAllRanks(comm_, "perm: MPI " + std::string(what) + " failed on rank " + std::to_string(rank_) + ": " +
                               mpiErrorText(code));
  }

  void send(int to, int tag, std::vector<int64_t> words) {
    pending_.push_back({std::move(words), MPI_REQUEST_NULL});
    auto& [buffer, request] = pending_.back();
    check(MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_INT64_T, to, tag, comm_, &request), "send");
  }

  // Lets sends progress and frees those done.
  void progress() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      int done = 0;
      check(MPI_Test(&it->second, &done, MPI_STATUS_IGNORE), "send");
      it = done ? pending_.erase(it) : std::next(it);
    }
  }

  // A waiting message from `from` (or any rank) with `tag`, if there is one.
  std::optional<std::pair<int, std::vector<int64_t>>> receive(int from, int tag) {
    int arrived = 0;
    MPI_Status status;
    check(MPI_Iprobe(from, tag, comm_, &arrived, &status), "probe");
    if (!arrived) return std::nullopt;
    int count = 0;
    MPI_Get_count(&status, MPI_INT64_T, &count);
    std::vector<int64_t> words(count);
    check(MPI_Recv(words.data(), count, MPI_INT64_T, status.MPI_SOURCE, tag, comm_, MPI_STATUS_IGNORE), "receive");
    return std::make_pair(status.MPI_SOURCE, std::move(words));
  }

  // Waits for a collective, or for the sends still pending; a rank that
  // does not take part within the timeout is lost.
  void await(MPI_Request& request, const char* what) {
    auto start = Clock::now();
    const double limit = silenceSeconds();
    for (;;) {
      progress();
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
      if (done) return;
      if (secondsSince(start) > limit)
        abortAllRanks(comm_, "perm: rank " + std::to_string(rank_) + " waited " + std::to_string(int(limit)) +
                                 " s for the other ranks (" + what +
                                 "); a rank is lost or stuck, so all ranks stop");
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  // Sends still pending are ones their receivers have stopped listening
  // for only when a rank is lost; otherwise they complete at once.
  ~Messenger() {
    auto start = Clock::now();
    while (!pending_.empty() && secondsSince(start) < silenceSeconds()) {
      progress();
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }

 private:
  MPI_Comm comm_;
  int rank_;
  std::list<std::pair<std::vector<int64_t>, MPI_Request>> pending_;
};

// Rank 0's text, the same on every rank once broadcast.
void broadcastText(Messenger& messenger, std::string& text) {
  int64_t length = static_cast<int64_t>(text.size());
  MPI_Request request;
  messenger.check(MPI_Ibcast(&length, 1, MPI_INT64_T, 0, messenger.comm(), &request), "broadcast");
  messenger.await(request, "broadcast");
  if (length == 0) return;
  text.resize(length);
  messenger.check(MPI_Ibcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, messenger.comm(), &request),
                  "broadcast");
  messenger.await(request, "broadcast");
}

// What every rank tells the others before the work: which computation it
// is about to do, and how many chunks its engine takes at once.
struct Hello {
  int64_t fingerprint, exact, parallelism;
};

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

// Rank 0: the ledger of chunks, the grants, and the reasons to stop.
template <typename Sum>
class Coordinator {
 public:
  Coordinator(const SortedColumnMatrix& matrix, const char* mode, const PermanentOptions& options,
              const std::vector<Hello>& hellos)
      : matrix_(matrix), mode_(mode), options_(options), plan_(planChunks(matrix.n)),
        partials_(plan_.chunks, Sum(0)), done_(plan_.chunks, 0), computedBy_(hellos.size(), 0) {
    for (const Hello& hello : hellos) {
      parallelism_.push_back(std::max<int64_t>(1, hello.parallelism));
      totalParallelism_ += parallelism_.back();
    }
  }

  // Reads the checkpoint and saves it back at once (an unwritable path
  // fails before the work); throws PermanentError.
  void resume() {
    for (int64_t chunk : resumeFromCheckpoint(options_.checkpointPath, matrix_, mode_, plan_, partials_))
      done_[chunk] = 1;
    for (int64_t chunk = 0; chunk < plan_.chunks; ++chunk)
      if (!done_[chunk]) todo_.push_back(chunk);
    doneBefore_ = completed_ = plan_.chunks - static_cast<int64_t>(todo_.size());
    save();
  }

  const ChunkPlan& plan() const { return plan_; }
  int64_t doneBefore() const { return doneBefore_; }

  // The next batch for `rank`; empty when nothing is left or the run stops.
  std::vector<int64_t> grant(int rank) {
    std::lock_guard lock(mutex_);
    const auto left = static_cast<int64_t>(todo_.size() - nextTodo_);
    if (stopping() || left == 0) return {};
    const int64_t share = (left * parallelism_[rank] + 2 * totalParallelism_ - 1) / (2 * totalParallelism_);
    const int64_t size = std::min({left, std::max(parallelism_[rank], share), kLargestGrant});
    std::vector<int64_t> batch(todo_.begin() + nextTodo_, todo_.begin() + nextTodo_ + size);
    nextTodo_ += size;
    return batch;
  }

  void record(int rank, int64_t chunk, const ChunkOutcome<Sum>& outcome) {
    std::lock_guard lock(mutex_);
    if (outcome.overflow) return stopLocked(overflowError(matrix_.n).what());
    if (chunk < 0 || chunk >= plan_.chunks || done_[chunk])
      return stopLocked("perm: internal error: rank " + std::to_string(rank) + " reported chunk " +
                        std::to_string(chunk) + ", which is not outstanding");
    partials_[chunk] = outcome.sum;
    done_[chunk] = 1;
    ++completed_;
    ++computedBy_[rank];
    if (options_.chunkLimit > 0 && completed_ - doneBefore_ >= options_.chunkLimit) stopLocked("chunk limit");
  }

  void stop(const std::string& reason) {
    std::lock_guard lock(mutex_);
    stopLocked(reason);
  }
  bool stopping() const { return stopFlag_.load(); }
  const std::atomic<bool>& stopFlag() const { return stopFlag_; }
  int64_t completed() {
    std::lock_guard lock(mutex_);
    return completed_;
  }

  // Writes the chunks done so far (no-op without a checkpoint path).
  void save() {
    if (options_.checkpointPath.empty()) return;
    Checkpoint checkpoint{matrix_.fingerprint, mode_, plan_.chunks, {}};
    {
      std::lock_guard lock(mutex_);
      for (int64_t chunk = 0; chunk < plan_.chunks; ++chunk)
        if (done_[chunk]) checkpoint.partials[chunk] = partialText(partials_[chunk]);
    }
    writeCheckpoint(options_.checkpointPath, checkpoint);
  }

  // The message a stopped or unfinished run fails with ("" when complete).
  std::string failure() {
    std::lock_guard lock(mutex_);
    if (stopReason_.rfind("perm: ", 0) == 0) return stopReason_;
    if (completed_ == plan_.chunks) return "";
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.1f%%", 100.0 * double(completed_) / double(plan_.chunks));
    const std::string& path = options_.checkpointPath;
    return "perm: " + (stopReason_ == "chunk limit" ? std::string("stopped at the chunk limit") : stopReason_) +
           " after " + std::to_string(completed_) + " of " + std::to_string(plan_.chunks) + " chunks (" + percent +
           ")" +
           (path.empty() ? "; run with a checkpoint file to keep the work done"
                         : "; checkpoint saved to " + path + ", run again with it to resume");
  }

  Sum total() { return addInChunkOrder(partials_, matrix_.n); }

  std::string distributionText() {
    std::lock_guard lock(mutex_);
    std::string text = "perm: chunks computed in this run by rank:";
    for (size_t rank = 0; rank < computedBy_.size(); ++rank)
      text += (rank ? ", " : " ") + std::to_string(rank) + ": " + std::to_string(computedBy_[rank]);
    return text + " (" + std::to_string(doneBefore_) + " were done before)";
  }

 private:
  void stopLocked(const std::string& reason) {
    if (stopReason_.empty()) stopReason_ = reason;
    stopFlag_.store(true);
  }

  const SortedColumnMatrix& matrix_;
  const char* mode_;
  const PermanentOptions& options_;
  ChunkPlan plan_;
  std::mutex mutex_;
  std::vector<Sum> partials_;
  std::vector<uint8_t> done_;
  std::vector<int64_t> todo_;
  size_t nextTodo_ = 0;
  int64_t completed_ = 0, doneBefore_ = 0;
  std::vector<int64_t> computedBy_, parallelism_;
  int64_t totalParallelism_ = 0;
  std::string stopReason_;
  std::atomic<bool> stopFlag_{false};
};

// Runs batches on a thread of its own, so the calling thread stays free
// to talk MPI; finished chunks wait in `finished` to be sent or recorded.
template <typename Sum>
class ComputeThread {
 public:
  using Batches = std::function<std::vector<int64_t>()>;

  ComputeThread(RangeEngine<Sum>& engine, uint64_t chunkSize, StopFlags stop,
                typename RangeEngine<Sum>::ChunkDone chunkDone)
      : engine_(engine), chunkSize_(chunkSize), stop_(stop), chunkDone_(std::move(chunkDone)) {}
  ~ComputeThread() { quit(); }

  // Rank 0's thread pulls its batches itself until none is left.
  void startPulling(Batches next) {
    idle_ = false;
    thread_ = std::thread([this, next = std::move(next)] {
      for (auto batch = next(); !batch.empty() && !stop_.requested(); batch = next())
        engine_.sumChunks(batch, chunkSize_, stop_, chunkDone_);
      std::lock_guard lock(mutex_);
      idle_ = true;
    });
  }

  // A worker's thread runs the batches it is given.
  void startServing() {
    thread_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      for (;;) {
        wake_.wait(lock, [&] { return quit_ || !batch_.empty(); });
        if (quit_) return;
        std::vector<int64_t> batch = std::move(batch_);
        batch_.clear();
        lock.unlock();
        engine_.sumChunks(batch, chunkSize_, stop_, chunkDone_);
        lock.lock();
        idle_ = true;
      }
    });
  }

  void give(std::vector<int64_t> batch) {
    std::lock_guard lock(mutex_);
    batch_ = std::move(batch);
    idle_ = false;
    wake_.notify_one();
  }

  bool idle() {
    std::lock_guard lock(mutex_);
    return idle_;
  }

  void quit() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  RangeEngine<Sum>& engine_;
  uint64_t chunkSize_;
  StopFlags stop_;
  typename RangeEngine<Sum>::ChunkDone chunkDone_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<int64_t> batch_;
  bool idle_ = true, quit_ = false;
};

// Rank 0's loop: serves the other ranks while its own thread computes.
// Returns the failure message ("" when every chunk is done).
template <typename Sum>
std::string coordinate(Messenger& messenger, Coordinator<Sum>& coordinator, RangeEngine<Sum>& engine, int ranks,
                       const PermanentOptions& options) {
  struct Peer {
    bool told = false, final = false;
    Clock::time_point lastHeard = Clock::now();
  };
  std::vector<Peer> peers(ranks);
  const double silence = silenceSeconds();
  const ChunkPlan& plan = coordinator.plan();
  StopFlags stop{&coordinator.stopFlag(), &InterruptScope::flag()};
  ComputeThread<Sum> compute(engine, plan.chunkSize, stop, [&](int64_t chunk, const ChunkOutcome<Sum>& outcome) {
    coordinator.record(0, chunk, outcome);
  });
  ProgressReporter progress(options.progress, plan.chunks, plan.chunkSize, coordinator.doneBefore());
  compute.startPulling([&] { return coordinator.grant(0); });

  auto lastSave = Clock::now();
  std::optional<Clock::time_point> signalledAt;
  std::string saveError;
  auto saveNow = [&] {
    try {
      coordinator.save();
    } catch (const PermanentError& error) {
      if (saveError.empty()) saveError = error.what();
      coordinator.stop(error.what());
    }
    lastSave = Clock::now();
  };
  auto lost = [&](const std::string& why) {
    coordinator.stop("lost");
    compute.quit();
    saveNow();
    progress.finish(coordinator.completed(), false);
    abortAllRanks(messenger.comm(), "perm: " + why + "; stopped after " + std::to_string(coordinator.completed()) +
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
        coordinator.stop("perm: internal error: a malformed report from rank " + std::to_string(rank));
        continue;
      }
      for (const auto& [chunk, sum] : report->chunks)
        coordinator.record(rank, chunk, ChunkOutcome<Sum>{sum, false, false});
      if (report->flags & kOverflow) coordinator.record(rank, -1, ChunkOutcome<Sum>{0, false, true});
      if (report->flags & kInterrupted) coordinator.stop("interrupted");
      if (report->flags & kFinal) peer.final = true;
      if ((report->flags & kWantsWork) && !peer.told) {
        std::vector<int64_t> batch = coordinator.grant(rank);
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
      coordinator.stop("interrupted");
      if (!signalledAt) {
        signalledAt = Clock::now();
        saveNow();  // mpirun may kill this rank at any moment now
      }
    }
    if (coordinator.stopping())
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
    progress.update(coordinator.completed());
    if (!options.checkpointPath.empty() && secondsSince(lastSave) >= kCheckpointIntervalSeconds) saveNow();
    if (allFinal && compute.idle()) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  compute.quit();
  saveNow();
  const int64_t completed = coordinator.completed();
  progress.finish(completed, completed == plan.chunks);
  if (options.progress == ProgressMode::On) std::fprintf(stderr, "%s\n", coordinator.distributionText().c_str());
  if (!saveError.empty()) return saveError;
  return coordinator.failure();
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
  Hello mine{static_cast<int64_t>(matrix.fingerprint), std::string(mode) == "exact", engine.parallelism()};
  std::vector<Hello> hellos(placement.size);
  MPI_Request request;
  messenger.check(MPI_Iallgather(&mine, 3, MPI_INT64_T, hellos.data(), 3, MPI_INT64_T, messenger.comm(), &request),
                  "allgather");
  messenger.await(request, "the start of a permanent");
  for (int rank = 1; rank < placement.size; ++rank)
    if (hellos[rank].fingerprint != hellos[0].fingerprint || hellos[rank].exact != hellos[0].exact)
      throw PermanentError("perm: rank " + std::to_string(rank) +
                           " computes a different permanent than rank 0 (another matrix, or float against exact); "
                           "every rank must run the same program on the same input");

  std::optional<Coordinator<Sum>> coordinator;
  std::string failure;
  if (placement.rank == 0) {
    coordinator.emplace(matrix, mode, options, hellos);
    try {
      coordinator->resume();
    } catch (const PermanentError& error) {
      failure = error.what();
    }
    if (failure.empty() && options.progress == ProgressMode::On)
      std::fprintf(stderr, "perm: %d ranks (rank 0: %s), %lld of %lld chunks done before\n", placement.size,
                   engine.description().c_str(), static_cast<long long>(coordinator->doneBefore()),
                   static_cast<long long>(coordinator->plan().chunks));
  }
  broadcastText(messenger, failure);
  if (!failure.empty()) throw PermanentError(failure);

  if (placement.rank == 0) {
    failure = coordinate(messenger, *coordinator, engine, placement.size, options);
  } else {
    serve(messenger, engine, planChunks(matrix.n).chunkSize);
  }

  // Rank 0's sum (or failure), on every rank.
  int64_t words[2] = {0, 0};
  if (placement.rank == 0 && failure.empty()) {
    try {
      encode(coordinator->total(), words);
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
