// Compiling a lowered program to machine code and running it on tensors.
#include <chrono>

#include "floating_point.h"
#include "gpu_launch.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/ism/kernel_api.h"
#include "tcc/jit/kernel_cache.h"
#include "tcc/lowering/lower.h"
#include "tcc/tcc.h"

namespace tcc {

namespace {

using Clock = std::chrono::steady_clock;
using KernelEntry = int (*)(tcc_tensor**);

std::string modeName(const TensorVar& tensor, int mode) {
  return tensor.name() + " mode " + std::to_string(mode + 1);
}

// Sizes of symbols and index variables, checked as tensors are bound.
class ShapeBinder {
 public:
  void bindTensor(const TensorVar& tensor, const std::vector<int32_t>& dims) {
    if (static_cast<int>(dims.size()) != tensor.order())
      throw Error("tensor " + tensor.name() + " is declared with " + std::to_string(tensor.order()) +
                  " modes but the bound tensor has " + std::to_string(dims.size()));
    for (int mode = 0; mode < tensor.order(); ++mode) {
      const ir::Dimension& declared = tensor.dimension(mode);
      if (declared.isFixed() && declared.size() != dims[mode])
        throw Error("shape mismatch: " + modeName(tensor, mode) + " is declared " + std::to_string(declared.size()) +
                    " but the bound tensor has " + std::to_string(dims[mode]));
      if (declared.isSymbolic()) {
        auto [it, inserted] = symbols_.emplace(declared.symbol(), std::make_pair(dims[mode], modeName(tensor, mode)));
        if (!inserted && it->second.first != dims[mode])
          throw Error("shape mismatch: dimension " + declared.symbol() + " is " + std::to_string(it->second.first) +
                      " (from " + it->second.second + ") but " + modeName(tensor, mode) + " has " +
                      std::to_string(dims[mode]));
      }
    }
    bound_[tensor.name()] = dims;
  }

  // Index variables of one statement take their sizes from bound tensors.
  void bindIndexVars(const ir::IndexStmt& statement) {
    indexSizes_.clear();
    for (const auto& access : ir::accessesOf(statement)) {
      auto found = bound_.find(access.tensor().name());
      if (found == bound_.end()) continue;
      for (size_t mode = 0; mode < access.indices().size(); ++mode) {
        const IndexVar& var = access.indices()[mode];
        std::string where = modeName(access.tensor(), static_cast<int>(mode));
        auto [it, inserted] = indexSizes_.emplace(var, std::make_pair(found->second[mode], where));
        if (!inserted && it->second.first != found->second[mode])
          throw Error("shape mismatch: index " + var.name() + " ranges over " + std::to_string(it->second.first) +
                      " in " + it->second.second + " but over " + std::to_string(found->second[mode]) + " in " +
                      where);
      }
    }
  }

  std::vector<int32_t> outputDims(const ir::Access& lhs) {
    std::vector<int32_t> dims;
    const TensorVar& tensor = lhs.tensor();
    for (int mode = 0; mode < tensor.order(); ++mode) {
      const ir::Dimension& declared = tensor.dimension(mode);
      auto fromIndex = indexSizes_.find(lhs.indices()[mode]);
      if (declared.isFixed()) {
        dims.push_back(static_cast<int32_t>(declared.size()));
      } else if (declared.isSymbolic() && symbols_.count(declared.symbol())) {
        dims.push_back(symbols_.at(declared.symbol()).first);
      } else if (fromIndex != indexSizes_.end()) {
        dims.push_back(fromIndex->second.first);
      } else {
        throw Error("cannot tell the size of " + modeName(tensor, mode) + ": declare it or bind a tensor that uses " +
                    lhs.indices()[mode].name());
      }
      if (fromIndex != indexSizes_.end() && fromIndex->second.first != dims.back())
        throw Error("shape mismatch: index " + lhs.indices()[mode].name() + " ranges over " +
                    std::to_string(fromIndex->second.first) + " in " + fromIndex->second.second + " but " +
                    modeName(tensor, mode) + " has " + std::to_string(dims.back()));
    }
    return dims;
  }

 private:
  std::map<std::string, std::pair<int32_t, std::string>> symbols_;
  std::map<IndexVar, std::pair<int32_t, std::string>> indexSizes_;
  std::map<std::string, std::vector<int32_t>> bound_;
};

Tensor toDeclared(const Tensor& tensor, const TensorVar& declared) {
  rt::TensorFormat format = toRuntimeFormat(declared.format());
  rt::ValueType type = toRuntimeType(declared.datatype());
  if (tensor.format() == format && tensor.valueType() == type) return tensor;
  return rt::convert(tensor, format, type);
}

// A result stored in its declared format. One the format cannot hold (two
// coordinates under one parent of a unique singleton level) is refused for
// these inputs, as an input that cannot be converted is.
Tensor resultInDeclaredFormat(const Tensor& result, const TensorVar& declared) {
  try {
    return toDeclared(result, declared);
  } catch (const std::invalid_argument& refused) {
    throw Error("the result " + declared.name() + " cannot be stored in its declared format " +
                declared.format().toString() + ": " + refused.what());
  }
}

// A bound tensor's storage is checked against its format's promises (a
// kernel trusts them, and breaking one gives wrong numbers, not a crash).
void checkInput(const std::string& name, const Tensor& tensor) {
  try {
    tensor.validate();
  } catch (const std::invalid_argument& broken) {
    throw Error("tensor " + name + " (" + tensor.format().toString() + ") does not keep its format's promises: " +
                broken.what());
  }
}

// The tensors a run reads and writes, by name: the caller's inputs are
// borrowed where they already have their declared format and type (a
// kernel never writes its inputs, so nothing is copied), converted inputs
// and outputs are owned.
class BoundTensors {
 public:
  void bindInput(const std::string& name, const Tensor& tensor, const TensorVar& declared) {
    checkInput(name, tensor);
    rt::TensorFormat format = toRuntimeFormat(declared.format());
    rt::ValueType type = toRuntimeType(declared.datatype());
    if (tensor.format() == format && tensor.valueType() == type) {
      borrowed_.insert_or_assign(name, &tensor);
      owned_.erase(name);
      return;
    }
    try {
      own(name, rt::convert(tensor, format, type));
    } catch (const std::invalid_argument& refused) {
      throw Error("tensor " + name + " cannot be converted to its declared format " + declared.format().toString() +
                  ": " + refused.what());
    }
  }
  void own(const std::string& name, Tensor tensor) {
    owned_.insert_or_assign(name, std::move(tensor));
    borrowed_.erase(name);
  }
  bool contains(const std::string& name) const { return owned_.count(name) || borrowed_.count(name); }
  // The tensor bound to `from` bound to `to` instead.
  void rename(const std::string& from, const std::string& to) {
    if (auto found = borrowed_.find(from); found != borrowed_.end()) {
      borrowed_.insert_or_assign(to, found->second);
      borrowed_.erase(found);
      owned_.erase(to);
      return;
    }
    own(to, std::move(owned_.at(from)));
    owned_.erase(from);
  }
  void erase(const std::string& name) {
    borrowed_.erase(name);
    owned_.erase(name);
  }
  const Tensor& at(const std::string& name) const {
    if (auto found = borrowed_.find(name); found != borrowed_.end()) return *found->second;
    return owned_.at(name);
  }
  // The statements' outputs, moved out.
  std::map<std::string, Tensor> takeOutputs(const std::vector<CompiledStatement>& statements) {
    std::map<std::string, Tensor> outputs;
    for (const auto& statement : statements) {
      if (statement.temporary) continue;
      const std::string& name = statement.output.name();
      if (outputs.count(name)) continue;  // written by an earlier statement too: moved out already
      if (auto found = owned_.find(name); found != owned_.end()) outputs.emplace(name, std::move(found->second));
    }
    return outputs;
  }

 private:
  std::map<std::string, const Tensor*> borrowed_;
  std::map<std::string, Tensor> owned_;
};

// An assembled output is validated as it is taken back; storage that breaks
// its format is a compiler bug, reported as such rather than passed on.
Tensor adoptOutput(tcc_tensor&& filled, const CompiledStatement& statement) {
  try {
    return Tensor::adopt(std::move(filled));
  } catch (const std::invalid_argument& broken) {
    throw Error("kernel " + statement.function.name + " assembled output " + statement.computedOutput.name() +
                " with broken storage (a compiler bug): " + broken.what());
  }
}

}  // namespace

bool hugePages(const CompileOptions& options) { return options.hugePages.value_or(rt::hugePageMinBytes() > 0); }

Kernel compile(const Program& program, const CompileOptions& options) {
  auto start = Clock::now();
  Kernel kernel;
  kernel.program_ = program;
  kernel.lowered_ = lowerProgram(program, options);
  if (kernel.lowered_.target == frontend::Target::Cuda) {
    kernel.cudaModule_ = detail::loadCudaKernels(kernel.lowered_, detail::cudaArchitectureFor(program, options),
                                                 options.useKernelCache);
    kernel.compileSeconds_ = std::chrono::duration<double>(Clock::now() - start).count();
    return kernel;
  }
  jit::CompileOptions jitOptions;
  jitOptions.backend = options.backend;
  for (const auto& statement : kernel.lowered_.statements) jitOptions.openmp |= statement.function.usesOpenMP;
  // After the JIT's own -ffp-contract=off, so fast mode's flags win; the
  // kernel cache keys on them.
  jitOptions.extraFlags = lowering::cppFloatingPointFlags(detail::toLowering(kernel.lowered_.floatingPoint));
  if (!hugePages(options)) jitOptions.extraFlags.push_back("-DTCC_HUGE_PAGE_MIN_BYTES=0");
  kernel.module_ = options.useKernelCache
                       ? jit::KernelCache::shared().getOrCompile(kernel.lowered_.cpp, jitOptions, "tcc " TCC_VERSION)
                       : jit::compile(kernel.lowered_.cpp, jitOptions);
  for (const auto& statement : kernel.lowered_.statements)
    kernel.entryPoints_.push_back(kernel.module_->symbol(statement.function.name));
  kernel.compileSeconds_ = std::chrono::duration<double>(Clock::now() - start).count();
  return kernel;
}

Kernel::EntryPoint Kernel::entryPoint(size_t statement) const {
  if (lowered_.target != frontend::Target::Cpu) throw Error("entry points are for kernels of the cpu target");
  if (statement >= entryPoints_.size()) throw Error("no statement " + std::to_string(statement));
  return reinterpret_cast<EntryPoint>(entryPoints_[statement]);
}

std::map<std::string, Tensor> Kernel::run(const std::map<std::string, Tensor>& inputs) const {
  RunResult result = run(inputs, RunOptions{});
  std::map<std::string, Tensor> outputs;
  for (const auto& statement : lowered_.statements) {
    if (statement.temporary) continue;
    const std::string& name = statement.output.name();
    if (!outputs.count(name)) outputs.emplace(name, std::move(result.tensors.at(name)));
  }
  return outputs;
}

RunResult Kernel::run(const std::map<std::string, Tensor>& inputs, const RunOptions& options) const {
  for (const auto& [name, tensor] : inputs)
    if (!program_.syntax().findTensor(name)) throw Error("no tensor named " + name + " is declared");
  if (options.repeat < 1) throw Error("repeat must be at least 1");

  ShapeBinder shapes;
  BoundTensors bound;
  for (const auto& [name, tensor] : inputs) {
    const TensorVar& declared = *program_.syntax().findTensor(name);
    shapes.bindTensor(declared, tensor.dims());
    bound.bindInput(name, tensor, declared);
  }

  RunResult result;
  result.seconds.assign(options.repeat, 0.0);
  rt::PermanentOptionsScope permanentOptions(options.permanent);
  // Cuda: each tensor is copied to the device once and reused by every run
  // and every statement that reads it.
  const bool gpu = lowered_.target == frontend::Target::Cuda;
  std::map<std::string, std::unique_ptr<rt::cuda::DeviceTensor>> onDevice;
  std::map<std::string, std::string> deviceCopiedFrom;  // a converted copy's key in onDevice -> its tensor
  for (size_t index = 0; index < lowered_.statements.size(); ++index) {
    const CompiledStatement& statement = lowered_.statements[index];
    const ir::IndexStmt& source = statement.statement;
    const std::string& outputName = statement.output.name();
    // What the device holds of the tensor this statement overwrites is
    // stale from here on (a later statement copies its new value).
    std::unique_ptr<rt::cuda::DeviceTensor> outputBefore;
    if (auto found = onDevice.find(outputName); found != onDevice.end()) {
      outputBefore = std::move(found->second);
      onDevice.erase(found);
    }
    std::erase_if(deviceCopiedFrom, [&](const auto& copy) {
      if (copy.second != outputName) return false;
      onDevice.erase(copy.first);
      return true;
    });
    // An update in place reads the output's values from before it under
    // another name (see CompiledStatement::priorValues): the output's
    // storage (on the host and the device) is rebound to that name, and
    // let go once the statement that writes the output has run.
    const std::string priorName = statement.priorValues.defined() ? statement.priorValues.name() : "";
    if (!priorName.empty() && !bound.contains(priorName)) {
      if (!bound.contains(outputName))
        throw Error("`" + ir::toString(program_.statements()[statement.programStatement]) + "` reads " + outputName +
                    "'s values from before it, and " + outputName + " has none: bind " + outputName +
                    " as an input or write it in an earlier statement");
      bound.rename(outputName, priorName);
      shapes.bindTensor(statement.priorValues, bound.at(priorName).dims());
      if (outputBefore) onDevice[priorName] = std::move(outputBefore);
    }
    struct ReleasePriorValues {
      BoundTensors& bound;
      std::map<std::string, std::unique_ptr<rt::cuda::DeviceTensor>>& onDevice;
      std::string name;
      ~ReleasePriorValues() {
        if (name.empty()) return;
        bound.erase(name);
        onDevice.erase(name);
      }
    } releasePriorValues{bound, onDevice, statement.temporary ? "" : priorName};
    for (const auto& tensor : ir::tensorsRead(source))
      if (!bound.contains(tensor.name()) && !(tensor == statement.output))
        throw Error("no input bound for tensor " + tensor.name());
    shapes.bindIndexVars(source);
    const auto* assignment = source.as<ir::AssignmentNode>();
    std::vector<int32_t> outputDims = shapes.outputDims(assignment->lhs);
    shapes.bindTensor(statement.output, outputDims);

    const TensorVar& computed = statement.computedOutput;
    rt::TensorFormat computedFormat = toRuntimeFormat(computed.format());
    rt::ValueType type = toRuntimeType(computed.datatype());
    bool assembled = computed.order() > 0 && !computed.format().isAllDense();
    Tensor output;
    if (gpu) {
      // A sparse output's arrays are allocated by the host part and handed
      // to this view, then copied back; a dense one is zeroed on the device.
      tcc_tensor assembledView{};
      if (assembled) {
        assembledView = Tensor::emptyAssembledOutput(outputDims, computedFormat, type);
      } else {
        output = Tensor(outputDims, computedFormat, type);
        onDevice[computed.name()] = std::make_unique<rt::cuda::DeviceTensor>(output.abiView());
      }
      // Inputs read in another format (another storage order, a dense copy
      // of an N:M matrix) are converted once, before the runs, and copied
      // to the device like the others. Each statement names its own
      // copies (never as a tensor of the program): a copy is the one of an
      // earlier statement only in the same format.
      std::map<std::string, std::string> convertedFrom;
      for (const auto& [input, copy] : statement.convertedInputs) convertedFrom[copy.name()] = input;
      std::vector<tcc_tensor*> pointers;
      for (const auto& parameter : statement.parameters) {
        if (assembled && parameter.name() == computed.name()) {
          pointers.push_back(&assembledView);
          continue;
        }
        const bool converted = convertedFrom.count(parameter.name()) > 0;
        auto& device = onDevice[converted ? parameter.name() + " " + parameter.format().toString() : parameter.name()];
        if (!device) {
          auto source = convertedFrom.find(parameter.name());
          if (source == convertedFrom.end()) {
            device = std::make_unique<rt::cuda::DeviceTensor>(bound.at(parameter.name()).abiView());
          } else {
            Tensor copy = toDeclared(bound.at(source->second), parameter);
            device = std::make_unique<rt::cuda::DeviceTensor>(copy.abiView());
            deviceCopiedFrom[parameter.name() + " " + parameter.format().toString()] = source->second;
          }
        }
        pointers.push_back(&device->view());
      }
      rt::cuda::EventTimer timer;
      std::vector<rt::cuda::DeviceBuffer> outputArrays;
      for (int run = 0; run < options.repeat; ++run) {
        if (!assembled) onDevice[computed.name()]->zeroValues();
        if (!outputArrays.empty()) rt::cuda::synchronize();  // the previous run's, once it is done
        outputArrays.clear();
        std::vector<std::string> launched;
        timer.start();
        int status = detail::launchGpuFunction(lowered_.gpuFunctions[index], *cudaModule_, pointers, &launched,
                                               &outputArrays);
        if (run == options.repeat - 1) result.gpuKernels.insert(result.gpuKernels.end(), launched.begin(), launched.end());
        result.seconds[run] += timer.stopSeconds();
        if (status == lowering::kBrokenBoundStatus)
          throw Error("a bound(...) of the schedule does not hold for these inputs: a dimension differs from its "
                      "MaxExact bound or exceeds its MaxConstraint bound");
        if (status != 0) throw Error("kernel " + statement.function.name + " failed with status " + std::to_string(status));
      }
      rt::cuda::synchronize();
      if (assembled) {
        output = adoptOutput(detail::downloadAssembledOutput(assembledView), statement);
        bound.own(statement.output.name(),
                  computed == statement.output ? std::move(output) : resultInDeclaredFormat(output, statement.output));
        continue;
      }
      onDevice[computed.name()]->downloadValues(output.abiView());
      bound.own(statement.output.name(), std::move(output));
      continue;
    }
    // A dense vector output that the kernel stores whole (SpMV over CSR
    // rows, say) is not zeroed first; any other dense output is.
    const bool overwritten = !assembled && computed.order() == 1 &&
                             lowering::storesEveryValueOfVectorOutput(statement.function);
    for (int run = 0; run < options.repeat; ++run) {
      // Inputs read in another storage order are converted for every run,
      // inside the time measured.
      auto start = Clock::now();
      std::map<std::string, Tensor> converted;
      for (const auto& [input, copy] : statement.convertedInputs)
        converted.emplace(copy.name(), toDeclared(bound.at(input), copy));
      std::vector<tcc_tensor> views;
      int outputSlot = -1;
      if (!assembled)
        output = overwritten ? Tensor::denseForOverwrite(outputDims, computedFormat, type)
                             : Tensor(outputDims, computedFormat, type);
      for (const auto& parameter : statement.parameters) {
        if (parameter.name() == computed.name()) {
          outputSlot = static_cast<int>(views.size());
          views.push_back(assembled ? Tensor::emptyAssembledOutput(outputDims, computedFormat, type) : output.abiView());
        } else if (auto copy = converted.find(parameter.name()); copy != converted.end()) {
          views.push_back(copy->second.abiView());
        } else {
          views.push_back(bound.at(parameter.name()).abiView());
        }
      }
      std::vector<tcc_tensor*> pointers;
      for (auto& view : views) pointers.push_back(&view);
      auto entry = reinterpret_cast<KernelEntry>(entryPoints_[index]);
      int status = entry(pointers.data());
      result.seconds[run] += std::chrono::duration<double>(Clock::now() - start).count();
      if (status == lowering::kBrokenBoundStatus)
        throw Error("a bound(...) of the schedule does not hold for these inputs: a dimension differs from its "
                    "MaxExact bound or exceeds its MaxConstraint bound");
      if (status == lowering::kSparseWorkspaceStatus)
        throw Error("kernel " + statement.function.name + ": its sparse workspace failed: " +
                    tcc_ism_kernel_last_error());
      if (status == rt::kPermanentFailedStatus) throw Error(tcc_permanent_last_error());
      if (status != 0) throw Error("kernel " + statement.function.name + " failed with status " + std::to_string(status));
      if (assembled) output = adoptOutput(std::move(views[outputSlot]), statement);
    }
    bound.own(statement.output.name(),
              computed == statement.output ? std::move(output) : resultInDeclaredFormat(output, statement.output));
  }
  result.tensors = bound.takeOutputs(lowered_.statements);
  return result;
}

}  // namespace tcc
