#include "messenger.h"

#include <cstdio>
#include <cstdlib>

namespace tcc::rt::permanent {

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double silenceSeconds() {
  constexpr double kDefaultSilenceSeconds = 60;
  const char* text = std::getenv("TCC_PERMANENT_RANK_TIMEOUT");
  double seconds = text ? std::atof(text) : 0;
  return seconds > 0 ? seconds : kDefaultSilenceSeconds;
}

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

void abortAllRanks(MPI_Comm comm, const std::string& message) {
  std::fprintf(stderr, "tcc: error: %s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
  std::_Exit(1);
}

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

}  // namespace tcc::rt::permanent
