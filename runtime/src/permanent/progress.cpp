#include "progress.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace tcc::rt::permanent {
namespace {

constexpr double kAutoDelaySeconds = 3;

std::string durationText(double seconds) {
  char text[32];
  if (seconds < 60) std::snprintf(text, sizeof text, "%.0f s", seconds);
  else if (seconds < 3600) std::snprintf(text, sizeof text, "%dm%02ds", int(seconds) / 60, int(seconds) % 60);
  else if (seconds < 86400 * 2) std::snprintf(text, sizeof text, "%dh%02dm", int(seconds / 3600), int(seconds / 60) % 60);
  else std::snprintf(text, sizeof text, "%.1f days", seconds / 86400);
  return text;
}

}  // namespace

ProgressReporter::ProgressReporter(ProgressMode mode, int64_t totalChunks, uint64_t iterationsPerChunk,
                                   int64_t chunksDoneBefore)
    : mode_(mode), terminal_(isatty(STDERR_FILENO) == 1), totalChunks_(totalChunks),
      chunksDoneBefore_(chunksDoneBefore), iterationsPerChunk_(iterationsPerChunk), start_(Clock::now()),
      lastPrint_(start_) {
  if (mode_ == ProgressMode::Auto && !terminal_) mode_ = ProgressMode::Off;
}

void ProgressReporter::update(int64_t chunksDone) {
  if (mode_ == ProgressMode::Off) return;
  auto now = Clock::now();
  double sinceStart = std::chrono::duration<double>(now - start_).count();
  if (mode_ == ProgressMode::Auto && sinceStart < kAutoDelaySeconds) return;
  double interval = terminal_ ? 1.0 : 5.0;
  if (std::chrono::duration<double>(now - lastPrint_).count() < interval) return;
  lastPrint_ = now;
  print(chunksDone, terminal_ ? "" : "\n");
}

void ProgressReporter::finish(int64_t chunksDone, bool completed) {
  if (mode_ == ProgressMode::On || (printed_ && terminal_)) print(chunksDone, "\n");
}

void ProgressReporter::print(int64_t chunksDone, const char* ending) {
  double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  double iterations = double(iterationsPerChunk_) * double(chunksDone);
  double total = double(iterationsPerChunk_) * double(totalChunks_);
  double rate = seconds > 0 ? double(iterationsPerChunk_) * double(chunksDone - chunksDoneBefore_) / seconds : 0;
  std::string eta = chunksDone >= totalChunks_ ? "done in " + durationText(seconds)
                    : rate > 0                 ? "ETA " + durationText((total - iterations) / rate)
                                               : "ETA unknown";
  std::fprintf(stderr, "%sperm: %5.1f%% (%lld/%lld chunks, %.3g of %.3g iterations), %.3g it/s, %s%s",
               terminal_ ? "\r\033[K" : "", 100.0 * double(chunksDone) / double(totalChunks_),
               static_cast<long long>(chunksDone), static_cast<long long>(totalChunks_), iterations, total, rate,
               eta.c_str(), ending);
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace tcc::rt::permanent
