// One differential-testing case as data: declared tensors, one statement
// as an expression tree, schedule commands and the inputs. Kept structured
// (rather than as DSL text) so the minimizer can drop terms, tensors and
// commands and shrink shapes; `dslText` renders it for the compiler and for
// regression files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tcc/runtime/coo.h"

namespace tcc::differential {

enum class ElementType { Float64, Float32, Int32, Int64 };
std::string toString(ElementType type);
bool isFloat(ElementType type);
// The value as the element type stores it (rounded to float, truncated to an integer).
double representable(double value, ElementType type);

enum class LevelKind { Dense, Compressed, CompressedNonunique, Singleton, SingletonNonunique };

struct TensorDecl {
  std::string name;
  std::vector<std::string> vars;  // the index variables of its one access, in mode order
  std::vector<LevelKind> levels;  // in storage order
  std::vector<int> modeOrder;     // storage level -> mode; empty means identity
  std::optional<std::string> namedFormat;  // `csr`, `coo`, ...: printed instead of the levels
  // An input of a float case stored as float16 (read as float32 exactly;
  // its data already held by float16).
  bool float16 = false;
  bool allDense() const;
  std::string formatText() const;  // `{dense, compressed} order (1,0)`, or the named format
};

struct Expr {
  enum class Kind { Access, Literal, Add, Sub, Mul, Div, Neg, Sum, Call };
  Kind kind = Kind::Literal;
  std::string tensor;          // Access
  std::vector<std::string> vars;  // Access: its indices; Sum: the summed variable
  double literal = 0;          // Literal
  std::vector<Expr> operands;  // Add/Sub/Mul/Div: 2; Neg/Sum: 1; Call: its arguments
  std::string function;        // Call: abs, sqrt, exp, max or min

  static Expr access(std::string tensor, std::vector<std::string> vars);
  static Expr number(double value);
  static Expr binary(Kind kind, Expr a, Expr b);
  static Expr unary(Kind kind, Expr a, std::vector<std::string> vars = {});
  static Expr call(std::string function, std::vector<Expr> args);
};

std::string toString(const Expr& expr);

// A statement before the last one of a chained program (GeneratorOptions::
// chained): its output is an intermediate that later statements read. Its
// index variables are its own, so its commands apply to it alone.
struct Stage {
  TensorDecl output;                  // written here, read by a later statement
  Expr rhs;
  std::vector<std::string> schedule;  // commands over this statement's variables
};

struct Case {
  ElementType type = ElementType::Float64;
  bool symbolicSizes = true;             // dimensions `I`, `J`, ... rather than integers
  std::map<std::string, int> sizes;      // index variable -> size
  TensorDecl output;
  std::vector<TensorDecl> inputs;        // declaration order
  Expr rhs;
  std::vector<std::string> schedule;     // commands, one each
  bool fastFp = false;                   // an `fp fast` line: FMA and reassociated sums
  bool cudaTarget = false;               // a `target cuda` line: GPU kernels instead of C++
  std::map<std::string, rt::Coo> data;   // input name -> entries (values already representable)
  // The statement reads its output's values from before it: `+=`, or the
  // output read in its expression; the output then has data (in `data`)
  // as an input does.
  bool accumulate = false;               // `+=` rather than `=`
  std::string origin;                    // "seed 42", for messages
  // Statements before the one above, in program order (empty: a program of
  // one statement). `inputs` and `data` hold every statement's inputs.
  std::vector<Stage> earlier;
  // With symbolic sizes, an earlier statement's variable that ranges over
  // the dimension of the variable a later statement reads its output at
  // (`i1` -> `j`: declared `J`, as the front end wants one name per range).
  std::map<std::string, std::string> sharedDimensions;

  const TensorDecl* findInput(const std::string& name) const;
  // An input, or the output of an earlier statement.
  const TensorDecl* findOperand(const std::string& name) const;
  std::string statementText() const;
  std::string programText() const;  // declarations, statements and schedule block
};

// Inputs that no access of any statement reads are dropped (declaration and data).
void dropUnusedInputs(Case& c);
// Every access in order of appearance.
void collectAccesses(const Expr& expr, std::vector<const Expr*>& accesses);

}  // namespace tcc::differential
