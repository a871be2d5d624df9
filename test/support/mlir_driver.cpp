#include "mlir_driver.h"

#include <bit>
#include <cstdio>
#include <sstream>
#include <string>

#include "tcc/ir/format.h"

namespace tcc::test {

namespace {

std::string constantLiteral(double value, ir::Datatype type) {
  char buffer[32];
  switch (type) {
    case ir::Datatype::Float64:
      std::snprintf(buffer, sizeof buffer, "0x%016llX", static_cast<unsigned long long>(std::bit_cast<uint64_t>(value)));
      return buffer;
    case ir::Datatype::Float32:
      std::snprintf(buffer, sizeof buffer, "0x%08X", std::bit_cast<uint32_t>(static_cast<float>(value)));
      return buffer;
    case ir::Datatype::Float16: {  // a value float16 holds: exact in 17 digits
      std::snprintf(buffer, sizeof buffer, "%.17e", value);
      return buffer;
    }
    default: return std::to_string(static_cast<int64_t>(value));
  }
}

// Prints one element value exactly: integers as they are, floats as bits.
void printValue(std::ostream& out, const std::string& value, ir::Datatype type, const std::string& indent) {
  if (type == ir::Datatype::Float64) {
    out << indent << "%bits = arith.bitcast " << value << " : f64 to i64\n" << indent << "vector.print %bits : i64\n";
  } else if (type == ir::Datatype::Float32) {
    out << indent << "%bits = arith.bitcast " << value << " : f32 to i32\n" << indent << "vector.print %bits : i32\n";
  } else {
    out << indent << "vector.print " << value << " : " << lowering::mlirElementType(type) << "\n";
  }
}

}  // namespace

std::string mlirDriverModule(const lowering::MlirKernel& kernel, const MlirDriverRequest& request) {
  std::ostringstream declarations, main;
  declarations << kernel.declarations;
  const ir::TensorVar& output = kernel.output;
  ir::Datatype type = output.datatype();
  std::string elementType = lowering::mlirElementType(type);

  main << "func.func private @getTensorFilename(index) -> (!llvm.ptr<i8>)\n"
       << "func.func private @rtclock() -> f64\n\n"
       << "func.func @main() {\n"
       << "  %c0 = arith.constant 0 : index\n"
       << "  %c1 = arith.constant 1 : index\n"
       << "  %repeats = arith.constant " << request.repeats << " : index\n"
       ;
  std::string arguments, argumentTypes;
  int fileIndex = 0;
  for (const auto& input : kernel.inputs) {
    std::string name = "%" + input.name();
    std::string tensorType = lowering::mlirTensorType(input);
    arguments += (arguments.empty() ? "" : ", ") + name;
    argumentTypes += (argumentTypes.empty() ? "" : ", ") + tensorType;
    if (input.order() == 0) {
      main << "  " << name << ".value = arith.constant "
           << constantLiteral(request.scalarInputs.at(input.name()), input.datatype()) << " : "
           << lowering::mlirElementType(input.datatype()) << "\n"
           << "  " << name << " = tensor.from_elements " << name << ".value : " << tensorType << "\n";
      continue;
    }
    // sparse_tensor.new reads into a sparse type; a dense input is read as
    // coordinates and converted.
    ir::Format readFormat = input.format().isAllDense() ? ir::Format::coo(input.order()) : input.format();
    std::string readType = "tensor<";
    for (int mode = 0; mode < input.order(); ++mode) readType += "?x";
    readType += lowering::mlirElementType(input.datatype()) + ", " + lowering::mlirEncodingName(readFormat) + ">";
    std::string alias = lowering::mlirEncodingAlias(readFormat);
    if (kernel.declarations.find(alias) == std::string::npos && declarations.str().find(alias) == std::string::npos)
      declarations << alias << "\n";
    main << "  " << name << ".index = arith.constant " << fileIndex++ << " : index\n"
         << "  " << name << ".file = func.call @getTensorFilename(" << name << ".index) : (index) -> (!llvm.ptr<i8>)\n";
    if (readType == tensorType) {
      main << "  " << name << " = sparse_tensor.new " << name << ".file : !llvm.ptr<i8> to " << tensorType << "\n";
    } else {
      main << "  " << name << ".read = sparse_tensor.new " << name << ".file : !llvm.ptr<i8> to " << readType << "\n"
           << "  " << name << " = sparse_tensor.convert " << name << ".read : " << readType << " to " << tensorType
           << "\n";
    }
  }
  for (size_t mode = 0; mode < request.outputDims.size(); ++mode) {
    std::string size = "%size" + std::to_string(mode);
    main << "  " << size << " = arith.constant " << request.outputDims[mode] << " : index\n";
    arguments += (arguments.empty() ? "" : ", ") + size;
    argumentTypes += (argumentTypes.empty() ? "" : ", ") + std::string("index");
  }
  std::string outputType = lowering::mlirTensorType(output);
  std::string call = "func.call @" + kernel.functionName + "(" + arguments + ") : (" + argumentTypes + ") -> " + outputType;

  // rtclock() counts microseconds: each sample times a batch of calls.
  main << "  %calls = arith.constant " << request.callsPerSample << " : index\n"
       << "  %perCall = arith.constant " << std::to_string(1e9 / request.callsPerSample) << " : f64\n"
       << "  scf.for %repeat = %c0 to %repeats step %c1 {\n"
       << "    %start = func.call @rtclock() : () -> f64\n"
       << "    scf.for %call = %c0 to %calls step %c1 {\n"
       << "      %timed = " << call << "\n"
       << "      bufferization.dealloc_tensor %timed : " << outputType << "\n"
       << "    }\n"
       << "    %end = func.call @rtclock() : () -> f64\n"
       << "    %seconds = arith.subf %end, %start : f64\n"
       << "    %scaled = arith.mulf %seconds, %perCall : f64\n"
       << "    %ns = arith.fptosi %scaled : f64 to i64\n"
       << "    vector.print %ns : i64\n"
       << "  }\n";
  if (request.printResult) {
    main << "  %result = " << call << "\n";
    if (output.order() == 0) {
      main << "  %value = tensor.extract %result[] : " << outputType << "\n";
      printValue(main, "%value", type, "  ");
    } else {
      main << "  sparse_tensor.foreach in %result : " << outputType << " do {\n    ^bb0(";
      for (int mode = 0; mode < output.order(); ++mode) main << "%i" << mode << ": index, ";
      main << "%value: " << elementType << "):\n";
      for (int mode = 0; mode < output.order(); ++mode) main << "      vector.print %i" << mode << " : index\n";
      printValue(main, "%value", type, "      ");
      main << "  }\n";
    }
    main << "  bufferization.dealloc_tensor %result : " << outputType << "\n";
  }
  main << "  return\n}\n";
  return declarations.str() + "\n" + kernel.function + "\n" + main.str();
}

}  // namespace tcc::test
