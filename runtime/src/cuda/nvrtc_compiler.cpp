// CUDA C++ to a cubin with NVRTC, every call checked.
#include <nvrtc.h>

#include <memory>

#include "tcc/runtime/cuda.h"

namespace tcc::rt::cuda {

namespace {

void check(nvrtcResult result, const char* call) {
  if (result != NVRTC_SUCCESS) throw CudaError(std::string(call) + " failed: " + nvrtcGetErrorString(result));
}

}  // namespace

std::string compileToCubin(const std::string& source, const std::string& architecture, const std::string& name,
                           bool fusedMultiplyAdd) {
  nvrtcProgram program;
  check(nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
  std::unique_ptr<nvrtcProgram, void (*)(nvrtcProgram*)> owner(&program, [](nvrtcProgram* p) { nvrtcDestroyProgram(p); });
  std::string archOption = "--gpu-architecture=" + architecture;
  const char* options[] = {archOption.c_str(), "--std=c++17", "-default-device",
                           fusedMultiplyAdd ? "--fmad=true" : "--fmad=false"};
  nvrtcResult compiled = nvrtcCompileProgram(program, 4, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t logSize = 0;
    check(nvrtcGetProgramLogSize(program, &logSize), "nvrtcGetProgramLogSize");
    std::string log(logSize, '\0');
    check(nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
    throw CudaError("NVRTC could not compile the generated kernels for " + architecture + ":\n" + log);
  }
  size_t size = 0;
  check(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
  std::string cubin(size, '\0');
  check(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
  return cubin;
}

}  // namespace tcc::rt::cuda
