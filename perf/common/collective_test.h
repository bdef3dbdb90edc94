// What a perf tool tells the harness about its operation; each tool implements this in one file.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/call_check.h"
#include "common/element_counts.h"
#include "common/pattern.h"
#include "common/rank_comm.h"
#include "slimeccl.h"

namespace slimeccl_perf {

struct OpSpec {
  slimecclDataType_t type;
  slimecclRedOp_t op;  // meaningful only when the test uses a reduction op
  int root;            // -1 when the test has no root
};

struct OpBuffers {
  const void* send;
  void* recv;
};

class CollectiveTest {
 public:
  virtual ~CollectiveTest() = default;

  // The collective's name in SLIMECCL_ALGO, which -A sets; empty when there is no algorithm to choose.
  virtual std::string_view algoCollective() const = 0;
  virtual bool usesRedOp() const { return false; }
  virtual bool usesRoot() const { return false; }

  // Counts for a row of `count` elements in total (the size column divided by the type size).
  virtual ElementCounts counts(size_t count, int nranks) const = 0;
  virtual double busBwFactor(int nranks) const = 0;

  // This rank's send data before a checked run: its own pattern unless the op needs otherwise.
  virtual void fillInput(void* send, const ElementCounts& counts, const OpSpec& spec, int rank, int nranks) const {
    fillPattern(send, spec.type, counts.send, rank);
  }
  // What this rank's checked result elements must hold after the op.
  virtual void fillExpected(void* expected, const ElementCounts& counts, const OpSpec& spec, int rank,
                            int nranks) const = 0;
  // How many result elements this rank checks: all of counts.recv unless the op leaves this rank's
  // receive buffer undefined (Reduce off the root).
  virtual size_t checkedElements(const ElementCounts& counts, const OpSpec& spec, int rank) const {
    return counts.recv;
  }

  // Issues the op on rankComm.stream(); on the NULL stream it returns when the op is done.
  virtual void run(RankComm& rankComm, const OpBuffers& buffers, const ElementCounts& counts,
                   const OpSpec& spec) const = 0;
};

}  // namespace slimeccl_perf
