// Communicators made inside a group (ncclGroupStart ... ncclGroupEnd), as NCCL allows, so that one
// thread can make several ranks of a comm (nccl-tests -g 2 does): the inits wait for the group's
// end and then run at once, each on a thread of its own with the rank's GPU current. Outside a
// group an init runs when called.
#pragma once

#include <nccl.h>
#include <slimeccl.h>

namespace slimeccl_nccl {

void groupOpened();
// Whether the calling thread is inside a group.
bool insideGroup();
// Whether the calling thread is inside a group, so that ncclGroupEnd will run this init: `comm`
// (its native comm still null) gets it then.
bool deferInit(ncclComm_t comm, int nranks, const slimecclUniqueId& id, int rank, const slimecclConfig_t& config);
// At a group's end: the inits the outermost group deferred run; the first failure, or success.
ncclResult_t groupClosing();

}  // namespace slimeccl_nccl
