// Forms of the C++ printer's loops that a benchmark can turn off, to time a
// change against the form before it in one build.
#pragma once

namespace tcc::lowering {

struct CppLoopForms {
  // Fast mode, inputs in cache: gather sums over segments (CSR rows, CSF
  // fibres) of fewer than 3 entries on average run in order, two entries a
  // trip (codegen_cpp.cpp, kShortSegments). False: the reassociated
  // short-row loops on every input, the form before.
  bool shortSegmentsInOrder = true;
  // Strict mode through GCC: a row sum's first two entries without a loop,
  // the second's add by a select (codegen_cpp.cpp, printStrictGatherSum).
  // False: the loop two a trip on every compiler, the form before.
  bool strictFirstTwoBySelect = true;
  // Strict mode through Clang: a row sum of 8 or more entries four a trip
  // after its (length mod 4) first ones (codegen_cpp.cpp,
  // printLongRowsFourATrip). False: the loop two a trip on every row, the
  // form before.
  bool strictLongRowsFourATrip = true;
};

// The forms every C++ unit printed from now on takes, process-wide (set it
// before compiling, from one thread; the kernel cache keys on the source,
// so kernels of both forms coexist).
void setCppLoopForms(const CppLoopForms& forms);
const CppLoopForms& cppLoopForms();

}  // namespace tcc::lowering
