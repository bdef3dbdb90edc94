// An API header that includes the ground floor: allowed.
#include "src/util/upward.h"
