// What earlier schedule commands did to the variables a later command
// names, so that its refusal can say so: a command naming a loop that a
// split, divide, fuse, pos or bound replaced, or a derived variable where
// one of the statement's own is needed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tcc/lowering/schedule.h"

namespace tcc::lowering {

// "dense_workspace" for `dense_workspace(j)`: the name the user wrote.
std::string commandName(const ScheduleCommand& command);

// "`split(kp, kp0, kp1, 4)` at line 7" (without the line when it has none).
std::string commandReference(const ScheduleCommand& command);

// How the commands before `before` replaced the loop over `var`, following
// the variables that replaced it: "k was replaced by kp, the positions of
// A(i,k), by `pos(k, kp, A(i,k))` at line 6, and kp was split into kp0 and
// kp1 by `split(kp, kp0, kp1, 4)` at line 7". None when no command did.
std::optional<std::string> replacementHistory(const ir::IndexVar& var, const std::vector<ScheduleCommand>& commands,
                                              size_t before);

// Which of the commands before `before` derived `var`, and from which of
// the statement's variables: "derived from k by `pos(k, kp, A(i,k))` at
// line 6 and `split(kp, kp0, kp1, 4)` at line 7". None when no command
// introduced it.
std::optional<std::string> derivationHistory(const ir::IndexVar& var, const std::vector<ScheduleCommand>& commands,
                                             size_t before);

// The refusal of a command naming `var` where no loop over it stands:
// what replaced it and the loops there are now, else that it is no loop of
// the statement. `loops` is "i, kp0, kp1, j".
std::string missingLoopMessage(const ir::IndexVar& var, const std::vector<ScheduleCommand>& commands, size_t before,
                               const std::string& loops);

// The refusal of `command` (precompute, bound) naming `var` where it needs
// one of the statement's own variables (`statementVars`): which earlier
// commands derived `var`, if any.
std::string notAStatementVariable(const ir::IndexVar& var, const std::string& command,
                                  const std::vector<ir::IndexVar>& statementVars,
                                  const std::vector<ScheduleCommand>& commands, size_t before);

}  // namespace tcc::lowering
