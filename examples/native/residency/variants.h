// Every build of residency_manager.h in one translation unit, each in its own namespace (the
// header's GPUMV_RESIDENCY_NAMESPACE): clean, clean_st (RESIDENCY_SINGLE_THREADED=1) and one per
// planted bug (bug_<switch>). Included by the kit's test driver (driver.cpp) and by the example's
// native-residency driver (residency_driver.cpp).
#pragma once

#define GPUMV_RESIDENCY_NAMESPACE clean
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE

#undef RESIDENCY_SINGLE_THREADED
#define RESIDENCY_SINGLE_THREADED 1
#define GPUMV_RESIDENCY_NAMESPACE clean_st
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef RESIDENCY_SINGLE_THREADED
#define RESIDENCY_SINGLE_THREADED 0

#undef GPUMV_BUG_LRU_TOUCH_SKIPPED
#define GPUMV_BUG_LRU_TOUCH_SKIPPED 1
#define GPUMV_RESIDENCY_NAMESPACE bug_lru_touch_skipped
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef GPUMV_BUG_LRU_TOUCH_SKIPPED
#define GPUMV_BUG_LRU_TOUCH_SKIPPED 0

#undef GPUMV_BUG_TRIM_IN_FLIGHT
#define GPUMV_BUG_TRIM_IN_FLIGHT 1
#define GPUMV_RESIDENCY_NAMESPACE bug_trim_in_flight
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef GPUMV_BUG_TRIM_IN_FLIGHT
#define GPUMV_BUG_TRIM_IN_FLIGHT 0

#undef GPUMV_BUG_FENCE_OFF_BY_ONE
#define GPUMV_BUG_FENCE_OFF_BY_ONE 1
#define GPUMV_RESIDENCY_NAMESPACE bug_fence_off_by_one
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef GPUMV_BUG_FENCE_OFF_BY_ONE
#define GPUMV_BUG_FENCE_OFF_BY_ONE 0

#undef GPUMV_BUG_NO_PAGING_WAIT
#define GPUMV_BUG_NO_PAGING_WAIT 1
#define GPUMV_RESIDENCY_NAMESPACE bug_no_paging_wait
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef GPUMV_BUG_NO_PAGING_WAIT
#define GPUMV_BUG_NO_PAGING_WAIT 0

#undef GPUMV_BUG_LOCAL_USAGE_ONLY
#define GPUMV_BUG_LOCAL_USAGE_ONLY 1
#define GPUMV_RESIDENCY_NAMESPACE bug_local_usage_only
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef GPUMV_BUG_LOCAL_USAGE_ONLY
#define GPUMV_BUG_LOCAL_USAGE_ONLY 0

#undef GPUMV_BUG_SPLIT_DROPS_SET
#define GPUMV_BUG_SPLIT_DROPS_SET 1
#define GPUMV_RESIDENCY_NAMESPACE bug_split_drops_set
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef GPUMV_BUG_SPLIT_DROPS_SET
#define GPUMV_BUG_SPLIT_DROPS_SET 0

#undef GPUMV_BUG_FAILED_BATCH_COUNTED
#define GPUMV_BUG_FAILED_BATCH_COUNTED 1
#define GPUMV_RESIDENCY_NAMESPACE bug_failed_batch_counted
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#undef GPUMV_BUG_FAILED_BATCH_COUNTED
#define GPUMV_BUG_FAILED_BATCH_COUNTED 0
