#include "collective_checks.h"

#include "buffers.h"
#include "rank_check.h"
#include "reduction_expectations.h"

namespace slimeccl_test {

std::string describe_call(Collective collective, const CallShape& shape) {
  std::string text = concat(collective_name(collective), " of ", shape.count, " x ", datatype_name(shape.datatype));
  if (is_reduction(collective)) text += concat(", op ", op_name(shape.op));
  if (is_rooted(collective)) {
    text += concat(", root ", shape.root);
    if (!shape.in_place && shape.unused_buffers_null) text += ", NULL unused buffers";
  }
  return text + concat(shape.in_place ? ", in place" : ", out of place", ", seed ", shape.seed);
}

void check_call(Collective collective, slimecclComm_t comm, const CallShape& shape) {
  with_context(describe_call(collective, shape), [&] {
    switch (collective) {
      case Collective::kAllGather: check_allgather(comm, shape); return;
      case Collective::kReduceScatter: check_reducescatter(comm, shape); return;
      case Collective::kAllReduce: check_allreduce(comm, shape); return;
      case Collective::kBroadcast: check_broadcast(comm, shape); return;
      case Collective::kReduce: check_reduce(comm, shape); return;
      case Collective::kAlltoAll: check_alltoall(comm, shape); return;
    }
  });
}

}  // namespace slimeccl_test
