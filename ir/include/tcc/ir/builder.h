// The C++ builder: index notation written the way the DSL spells it.
//   IndexVar i("i"), j("j"), k("k");
//   TensorVar A("A", {"I", "J"}, Format::csr()), B(...), C(...);
//   IndexStmt s = (A(i,j) = B(i,k) * C(k,j));
//   IndexStmt t = (a() = sum(i, 2 * x(i) * y(i)));      // a scalar
//   IndexStmt c = forall(i, forall(j, A(i,j) += B(i,j)));
#pragma once

#include <string>
#include <vector>

#include "tcc/ir/index_expr.h"
#include "tcc/ir/index_stmt.h"
#include "tcc/ir/provenance.h"

namespace tcc::ir {

IndexExpr operator-(const IndexExpr& operand);
IndexExpr operator+(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator-(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator*(const IndexExpr& a, const IndexExpr& b);
IndexExpr operator/(const IndexExpr& a, const IndexExpr& b);

IndexExpr sum(const IndexVar& var, const IndexExpr& body);
IndexExpr perm(const TensorVar& matrix);
IndexExpr call(const std::string& name, std::vector<CallArgument> args);

IndexStmt forall(const IndexVar& var, const IndexStmt& body, ForallAttributes attributes = {});
IndexStmt where(const IndexStmt& consumer, const IndexStmt& producer);
IndexStmt sequence(const IndexStmt& definition, const IndexStmt& mutation);
IndexStmt multi(const IndexStmt& first, const IndexStmt& second);
IndexStmt suchThat(const IndexStmt& stmt, std::vector<ProvenanceRelation> relations);

}  // namespace tcc::ir
