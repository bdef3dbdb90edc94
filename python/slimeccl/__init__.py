"""slimeccl for Python: communicators, collectives and Send/Recv on numpy arrays, torch tensors
(CPU and CUDA) and any buffer with the buffer protocol or DLPack.

    import slimeccl
    uid = slimeccl.get_unique_id()          # on one rank; send the bytes to the others
    comm = slimeccl.Comm(nranks, uid, rank)
    comm.all_reduce(x, x)                   # in place, sum
    with slimeccl.group():                  # one group, as slimecclGroupStart/End
        comm.send(a, peer)
        comm.recv(b, peer)

Every failure raises slimeccl.Error, whose text is slimeccl's sentence (rank, peer, op, cause)
and whose `code` is the slimecclResult_t. The torch.distributed backend is slimeccl.torch.
"""
import contextlib

from slimeccl._core import (AVG, MAX, MIN, PROD, SUM, UNIQUE_ID_BYTES, Comm, Error, RedOp, get_unique_id,
                            group_end, group_start, version)

__all__ = ["AVG", "MAX", "MIN", "PROD", "SUM", "UNIQUE_ID_BYTES", "Comm", "Error", "RedOp", "get_unique_id",
           "group", "group_end", "group_start", "version"]


@contextlib.contextmanager
def group():
    """The calls inside run as one group (slimecclGroupStart ... slimecclGroupEnd)."""
    group_start()
    try:
        yield
    finally:
        group_end()
