// How the ranks of a permanent talk: nonblocking messages of int64 words
// and collectives, polled against timeouts, so that a lost rank stops the
// run instead of hanging it.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tcc::rt::permanent {

using Clock = std::chrono::steady_clock;
inline constexpr auto kPollInterval = std::chrono::microseconds(200);

double secondsSince(Clock::time_point start);
// A rank silent this long is taken as lost (TCC_PERMANENT_RANK_TIMEOUT
// seconds; 60 by default).
double silenceSeconds();
std::string mpiErrorText(int code);
// An unrecoverable state (a lost rank, failed communication): the run cannot
// finish collectively, so after saying why, every rank is stopped.
[[noreturn]] void abortAllRanks(MPI_Comm comm, const std::string& message);

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
void broadcastText(Messenger& messenger, std::string& text);

}  // namespace tcc::rt::permanent
