// An API header that includes the ground floor: allowed.
#include "src/base/util/upward.h"
