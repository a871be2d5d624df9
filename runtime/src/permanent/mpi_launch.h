#pragma once

namespace tcc::rt::permanent {

// How many ranks the launcher started, as far as the environment says (a
// PMIx launcher names only this rank: 2 stands for "more than one").
int launchedRanks();

}  // namespace tcc::rt::permanent
