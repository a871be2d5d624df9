# tcc compile --target cuda EXAMPLE -o WORK/kernel.cu, then nvcc compiles it alone.
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TCC} compile ${EXAMPLE} --target cuda -o ${WORK}/kernel.cu
                RESULT_VARIABLE status ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "tcc compile --target cuda ${EXAMPLE} failed (${status}):\n${errors}")
endif()
execute_process(COMMAND ${NVCC} -arch=sm_90 -Werror all-warnings -c ${WORK}/kernel.cu -o ${WORK}/kernel.o
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "nvcc could not compile the generated ${WORK}/kernel.cu (${status}):\n${output}${errors}")
endif()
