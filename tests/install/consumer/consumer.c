/* One rank's AllReduce through whichever slimeccl the build found. Prints "consumer: slimeccl V,
 * AllReduce gave S" or the library's sentence. */
#include <slimeccl.h>
#include <stdio.h>

#if SLIMECCL_VERSION_CODE < SLIMECCL_VERSION(0, 1, 0)
#error "slimeccl 0.1.0 or later"
#endif

int main(void) {
  int version = 0;
  slimecclUniqueId id;
  slimecclComm_t comm;
  float values[4] = {1, 2, 3, 4};
  if (slimecclGetVersion(&version) != slimecclSuccess || slimecclGetUniqueId(&id) != slimecclSuccess ||
      slimecclCommInitRank(&comm, 1, id, 0) != slimecclSuccess ||
      slimecclAllReduce(values, values, 4, slimecclFloat, slimecclSum, comm, NULL) != slimecclSuccess) {
    fprintf(stderr, "consumer: %s\n", slimecclGetLastError(NULL));
    return 1;
  }
  printf("consumer: slimeccl %d, AllReduce gave %g\n", version, values[0] + values[1] + values[2] + values[3]);
  return slimecclCommDestroy(comm) == slimecclSuccess ? 0 : 1;
}
