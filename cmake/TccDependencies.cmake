# Every dependency comes from Debian 12 packages (see scripts/setup.sh).
# Required: Boost (Spirit X3, header-only), CLI11, GoogleTest.
# Optional parts say so at configure time and are skipped when absent.

find_package(Boost 1.74 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenMP)

if(TCC_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

find_package(benchmark CONFIG QUIET)
if(NOT benchmark_FOUND)
  message(STATUS "tcc: Google Benchmark not found; Google Benchmark programs in bench/ are skipped")
endif()

find_package(Eigen3 3.3 CONFIG QUIET)
if(NOT Eigen3_FOUND)
  message(STATUS "tcc: Eigen 3 not found; Eigen baselines in bench/ are skipped")
endif()

set(TCC_HAVE_JIT OFF)
if(TCC_ENABLE_JIT)
  find_package(LLVM 16 CONFIG QUIET PATHS /usr/lib/llvm-16/lib/cmake/llvm NO_DEFAULT_PATH)
  find_package(Clang CONFIG QUIET PATHS /usr/lib/llvm-16/lib/cmake/clang NO_DEFAULT_PATH)
  if(LLVM_FOUND AND Clang_FOUND)
    set(TCC_HAVE_JIT ON)
    message(STATUS "tcc: in-process JIT with LLVM ${LLVM_PACKAGE_VERSION} / Clang 16")
  else()
    message(STATUS "tcc: LLVM/Clang 16 not found; the in-process JIT is skipped (system compiler path only)")
  endif()
endif()

find_package(MLIR CONFIG QUIET PATHS /usr/lib/llvm-16/lib/cmake/mlir NO_DEFAULT_PATH)
if(MLIR_FOUND)
  message(STATUS "tcc: MLIR 16 found at ${MLIR_DIR}")
else()
  message(STATUS "tcc: MLIR 16 not found; MLIR interop and cross-checks are skipped")
endif()

# OpenMPI (Debian: libopenmpi-dev openmpi-bin) shares a permanent over the
# ranks mpirun starts; without it tcc runs on one process as before.
set(TCC_HAVE_MPI OFF)
if(TCC_ENABLE_MPI)
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(TCC_HAVE_MPI ON)
    message(STATUS "tcc: MPI ${MPI_C_VERSION} found (mpiexec: ${MPIEXEC_EXECUTABLE}); permanents run over mpirun ranks")
  endif()
endif()
if(NOT TCC_HAVE_MPI)
  message(STATUS "tcc: MPI not found or disabled; permanents run on one process, and the MPI tests are skipped")
endif()

find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND)
  message(STATUS "tcc: CUDA toolkit ${CUDAToolkit_VERSION} found (nvcc: ${CUDAToolkit_NVCC_EXECUTABLE})")
else()
  message(STATUS "tcc: CUDA toolkit not found; --target cuda still writes .cu files, but running them (NVRTC), "
                 "the nvcc checks, the gpu tests and bench/cuda are skipped")
endif()
