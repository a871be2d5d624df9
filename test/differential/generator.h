// Seeded random well-formed cases: expression trees over +, -, *, / and
// literals with terms that sum over different variables, tensors of order
// 0 to 4 in every level kind and mode order, four element types, shapes
// with size-1 modes, empty rows and empty tensors (never all inputs
// empty), random data or real matrices, and random schedules. The same
// seed gives the same case.
#pragma once

#include <cstdint>
#include <string>

#include "case_model.h"

namespace tcc::differential {

struct GeneratorOptions {
  // Folder holding matrices/*.mtx; empty (or missing) means random data only.
  std::string sharedDataDir;
  // Every top-level term sums over the same variables and reads every
  // output variable: steers clear of open bug (a), to look for others.
  bool sameSumsInEveryTerm = false;
  // One term without inner sums or differences: products, quotients,
  // formats and schedules only, clear of open bugs (a), (d) and (i).
  bool productsOnly = false;
  // Cases for the cuda target (a `target cuda` line), drawn toward what it
  // runs: mostly float32 (some float64, a few integers), dense outputs,
  // GPU units in the schedules, and one or two larger dimensions (above a
  // warp, or a block) so that kernels stride and reduce over several
  // lanes. Off, a seed gives exactly the CPU case it always gave.
  bool cudaTarget = false;
  // Every output of order one or more stores a sparse level (its last, where
  // the draw left it dense) and every case is scheduled: campaigns aimed at
  // assembling sparse outputs under split, fuse, pos, bound and reorder.
  // Off, a seed gives exactly the case it always gave.
  bool scheduledSparseOutputs = false;
  // Operands read more than once: about a third of the terms read again a
  // tensor an earlier factor or term declared, at the same indices (so
  // `A(i,j) * x(j) - A(i,j)`, `(A(i,j) + B(i,j)) * A(i,j)`) or, with integer
  // sizes, half the time at other indices of the same sizes where the term
  // has them (`A(i,j) * A(j,i)`, `A(i,k) * A(k,j)`): one tensor's iterators,
  // conversions and workspaces shared by several accesses. (A tensor's
  // declared indices are its first access's; the minimizer's shrinking of a
  // variable leaves a permuted access's sizes unequal, which the front end
  // refuses, so such findings minimize less.)
  // Off, a seed gives exactly the case it always gave.
  bool repeatedOperands = false;
  // Terms with no index variable: about a third of the terms after the
  // first are a literal, or a product of scalars (order-0 tensors, perhaps
  // a literal), added to or subtracted from every entry of the output
  // (`Y(i,j) = A(i,j) - 3`, `Y(i) = A(i,k) * x(k) + s * t`): the output
  // is dense in value even where the operands are sparse.
  // Off, a seed gives exactly the case it always gave.
  bool constantTerms = false;
  // Position-space schedules at the head of every case that has a unique
  // compressed level to take: `pos(k, kp, A(i,k))` over a variable such a
  // level iterates, or over the fusion of the level and the loop around it
  // (`fuse(i, k, f)`, `pos(f, fp, A(i,k))`: the whole matrix's positions),
  // mostly followed by a split of the position loop and a parallelize of
  // its outer part (CPUThread or CPUVector, every race strategy but
  // IgnoreRaces), then perhaps the random commands over the loops left. A
  // tensor read twice at the same indices (with --repeated-operands) is
  // taken first. (A cuda case's head has no parallelize: its GPU mapping,
  // drawn or the default, maps the loops.) Drawn from a stream of its own: off, a seed gives exactly
  // the case it always gave; on, the same case with the head added.
  bool posSchedules = false;
  // The output's indices permuted against the order the inputs read them
  // (`Y(j,i) = A(i,j) * B(j,k)`, `Y(k,i,j) = ...`; outputs of order two or
  // more): transposes, sparse outputs assembled against the inputs' order,
  // loop orders the output and the operands disagree on. Drawn from a
  // stream of its own: off, a seed gives exactly the case it always gave.
  bool permutedOutputs = false;
  // Statements whose terms sum over different variables (Y(i,j) =
  // A(i,j,m) - B(i)) get random commands as often as the others (60 % of
  // the cases, where 15 % do without it): schedules over the loops of sums
  // computed into temporaries. Drawn from a stream of its own: off, a seed
  // gives exactly the case it always gave; on, the same case, scheduled.
  bool nestedSumSchedules = false;
  // Schedules with several precomputes (test::ScheduleSpace::
  // severalPrecomputes): half the drawn schedules end with one or two
  // precomputes of other sub-expressions. Drawn last, from the schedule's
  // own stream: off, a seed gives exactly the case it always gave; on, the
  // same case with them appended.
  bool severalPrecomputes = false;
  // The builtins: about a third of the terms wrap one factor in abs, sqrt
  // of abs, exp, max or min (of a literal or another tensor at the same
  // indices; integers take abs, max and min), which the compilers evaluate
  // off the sparse operands' entries where the builtin is not zero there.
  // Off, a seed gives exactly the case it always gave.
  bool builtins = false;
  // float16 inputs: in float cases, each float input is stored as float16
  // half of the time (at least one), its values rounded to what float16
  // holds (a real matrix's scaled into [-1, 1] first). The output stays
  // the case's type. Drawn last, from a stream of its own: off, a seed
  // gives exactly the case it always gave.
  bool float16Inputs = false;
  // Updates in place: the statement reads its output's values from
  // before it, as `+=` (half of the cases) or with the output read at its
  // own indices in the expression (`Y(i,j) = rhs - Y(i,j)`, `* Y(i,j)`,
  // `+ Y(i,j)`); the output then gets data, drawn as an input's. Drawn
  // last, from a stream of its own.
  bool inPlace = false;
  // Programs of two or three statements: one or two earlier statements
  // each compute a tensor a later one reads where the case had an input
  // (not a divisor), keeping its name and format (every level kind, mode
  // order and named format inputs take, and scalars), so a kernel's
  // assembled output is the next kernel's operand, merged, co-iterated or
  // located; a chain of three, or two statements feeding the last. The
  // later statement reads it at permuted indices about a third of the
  // time. Each statement has its own index variables (`i1`, `j1`, ... in
  // the first before the last, `i2`, ... in the other) and tensor names
  // (`A1`, ...), and its own random schedule, drawn as the generator draws
  // one for a case of one statement. Drawn from a stream of its own: off,
  // a seed gives exactly the case it always gave; on, the same last
  // statement, reading computed tensors.
  bool chained = false;
};

Case generateCase(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace tcc::differential
