// Policies a program adds for generated kernels. A policy is a class
// template over the order N that models AccumulationPolicy<Policy<N>, N>
// (policy.h: insert, sort, visitSorted, clear, size, capacity, reserve) for
// N = 1 to 4. Registered under a name before compiling,
//
//   tcc::ism::registerPolicy<SortedInsertPolicy>("sorted_insert");
//
// it is valid wherever a policy is named: sparse_workspace(policy =
// sorted_insert) and `tensor W(I, J) : sparse_workspace(policy =
// sorted_insert)` in the DSL, SparseWorkspaceFormat::policy in C++. Kernels
// reach it through one virtual call per insert (tcc_ism_insert_user_N),
// where the built-in policies have an entry point each. A registered policy
// fills one workspace at a time (not one per thread). Its id is a hash of
// its name, the same in every process, so a cached kernel names the policy
// it was compiled for.
#pragma once

#include <string>

#include "tcc/ism/kernel_workspace.h"

namespace tcc::ism {

using WorkspaceFactory = kernel::AnyWorkspace* (*)(int order, const int* dims, const int* levelOrder,
                                                   const WorkspaceOptions& options);

// Defined in libtcc_ism_runtime. Returns the policy's id; throws
// std::invalid_argument for a built-in name or a name taken by another
// factory.
int registerPolicyFactory(const std::string& name, WorkspaceFactory factory);
// The id of a built-in (0 to 4) or registered policy; -1 when unknown.
int policyId(const std::string& name);

template <template <int> class Policy>
  requires AccumulationPolicy<Policy<1>, 1> && AccumulationPolicy<Policy<2>, 2> &&
           AccumulationPolicy<Policy<3>, 3> && AccumulationPolicy<Policy<4>, 4>
int registerPolicy(const std::string& name) {
  WorkspaceFactory factory = [](int order, const int* dims, const int* levelOrder,
                                const WorkspaceOptions& options) -> kernel::AnyWorkspace* {
    switch (order) {
      case 1: return new kernel::TypedWorkspace<Policy, 1>(kernel::kernelShape<1>(dims, levelOrder), options);
      case 2: return new kernel::TypedWorkspace<Policy, 2>(kernel::kernelShape<2>(dims, levelOrder), options);
      case 3: return new kernel::TypedWorkspace<Policy, 3>(kernel::kernelShape<3>(dims, levelOrder), options);
      case 4: return new kernel::TypedWorkspace<Policy, 4>(kernel::kernelShape<4>(dims, levelOrder), options);
    }
    throw std::invalid_argument("ism: a sparse workspace has order 1 to 4, not " + std::to_string(order));
  };
  return registerPolicyFactory(name, factory);
}

}  // namespace tcc::ism
