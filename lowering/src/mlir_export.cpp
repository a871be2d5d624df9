// Tensor index notation -> an MLIR 16 linalg.generic over sparse tensors.
#include <optional>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "mlir_body.h"
#include "tcc/ir/index_printer.h"
#include "tcc/ir/index_queries.h"
#include "tcc/lowering/mlir_export.h"

namespace tcc::lowering {

using namespace ir;

namespace {

// The top-level terms of a right-hand side: Einstein summation sums each
// term of a top-level sum or difference over its own unbound variables.
void collectTerms(const IndexExpr& expr, std::vector<IndexExpr>& terms) {
  if (const auto* add = expr.as<AddNode>()) {
    collectTerms(add->a, terms);
    collectTerms(add->b, terms);
  } else if (const auto* sub = expr.as<SubNode>()) {
    collectTerms(sub->a, terms);
    collectTerms(sub->b, terms);
  } else {
    terms.push_back(expr);
  }
}

// An explicit sum at the top of a term is the generic's reduction; the
// body below it is what the generic computes.
IndexExpr stripTopSums(IndexExpr expr) {
  while (const auto* sum = expr.as<ReductionNode>()) expr = sum->body;
  return expr;
}

IndexExpr stripSumsOfTerms(const IndexExpr& expr) {
  if (const auto* add = expr.as<AddNode>()) return AddNode::make(stripSumsOfTerms(add->a), stripSumsOfTerms(add->b));
  if (const auto* sub = expr.as<SubNode>()) return SubNode::make(stripSumsOfTerms(sub->a), stripSumsOfTerms(sub->b));
  return stripTopSums(expr);
}

bool isNonzeroLiteral(const IndexExpr& expr) {
  const auto* literal = expr.as<LiteralNode>();
  return literal && literal->asDouble() != 0;
}

// The top-level terms with their signs (true: subtracted).
void collectSignedTerms(const IndexExpr& expr, bool negated, std::vector<std::pair<IndexExpr, bool>>& terms) {
  if (const auto* add = expr.as<AddNode>()) {
    collectSignedTerms(add->a, negated, terms);
    collectSignedTerms(add->b, negated, terms);
  } else if (const auto* sub = expr.as<SubNode>()) {
    collectSignedTerms(sub->a, negated, terms);
    collectSignedTerms(sub->b, !negated, terms);
  } else {
    terms.emplace_back(expr, negated);
  }
}

// With a sum over the whole body, a term that uses none of the summed
// variables (`y_before(i)` in `y(i) = y_before(i) + A(i,j) * x(j)`, the
// form `+=` takes) cannot be a term of the body: it is the dense output's
// initial values instead (the generic's outs start as a copy of
// y_before), which the body adds to. Only
// a dense tensor read at the output's indices, in the output's type and
// storage, added once, can be; nullopt where the statement has no such term.
std::optional<IndexExpr> initialValuesTerm(const AssignmentNode& assignment,
                                           const std::vector<IndexVar>& reductionVariables) {
  const TensorVar& output = assignment.lhs.tensor();
  if (reductionVariables.empty() || !output.format().isAllDense() || !output.format().hasIdentityOrdering())
    return std::nullopt;
  std::vector<std::pair<IndexExpr, bool>> terms;
  collectSignedTerms(assignment.rhs, false, terms);
  for (const auto& [term, negated] : terms) {
    const auto* access = term.as<AccessNode>();
    if (negated || !access || access->indices != assignment.lhs.indices()) continue;
    const TensorVar& tensor = access->tensor;
    if (tensor.datatype() == output.datatype() && tensor.format().isAllDense() &&
        tensor.format().hasIdentityOrdering())
      return term;
  }
  return std::nullopt;
}

// The right-hand side without the top-level term `term` (one that is
// added, not subtracted).
IndexExpr withoutTerm(const IndexExpr& expr, const IndexExpr& term) {
  if (const auto* add = expr.as<AddNode>()) {
    if (add->a.sameAs(term)) return add->b;
    if (add->b.sameAs(term)) return add->a;
    return AddNode::make(withoutTerm(add->a, term), withoutTerm(add->b, term));
  }
  if (const auto* sub = expr.as<SubNode>()) {
    if (sub->a.sameAs(term)) return NegNode::make(sub->b);
    return SubNode::make(withoutTerm(sub->a, term), sub->b);
  }
  return expr;
}

// The variables of an access in the order its tensor stores their levels.
std::vector<IndexVar> levelOrder(const Access& access) {
  std::vector<IndexVar> vars;
  const Format& format = access.tensor().format();
  for (int level = 0; level < format.order(); ++level) vars.push_back(access.indices().at(format.modeOfLevel(level)));
  return vars;
}

// True when some loop order visits every sparse access's levels in
// storage order (the output's included): MLIR 16 converts an input stored
// against the loop order, but writes a sparse output only in loop order.
bool sparseOrdersAgree(const AssignmentNode& assignment) {
  std::map<IndexVar, std::set<IndexVar>> before;
  std::vector<Access> accesses = accessesOf(assignment.rhs);
  accesses.push_back(assignment.lhs);
  for (const auto& access : accesses) {
    if (access.tensor().format().isAllDense()) continue;
    std::vector<IndexVar> vars = levelOrder(access);
    for (size_t l = 0; l + 1 < vars.size(); ++l) before[vars[l + 1]].insert(vars[l]);
  }
  std::map<IndexVar, int> state;  // 1: on the path, 2: done
  std::function<bool(const IndexVar&)> acyclicFrom = [&](const IndexVar& var) {
    if (state[var] == 1) return false;
    if (state[var] == 2) return true;
    state[var] = 1;
    for (const auto& earlier : before[var])
      if (!acyclicFrom(earlier)) return false;
    state[var] = 2;
    return true;
  };
  for (const auto& [var, earlier] : before)
    if (!acyclicFrom(var)) return false;
  return true;
}

// Checks what the generic and MLIR 16's sparsifier can express; throws
// MlirExportError naming the part that cannot be.
void checkExpressible(const IndexStmt& statement, const std::vector<IndexVar>& reductionVariables) {
  const AssignmentNode& assignment = *statement.as<AssignmentNode>();
  if (assignment.accumulate)
    throw MlirExportError("`+=` (accumulating into " + assignment.lhs.tensor().name() + ") is not exported to MLIR");

  std::vector<TensorVar> tensors = tensorsRead(assignment.rhs);
  tensors.push_back(assignment.lhs.tensor());
  const Datatype outputType = assignment.lhs.tensor().datatype();
  if (outputType == Datatype::Float16)
    throw MlirExportError("the float16 output " + assignment.lhs.tensor().name() +
                          ": float16 is exported as the storage of inputs read as float32 or float64");
  bool anySparse = false;
  for (const auto& tensor : tensors) {
    // A float16 input is widened (arith.extf) to the float type computed in.
    bool widened = tensor.datatype() == Datatype::Float16 && isFloat(outputType);
    if (tensor.datatype() != outputType && !widened)
      throw MlirExportError("mixed element types (" + tensor.name() + " is " + toString(tensor.datatype()) + ", " +
                            assignment.lhs.tensor().name() + " is " + toString(assignment.lhs.tensor().datatype()) +
                            "): a linalg.generic computes in one type");
    anySparse = anySparse || !tensor.format().isAllDense();
  }
  for (const auto& access : accessesOf(statement)) {
    std::set<IndexVar> seen(access.indices().begin(), access.indices().end());
    if (seen.size() != access.indices().size())
      throw MlirExportError("the access " + toString(access) + " repeats an index variable (a diagonal), which MLIR 16's "
                            "sparsifier does not take");
  }
  auto read = tensorsRead(assignment.rhs);
  if (std::find(read.begin(), read.end(), assignment.lhs.tensor()) != read.end())
    throw MlirExportError(assignment.lhs.tensor().name() + " is both read and written");

  std::vector<IndexExpr> terms;
  collectTerms(assignment.rhs, terms);
  std::optional<IndexExpr> initialValues = initialValuesTerm(assignment, reductionVariables);
  for (const auto& term : terms) {
    if (initialValues && term.sameAs(*initialValues)) continue;
    std::vector<IndexVar> used = indexVarsOf(term);
    for (const auto& var : reductionVariables)
      if (std::find(used.begin(), used.end(), var) == used.end())
        throw MlirExportError("the term " + toString(term) + " does not use the summed variable " + var.name() +
                              ": a linalg.generic sums the whole expression, Einstein summation sums each term over "
                              "its own variables");
  }

  // A sum over a sparse level of a value that need not be zero where the
  // operands that the summed variable indexes are absent, and that no dense
  // operand it indexes covers there: `y(i) = exp(B(i,j))`, `y(i) = (B(i,j)
  // + z(i)) * 2`, `y(i) = (B(i,j) + w(i)) * z(i)` with B csr, w sparse.
  // MLIR 16's sparsifier crashes (a segmentation fault) on them.
  if (!reductionVariables.empty()) {
    IndexExpr summed = stripSumsOfTerms(initialValues ? withoutTerm(assignment.rhs, *initialValues) : assignment.rhs);
    for (const auto& access : accessesOf(summed)) {
      const Format& format = access.tensor().format();
      for (int level = 0; level < format.order(); ++level) {
        const IndexVar& var = access.indices().at(format.modeOfLevel(level));
        if (format.level(level).kind == LevelKind::Dense ||
            std::find(reductionVariables.begin(), reductionVariables.end(), var) == reductionVariables.end())
          continue;
        std::optional<IndexExpr> absent = whereSparseAbsent(summed, var);
        if (absent && (!readsNoTensor(*absent) || constantValue(*absent) != 0))
          throw MlirExportError("the sum over " + var.name() + " (a sparse level) of " + toString(summed) +
                                ", which is " + toString(*absent) + " where the sparse operands " + var.name() +
                                " indexes are absent: MLIR 16's sparsifier crashes on such sums");
      }
    }
  }

  // Inputs with repeated coordinates (non-unique levels, singletons) are
  // exported only as the one sparse operand: differential testing found
  // MLIR 16 dropping entries when it co-iterates them with another sparse
  // operand, and misreading a singleton below a dense level. An input read
  // at two places counts twice (A(i,j) * A(j,i), A COO, gave zeros); read
  // twice alike, it is one operand.
  std::vector<Access> sparseAccesses;
  for (const auto& access : accessesOf(assignment.rhs))
    if (!access.tensor().format().isAllDense() &&
        std::find(sparseAccesses.begin(), sparseAccesses.end(), access) == sparseAccesses.end())
      sparseAccesses.push_back(access);
  const size_t sparseInputs = sparseAccesses.size();
  std::optional<TensorVar> repeating;
  for (const auto& tensor : tensorsRead(assignment.rhs)) {
    if (tensor.format().isAllDense()) continue;
    const auto& levels = tensor.format().levels();
    for (size_t l = 0; l < levels.size(); ++l) {
      bool repeats = !levels[l].unique || levels[l].kind == LevelKind::Singleton;
      if (repeats) repeating = tensor;
      if (levels[l].kind == LevelKind::Singleton && (l == 0 || levels[l - 1].unique))
        throw MlirExportError(tensor.name() + " has a singleton level below a unique one (" +
                              tensor.format().toString() + "), which MLIR 16 reads wrongly");
    }
  }
  if (repeating && sparseInputs > 1) {
    std::vector<std::string> reads;
    for (const auto& access : sparseAccesses)
      if (access.tensor() == *repeating) reads.push_back(toString(access));
    if (reads.size() > 1)
      throw MlirExportError(repeating->name() + " (" + repeating->format().toString() + ") repeats coordinates and is "
                            "read at " + std::to_string(reads.size()) + " places (" + reads[0] + ", " + reads[1] +
                            (reads.size() > 2 ? ", ..." : "") + "), co-iterated with itself, which MLIR 16 gets wrong");
    throw MlirExportError(repeating->name() + " (" + repeating->format().toString() + ") repeats coordinates and is "
                          "co-iterated with another sparse operand, which MLIR 16 gets wrong");
  }

  const TensorVar& output = assignment.lhs.tensor();
  if (repeating && !reductionVariables.empty() && isSparse(output))
    throw MlirExportError(repeating->name() + " (" + repeating->format().toString() + ") repeats coordinates and is "
                          "summed into the sparse output " + output.name() + ", which MLIR 16's runtime fails on "
                          "(std::length_error)");
  for (const auto& level : output.format().levels())
    if (level.kind == LevelKind::Singleton || !level.unique)
      throw MlirExportError("the sparse output " + output.name() + " has a " + level.toString() +
                            " level: MLIR 16 returned wrong entries for such outputs (COO) when checked against the "
                            "reference, so they are not exported");
  if (!output.format().isAllDense() && !sparseOrdersAgree(assignment)) {
    std::string order;
    for (const auto& var : levelOrder(assignment.lhs)) order += (order.empty() ? "" : ", ") + var.name();
    throw MlirExportError("the sparse output " + output.name() + " is stored in the order (" + order +
                          "), which no loop order shares with the sparse inputs' storage orders; MLIR 16's "
                          "sparsifier writes a sparse output only in loop order");
  }

  // What the body can compute: arithmetic on accesses and literals.
  std::function<void(const IndexExpr&, bool)> check = [&](const IndexExpr& expr, bool atTermTop) {
    switch (expr.kind()) {
      case IndexExprKind::Literal:
        if (!isFloat(assignment.lhs.tensor().datatype())) {
          double value = expr.as<LiteralNode>()->asDouble();
          if (isFloat(expr.type()) && value != std::floor(value))
            throw MlirExportError("the literal " + toString(expr) + " in an integer expression");
        }
        return;
      case IndexExprKind::Access: return;
      case IndexExprKind::Neg: return check(expr.as<NegNode>()->operand, false);
      case IndexExprKind::Add: {
        const auto* node = expr.as<AddNode>();
        check(node->a, atTermTop);
        return check(node->b, atTermTop);
      }
      case IndexExprKind::Sub: {
        const auto* node = expr.as<SubNode>();
        check(node->a, atTermTop);
        return check(node->b, atTermTop);
      }
      case IndexExprKind::Mul: {
        const auto* node = expr.as<MulNode>();
        check(node->a, false);
        return check(node->b, false);
      }
      case IndexExprKind::Div: {
        const auto* node = expr.as<DivNode>();
        if (anySparse && !isNonzeroLiteral(node->b))
          throw MlirExportError("the division " + toString(expr) +
                                ": MLIR 16's sparsifier divides only by a nonzero constant");
        check(node->a, false);
        return check(node->b, false);
      }
      case IndexExprKind::Reduction:
        if (!atTermTop)
          throw MlirExportError("the sum " + toString(expr) +
                                " inside an expression: a linalg.generic has one reduction, around the whole body");
        return check(stripTopSums(expr), false);
      case IndexExprKind::Call: {
        const auto* call = expr.as<CallNode>();
        if (call->name == "perm") throw MlirExportError("the builtin perm(...) is not exported to MLIR");
        if ((call->name == "sqrt" || call->name == "exp") && !isFloat(outputType))
          throw MlirExportError("the builtin " + toString(expr) + " computes in float64 inside an " +
                                toString(outputType) + " expression: a linalg.generic computes in one type");
        for (const auto& argument : call->args) check(std::get<IndexExpr>(argument), false);
        return;
      }
    }
  };
  check(assignment.rhs, true);
}

// The index variable's name where MLIR can use it as an affine dimension
// (a plain identifier, no keyword, no repeat), else d<position>.
std::vector<std::string> dimensionNames(const std::vector<IndexVar>& loops) {
  static const std::set<std::string> keywords = {"floordiv", "ceildiv", "mod", "symbol", "true", "false"};
  std::vector<std::string> names;
  std::set<std::string> seen;
  bool usable = true;
  for (const auto& var : loops) {
    const std::string& name = var.name();
    auto identifierChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                      std::all_of(name.begin(), name.end(), identifierChar);
    usable = usable && identifier && !keywords.count(name) && seen.insert(name).second;
    names.push_back(name);
  }
  if (usable) return names;
  for (size_t d = 0; d < names.size(); ++d) names[d] = std::string("d").append(std::to_string(d));
  return names;
}

std::string affineMap(const std::vector<std::string>& dims, const std::vector<IndexVar>& loops,
                      const std::vector<IndexVar>& indices) {
  std::string text = "affine_map<(";
  for (size_t d = 0; d < dims.size(); ++d) text += (d > 0 ? ", " : "") + dims[d];
  text += ") -> (";
  for (size_t m = 0; m < indices.size(); ++m) {
    size_t d = std::find(loops.begin(), loops.end(), indices[m]) - loops.begin();
    text += (m > 0 ? ", " : "") + dims[d];
  }
  return text + ")>";
}

// Accesses of the rhs in the order BodyPrinter reads them (pre-order, left
// to right, every occurrence).
void collectAccesses(const IndexExpr& expr, std::vector<Access>& accesses) {
  switch (expr.kind()) {
    case IndexExprKind::Access: accesses.emplace_back(expr); return;
    case IndexExprKind::Neg: return collectAccesses(expr.as<NegNode>()->operand, accesses);
    case IndexExprKind::Add:
      collectAccesses(expr.as<AddNode>()->a, accesses);
      return collectAccesses(expr.as<AddNode>()->b, accesses);
    case IndexExprKind::Sub:
      collectAccesses(expr.as<SubNode>()->a, accesses);
      return collectAccesses(expr.as<SubNode>()->b, accesses);
    case IndexExprKind::Mul:
      collectAccesses(expr.as<MulNode>()->a, accesses);
      return collectAccesses(expr.as<MulNode>()->b, accesses);
    case IndexExprKind::Div:
      collectAccesses(expr.as<DivNode>()->a, accesses);
      return collectAccesses(expr.as<DivNode>()->b, accesses);
    case IndexExprKind::Reduction: return collectAccesses(expr.as<ReductionNode>()->body, accesses);
    case IndexExprKind::Call:
      // (A builtin that reads no tensor is computed outside the generic.)
      for (const auto& argument : expr.as<CallNode>()->args) collectAccesses(std::get<IndexExpr>(argument), accesses);
      return;
    default: return;
  }
}

}  // namespace

MlirKernel exportToMlir(const IndexStmt& statement, const std::string& functionName) {
  const auto* assignment = statement.as<AssignmentNode>();
  if (!assignment || !isEinsum(statement))
    throw MlirExportError("only a single assignment in tensor index notation is exported to MLIR");
  std::vector<IndexVar> reductionVariables = reductionVars(statement);
  checkExpressible(statement, reductionVariables);

  MlirKernel kernel;
  kernel.functionName = functionName;
  kernel.output = assignment->lhs.tensor();
  kernel.inputs = tensorsRead(assignment->rhs);
  const TensorVar& output = kernel.output;
  Datatype type = output.datatype();
  std::string elementType = mlirElementType(type);
  // `y(i) = y_before(i) + A(i,j) * x(j)` (`+=`): the sum starts from y_before.
  std::optional<IndexExpr> initialValues = initialValuesTerm(*assignment, reductionVariables);
  IndexExpr body = stripSumsOfTerms(initialValues ? withoutTerm(assignment->rhs, *initialValues) : assignment->rhs);
  bool sparseKernel = isSparse(output);
  for (const auto& tensor : kernel.inputs) sparseKernel = sparseKernel || isSparse(tensor);
  std::vector<Access> accesses;
  collectAccesses(body, accesses);

  // Loops: the output's variables, then the summed ones. MLIR's sparsifier
  // orders the loops itself from the storage orders.
  std::vector<IndexVar> loops = assignment->lhs.indices();
  for (const auto& var : reductionVariables)
    if (std::find(loops.begin(), loops.end(), var) == loops.end()) loops.push_back(var);
  std::vector<std::string> dims = dimensionNames(loops);

  std::ostringstream declarations;
  std::set<std::string> declared;
  auto declareEncoding = [&](const TensorVar& tensor) {
    std::string alias = mlirEncodingAlias(tensor.format());
    if (!alias.empty() && declared.insert(alias).second) declarations << alias << "\n";
  };
  // The output is computed in its declared type; a dense output stored in
  // another order than its modes' is computed in mode order and converted.
  TensorVar computed = output.format().isAllDense() && !output.format().hasIdentityOrdering()
                           ? TensorVar(output.name(), output.shape(), Format::denseOfOrder(output.order()), type,
                                       ir::TensorProvenance::computedOutput(output))
                           : output;
  std::string computedType = mlirTensorType(computed);
  for (const auto& tensor : kernel.inputs) declareEncoding(tensor);
  declareEncoding(output);
  std::string traitName = "#" + functionName + "_trait";
  declarations << traitName << " = {\n  indexing_maps = [\n";
  for (const auto& access : accesses)
    declarations << "    " << affineMap(dims, loops, access.indices()) << ",  // " << toString(access) << "\n";
  declarations << "    " << affineMap(dims, loops, assignment->lhs.indices()) << "   // "
               << toString(assignment->lhs) << " (out)\n  ],\n  iterator_types = [";
  for (size_t d = 0; d < loops.size(); ++d) {
    bool reduction = std::find(reductionVariables.begin(), reductionVariables.end(), loops[d]) != reductionVariables.end();
    declarations << (d > 0 ? ", " : "") << (reduction ? "\"reduction\"" : "\"parallel\"");
  }
  declarations << "]\n}\n";
  kernel.declarations = declarations.str();

  std::ostringstream function;
  std::string outputType = mlirTensorType(output);
  function << "// " << toString(statement) << "\n";
  function << "func.func @" << functionName << "(";
  for (size_t t = 0; t < kernel.inputs.size(); ++t)
    function << (t > 0 ? ", " : "") << "%" << kernel.inputs[t].name() << ": " << mlirTensorType(kernel.inputs[t]);
  std::string sizes;
  for (int mode = 0; mode < output.order(); ++mode) {
    std::string size = "%" + output.name() + ".size" + std::to_string(mode);
    function << (kernel.inputs.empty() && mode == 0 ? "" : ", ") << size << ": index";
    sizes += (mode > 0 ? ", " : "") + size;
  }
  function << ") -> " << outputType << " {\n";
  if (initialValues) {
    // A copy: the result is a new tensor (the argument written in place
    // is freed twice by MLIR 16 when the caller frees the result).
    function << "  %init = bufferization.alloc_tensor() copy(%" << initialValues->as<AccessNode>()->tensor.name()
             << ") : " << computedType << "\n";
  } else if (computed.format().isAllDense()) {
    std::string zero = isFloat(type) ? "0.0" : "0";
    function << "  %zero = arith.constant " << zero << " : " << elementType << "\n"
             << "  %empty = tensor.empty(" << sizes << ") : " << computedType << "\n"
             << "  %init = linalg.fill ins(%zero : " << elementType << ") outs(%empty : " << computedType << ") -> "
             << computedType << "\n";
  } else {
    function << "  %init = bufferization.alloc_tensor(" << sizes << ") : " << computedType << "\n";
  }
  std::ostringstream outsideText, bodyText;
  std::vector<AccessArgument> accessArguments;
  std::map<TensorVar, int> occurrences;
  if (!accesses.empty()) {
    std::string operands, types;
    for (size_t a = 0; a < accesses.size(); ++a) {
      operands += (a > 0 ? ", %" : "%") + accesses[a].tensor().name();
      types += (a > 0 ? ", " : "") + mlirTensorType(accesses[a].tensor());
      int occurrence = occurrences[accesses[a].tensor()]++;
      accessArguments.push_back({"%" + accesses[a].tensor().name() + ".value" +
                                     (occurrence > 0 ? std::to_string(occurrence) : ""),
                                 accesses[a].tensor().datatype()});
    }
    bodyText << "      ins(" << operands << " : " << types << ")\n";
  }
  bodyText << "      outs(%init : " << computedType << ") {\n    ^bb0(";
  for (const auto& argument : accessArguments)
    bodyText << argument.name << ": " << mlirElementType(argument.type) << ", ";
  std::string outputArgument = "%" + output.name() + ".value";
  if (occurrences.count(output)) outputArgument += "_out";
  bodyText << outputArgument << ": " << elementType << "):\n";
  std::string value = printGenericBody(outsideText, bodyText, body, type, accessArguments, sparseKernel,
                                       reductionVariables.empty() ? std::nullopt : std::optional(outputArgument));
  bodyText << "      linalg.yield " << value << " : " << elementType << "\n"
           << "  } -> " << computedType << "\n";
  function << outsideText.str() << "  %result = linalg.generic " << traitName << "\n" << bodyText.str();
  if (computedType != outputType) {
    // No dealloc of %result: MLIR 16 frees it twice then (double free).
    function << "  %converted = sparse_tensor.convert %result : " << computedType << " to " << outputType << "\n"
             << "  return %converted : " << outputType << "\n}\n";
  } else {
    function << "  return %result : " << outputType << "\n}\n";
  }
  kernel.function = function.str();
  return kernel;
}

}  // namespace tcc::lowering
