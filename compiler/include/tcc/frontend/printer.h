// Prints a checked Program back as DSL text that parses to the same
// program: declarations with formats spelled per level, statements in
// tensor index notation, the schedule and the target. User-named formats
// come out resolved.
#pragma once

#include <string>

#include "tcc/frontend/program.h"

namespace tcc::frontend {

std::string printProgram(const Program& program);
std::string printScheduleCommand(const ScheduleCommand& command);  // "split(i, i0, i1, 32)"

}  // namespace tcc::frontend
