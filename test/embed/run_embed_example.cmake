file(REMOVE_RECURSE ${TCC_SCRATCH_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  message("${output}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${ARGN}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${TCC_BUILD_DIR} --prefix ${TCC_SCRATCH_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${TCC_EXAMPLE_DIR} -B ${TCC_SCRATCH_DIR}/build -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${TCC_SCRATCH_DIR}/prefix
    # An instrumented build of tcc needs an instrumented application, built
    # by the same compiler (its sanitizer runtime).
    -DCMAKE_CXX_COMPILER=${TCC_EMBED_CXX}
    "-DCMAKE_CXX_FLAGS=${TCC_EMBED_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${TCC_EMBED_FLAGS}")
run(${CMAKE_COMMAND} --build ${TCC_SCRATCH_DIR}/build)
run(${TCC_SCRATCH_DIR}/build/embed_spmv)
