# `tcc run --target cuda` either runs (on a GPU machine) or, where there is
# no GPU (or no CUDA toolkit in the build), exits non-zero with one clear
# line naming the reason: never a hang, a crash or a wrong result.
execute_process(COMMAND ${TCC} run ${EXAMPLES}/gpu/spmv_default.tc --target cuda
                        --in A=${EXAMPLES}/data/494_bus.mtx --in x=${EXAMPLES}/data/x494.tns
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors TIMEOUT 100)
if(status EQUAL 0)
  if(NOT output MATCHES "y: .*494")
    message(FATAL_ERROR "tcc run --target cuda succeeded without printing y:\n${output}${errors}")
  endif()
  message(STATUS "a GPU is present; the kernel ran:\n${output}")
  return()
endif()
if(NOT status EQUAL 1)
  message(FATAL_ERROR "expected exit status 1, got '${status}':\n${output}${errors}")
endif()
if(NOT errors MATCHES "^tcc: error: (no CUDA driver on this machine|no CUDA device is visible|this tcc was built without the CUDA toolkit)")
  message(FATAL_ERROR "expected a clear 'no GPU' error, got:\n${errors}")
endif()
message(STATUS "refused as expected: ${errors}")
