# Runs racy_spmv.tc under ThreadSanitizer until the race is reported with a
# frame in the loaded kernel. A run can miss it: with dynamically scheduled
# chunks, one thread may take every chunk of every repetition before the
# others wake, so up to five runs of 50 repetitions each.
set(ENV{OMP_NUM_THREADS} 4)
foreach(attempt RANGE 1 5)
  execute_process(COMMAND ${TCC} run ${PROGRAM} --in A=${DATA}/494_bus.mtx --in x=${DATA}/x494.tns --repeat 50
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(output MATCHES "WARNING: ThreadSanitizer: data race" AND output MATCHES "tcc-kernel-")
    message(STATUS "run ${attempt}: the race in the kernel was reported (exit status ${status})")
    return()
  endif()
endforeach()
message(FATAL_ERROR "no data race reported in a kernel that has one; the last run's output:\n${output}")
