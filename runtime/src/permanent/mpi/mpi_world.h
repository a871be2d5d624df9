// The MPI state a DistributedScope opened.
#pragma once

#include <mpi.h>

namespace tcc::rt::permanent {

// A duplicate of MPI_COMM_WORLD that returns errors instead of aborting;
// MPI_COMM_NULL without a live scope.
MPI_Comm permanentCommunicator();
// Whether MPI allows calls from threads other than the one that started it.
bool anyThreadMayCallMpi();

}  // namespace tcc::rt::permanent
