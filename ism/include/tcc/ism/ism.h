// The insert-sort-merge sparse-workspace runtime, header-only. Include this
// for the C++ template core; generated code calls the C facade (c_api.h).
#pragma once

#include "tcc/ism/all_array.h"
#include "tcc/ism/bucket_policy.h"
#include "tcc/ism/component.h"
#include "tcc/ism/compress.h"
#include "tcc/ism/coord_policy.h"
#include "tcc/ism/hash_policy.h"
#include "tcc/ism/level_format.h"
#include "tcc/ism/map_policy.h"
#include "tcc/ism/memory_counter.h"
#include "tcc/ism/policy.h"
#include "tcc/ism/reallocation.h"
#include "tcc/ism/workspace.h"
