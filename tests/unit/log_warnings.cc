// Some unit tests check the warning a listener logs when it drops a connection. The log level is
// read once per process, at the first line logged, so the warnings are switched on before main.
#include <stdlib.h>

namespace {

[[maybe_unused]] const bool kWarningsLogged = setenv("SLIMECCL_DEBUG", "WARN", 1) == 0;

}  // namespace
