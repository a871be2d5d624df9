// Shared by the OpenMP benchmarks: a thread count every runtime in the
// process honours.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

// Every OpenMP runtime in the process (the library's, the kernels', a
// hand-written peer's) reads its thread count when it starts, so the count
// goes into the environment and the process starts again. Returns only when
// OMP_NUM_THREADS already says `threads`; false if the restart failed.
inline bool runWithOmpThreads(int threads, char** argv) {
  const std::string wanted = std::to_string(threads);
  const char* current = std::getenv("OMP_NUM_THREADS");
  if (current && wanted == current) return true;
  setenv("OMP_NUM_THREADS", wanted.c_str(), 1);
  execv("/proc/self/exe", argv);
  std::perror("execv");
  return false;
}
