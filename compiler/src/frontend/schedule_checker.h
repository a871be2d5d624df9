// Checks the commands of schedule blocks against the command table (name,
// number and kind of arguments, keywords) and that the index variables they
// name exist, and turns them into the public schedule AST.
#pragma once

#include <vector>

#include "semantic_context.h"
#include "syntax_tree.h"
#include "tcc/frontend/schedule.h"

namespace tcc::frontend {

// Commands are checked in order: a variable introduced by one (split's
// outer and inner, say) may be named by the ones after it. Commands with
// errors are reported and left out.
std::vector<ScheduleCommand> checkSchedule(SemanticContext& context,
                                           const std::vector<syntax::ScheduleCommand>& commands);

}  // namespace tcc::frontend
