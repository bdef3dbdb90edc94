// A ground-floor header that includes one of the API floor: the layering check must refuse it.
#include "src/api/boundary.h"
