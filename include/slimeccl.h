/** @file
 * slimeccl: a collective communication library with an NCCL-shaped C API. Every call returns a
 * slimecclResult_t; on failure slimecclGetLastError gives a sentence naming rank, peer, op and
 * cause. The reference is generated from these comments (cmake --build build --target
 * slimeccl-api-docs); docs/ has the guides. */
#ifndef SLIMECCL_H_
#define SLIMECCL_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this header; slimecclGetVersion gives the loaded library's. */
#define SLIMECCL_MAJOR 0
#define SLIMECCL_MINOR 1 /**< see SLIMECCL_MAJOR */
#define SLIMECCL_PATCH 0 /**< see SLIMECCL_MAJOR */
/** A version encoded like NCCL_VERSION_CODE: major*10000 + minor*100 + patch, so that code can
 * ask `#if SLIMECCL_VERSION_CODE >= SLIMECCL_VERSION(0, 2, 0)`. */
#define SLIMECCL_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
/** This header's version, encoded by SLIMECCL_VERSION. */
#define SLIMECCL_VERSION_CODE SLIMECCL_VERSION(SLIMECCL_MAJOR, SLIMECCL_MINOR, SLIMECCL_PATCH)

/** The size of a slimecclUniqueId, as NCCL's. */
#define SLIMECCL_UNIQUE_ID_BYTES 128
/** What every rank of a new communicator passes to init: the bootstrap root's address and the
 * communicator's secret (docs/security.md). Made by slimecclGetUniqueId on one rank and sent to
 * the others by any means. */
typedef struct {
  char internal[SLIMECCL_UNIQUE_ID_BYTES]; /**< opaque; copy it whole */
} slimecclUniqueId;
/** A communicator: one rank's handle on a group of ranks. */
typedef struct slimecclComm* slimecclComm_t;
/** Where ops are queued: NULL (the call returns when the op is done), a host stream
 * (slimecclStreamCreate) or a stream in a CUDA stream's order (slimecclStreamCreateFromCuda). */
typedef struct slimecclStream* slimecclStream_t;
/** The color of a rank that takes no part in the communicators slimecclCommSplit makes. */
#define SLIMECCL_SPLIT_NOCOLOR (-1)

/** What a call returns; slimecclGetErrorString names each. */
typedef enum {
  slimecclSuccess = 0,
  slimecclUnhandledDeviceError = 1,
  slimecclSystemError = 2,
  slimecclInternalError = 3,
  slimecclInvalidArgument = 4,
  slimecclInvalidUsage = 5,
  slimecclRemoteError = 6,
  slimecclInProgress = 7,
  slimecclTimeout = 8,
  slimecclNumResults = 9
} slimecclResult_t;

/** The element types of buffers; every collective takes all ten, every reduction reduces them. */
typedef enum {
  slimecclInt8 = 0,
  slimecclChar = 0,
  slimecclUint8 = 1,
  slimecclInt32 = 2,
  slimecclInt = 2,
  slimecclUint32 = 3,
  slimecclInt64 = 4,
  slimecclUint64 = 5,
  slimecclFloat16 = 6,
  slimecclHalf = 6,
  slimecclFloat32 = 7,
  slimecclFloat = 7,
  slimecclFloat64 = 8,
  slimecclDouble = 8,
  slimecclBfloat16 = 9,
  slimecclNumTypes = 10
} slimecclDataType_t;

/** Reduction operators; slimecclAvg divides the sum by the rank count. Values from slimecclNumOps
 * on are operators made by slimecclRedOpCreatePreMulSum for one communicator. */
typedef enum {
  slimecclSum = 0,
  slimecclProd = 1,
  slimecclMax = 2,
  slimecclMin = 3,
  slimecclAvg = 4,
  slimecclNumOps = 5,
  slimecclMaxRedOp = 0x7fffffff /**< makes the enum wide enough for the operators made at run time */
} slimecclRedOp_t;

/** Where the scalar of slimecclRedOpCreatePreMulSum lives. */
typedef enum {
  slimecclScalarDevice = 0,       /**< device memory, read by each op when it runs (stream order) */
  slimecclScalarHostImmediate = 1 /**< host memory, read once when the operator is made */
} slimecclScalarResidence_t;

/** A communicator's settings for slimecclCommInitRankConfig and slimecclCommSplit; start from
 * SLIMECCL_CONFIG_INITIALIZER and set what differs from the defaults. */
typedef struct {
  size_t size;          /**< set by the initializer */
  unsigned int magic;   /**< set by the initializer */
  unsigned int version; /**< set by the initializer */
  int blocking;         /**< 1: init and ops block; 0: they may return slimecclInProgress */
  int timeoutMs;        /**< per-op and init timeout; <=0 means none; default from SLIMECCL_TIMEOUT_MS */
  const char* netName;  /**< "shm", "socket", "ib" or a plugin name; NULL: chosen from topology */
  const char* commName; /**< a name for logs and dumps; default: one made from the id */
  int cudaDevice;       /**< this rank's GPU: the comm's GPU-to-GPU path is set up at init, so one thread
                           may then drive several ranks (docs/cuda.md); every rank names one or none
                           does; default: the GPU of the stream of the first op on a CUDA stream */
  int maxCTAs;          /**< the most blocks of threads (each holds an SM while it runs) that one kernel of
                           the comm's GPU path may take (NCCL's name); default: SLIMECCL_MAX_CTAS, else the
                           tuner's count per op (docs/cuda.md) */
} slimecclConfig_t;

/** Marks a config made by SLIMECCL_CONFIG_INITIALIZER. */
#define SLIMECCL_CONFIG_MAGIC 0x51ECC1u
/** An int field left to the library's default. */
#define SLIMECCL_CONFIG_UNDEF_INT (-2147483647 - 1)
/** A string field left to the library's default. */
#define SLIMECCL_CONFIG_UNDEF_PTR ((const char*)0)
/** Fills size/magic/version and marks every other field undefined (library defaults apply). */
#define SLIMECCL_CONFIG_INITIALIZER                                                                                 \
  {                                                                                                                 \
    sizeof(slimecclConfig_t), SLIMECCL_CONFIG_MAGIC, SLIMECCL_VERSION_CODE, SLIMECCL_CONFIG_UNDEF_INT,              \
        SLIMECCL_CONFIG_UNDEF_INT, SLIMECCL_CONFIG_UNDEF_PTR, SLIMECCL_CONFIG_UNDEF_PTR, SLIMECCL_CONFIG_UNDEF_INT, \
        SLIMECCL_CONFIG_UNDEF_INT                                                                                   \
  }

/** A short name for a result code. */
const char* slimecclGetErrorString(slimecclResult_t result);
/** Human sentence: rank, peer, op, bytes, cause. NULL comm: the calling thread's last error. */
const char* slimecclGetLastError(slimecclComm_t comm);
/** The loaded library's SLIMECCL_VERSION_CODE. */
slimecclResult_t slimecclGetVersion(int* version);
/** A new unique id; the calling process hosts its bootstrap root until the ranks have joined
 * (with SLIMECCL_COMM_ID set, every process gets the same id and rank 0 hosts the root). */
slimecclResult_t slimecclGetUniqueId(slimecclUniqueId* uniqueId);
/** Joins rank `rank` of `nranks` to the communicator of `commId`; returns once every rank has. */
slimecclResult_t slimecclCommInitRank(slimecclComm_t* comm, int nranks, slimecclUniqueId commId, int rank);
/** slimecclCommInitRank with settings (NULL: the defaults). */
slimecclResult_t slimecclCommInitRankConfig(slimecclComm_t* comm, int nranks, slimecclUniqueId commId, int rank,
                                            slimecclConfig_t* config);
/** nranks ranks as threads of this process; devlist (may be NULL) names each rank's GPU. */
slimecclResult_t slimecclCommInitAll(slimecclComm_t* comms, int nranks, const int* devlist);
/** Collective over `comm`: ranks of one color form a new communicator, ordered by key then by
 * their rank in `comm`; SLIMECCL_SPLIT_NOCOLOR gives NULL. */
slimecclResult_t slimecclCommSplit(slimecclComm_t comm, int color, int key, slimecclComm_t* newcomm,
                                   slimecclConfig_t* config);
/** Called by the ranks that stay (NCCL's ncclCommShrink): they form a new communicator without
 * the `excludeCount` ranks of `excludeRanks` (which do not call it), numbered in their order in
 * `comm`. The new comm's secret is derived from `comm`'s and never crosses the wire; it keeps
 * `comm`'s timeout, GPU and maxCTAs where `config` (NULL: the defaults) leaves them unset. Not
 * inside a group: the ranks exchange where the new comm meets over `comm`. */
slimecclResult_t slimecclCommShrink(slimecclComm_t comm, const int* excludeRanks, int excludeCount,
                                    slimecclComm_t* newcomm, slimecclConfig_t* config);
/** Waits for the communicator's queued ops; it takes no new ones after. */
slimecclResult_t slimecclCommFinalize(slimecclComm_t comm);
/** Frees the communicator (after its ops are done). */
slimecclResult_t slimecclCommDestroy(slimecclComm_t comm);
/** Ends the communicator's ops at once, failing those in flight, and frees it. */
slimecclResult_t slimecclCommAbort(slimecclComm_t comm);
/** The error an op of the communicator met after its call returned (slimecclSuccess: none). */
slimecclResult_t slimecclCommGetAsyncError(slimecclComm_t comm, slimecclResult_t* asyncError);
/** The communicator's rank count. */
slimecclResult_t slimecclCommCount(const slimecclComm_t comm, int* count);
/** This rank's place in the communicator. */
slimecclResult_t slimecclCommUserRank(const slimecclComm_t comm, int* rank);

/** Host stream: ops run in order on the library's progress thread, asynchronously. A handle that is
 * not a live stream of these calls (destroyed, or a cudaStream_t such as cudaStreamPerThread) is
 * slimecclInvalidArgument wherever a slimecclStream_t is taken. */
slimecclResult_t slimecclStreamCreate(slimecclStream_t* stream);
/** Waits until every op queued on the stream is done; returns the error of a failed one. */
slimecclResult_t slimecclStreamSynchronize(slimecclStream_t stream);
/** Success when drained, InProgress otherwise, or the error of a failed op. */
slimecclResult_t slimecclStreamQuery(slimecclStream_t stream);
/** Frees the stream once its queued ops are done. */
slimecclResult_t slimecclStreamDestroy(slimecclStream_t stream);
/** A stream in the order of a CUDA stream (a cudaStream_t; 0: the legacy default stream): an op
 * issued on it starts once the work queued on the CUDA stream before it is done, and work queued
 * on the CUDA stream after it waits until it is done; the call itself returns at once, as NCCL's
 * do. Synchronize with cudaStreamSynchronize or slimecclStreamSynchronize (which also waits for
 * the CUDA stream); destroying this stream leaves the CUDA stream alive. slimecclInvalidUsage
 * with a sentence where the library was built without CUDA or no GPU can be used.
 * Buffers of every op may be CUDA device memory, on any stream (docs/cuda.md). */
slimecclResult_t slimecclStreamCreateFromCuda(slimecclStream_t* stream, void* cudaStream);

/** Which way a communicator's ops on device buffers went (docs/cuda.md): gpuToGpu is 1 once its
 * ranks have set up the GPU-to-GPU path (CUDA IPC or peer access, copy engines, flags between the
 * GPUs), 0 before or where their GPUs cannot reach each other; opsGpuToGpu counts the ops this rank
 * queued that way, opsStaged those whose device buffers crossed host staging; opsBySms counts those
 * of opsGpuToGpu small enough that one kernel copied them (SLIMECCL_GPU_SM_COPY_BYTES) rather than
 * copy engines; the reductions* fields count reductions by the algorithm their kernel ran
 * (docs/algorithms.md); overlapAllGathers counts the overlapped AllGathers (docs/overlap.md);
 * stagedChunks counts the chunks of ops that ran through host staging cut into chunks, and
 * stagingPinned is 1 where that staging is pinned for the rank's GPU; hostTiers is 1 on a comm across
 * hosts that runs AllGather in two tiers, whose ops the other fields then include, and
 * tieredAllGathers counts those AllGathers; flaggedLines is 1 where the ranks set up landing zones
 * for small ops, and opsByLines counts the ops of opsGpuToGpu that went so: one kernel per rank that
 * moves the bytes as flagged lines through the peers' zones, with no host between the ranks
 * (docs/cuda.md); hostRelays is 1 where the path goes through host relays instead of peer mappings,
 * and opsRelayed counts the ops of opsGpuToGpu that went so. */
typedef struct {
  int gpuToGpu;                         /**< 1: the GPU-to-GPU path is set up */
  unsigned long long opsGpuToGpu;       /**< ops this rank queued GPU to GPU */
  unsigned long long opsStaged;         /**< ops whose device buffers crossed host staging */
  unsigned long long opsBySms;          /**< of opsGpuToGpu, those one kernel copied */
  unsigned long long reductionsOneShot; /**< of opsGpuToGpu, reductions by the one-shot kernel */
  unsigned long long reductionsTwoShot; /**< of opsGpuToGpu, reductions by two-shot (the all-gather half on copy
                                           engines) */
  unsigned long long reductionsDirect;  /**< of opsGpuToGpu, ReduceScatters by the direct kernel */
  int largestGrid; /**< the most blocks of threads one kernel of this rank has launched with (maxCTAs bounds it) */
  unsigned long long overlapAllGathers; /**< of opsGpuToGpu, AllGathers of AllGatherOverlap and AllGatherGemm on
                                           device buffers, whose blocks were handed on as each landed */
  unsigned long long stagedChunks;      /**< chunks of ops that ran through host staging in rounds */
  int stagingPinned;                    /**< 1: the comm stages chunks in memory pinned for this rank's GPU */
  int hostTiers; /**< 1: the comm spans hosts and runs AllGather in host tiers; the fields above then count
                      the tiers' ops too */
  unsigned long long tieredAllGathers;    /**< AllGathers this rank ran in host tiers */
  unsigned long long reductionsTwoShotSm; /**< of opsGpuToGpu, reductions by two-shot whose kernel also writes
                                             the peers' outputs */
  unsigned long long reductionsRing;      /**< of opsGpuToGpu, reductions by the ring */
  int flaggedLines;                       /**< 1: the ranks set up landing zones for small ops by flagged lines */
  unsigned long long opsByLines;          /**< of opsGpuToGpu, ops that went as one kernel by flagged lines, with no
                                             host between the ranks */
  unsigned long long overlapReduces;      /**< of opsGpuToGpu, Reduces of ReduceScatterOverlap and GemmReduceScatter
                                             on device buffers, run beside the next block's producer */
  int hostRelays; /**< 1: the GPU-to-GPU path moves device buffers through host relays, since some pair of the
                       GPUs cannot reach each other or a rank set SLIMECCL_P2P_DISABLE=1 (docs/cuda.md) */
  unsigned long long opsRelayed; /**< of opsGpuToGpu, ops whose bytes crossed the host relays on copy engines */
} slimecclDevicePathInfo;
/** Fills `info` for this rank of the communicator. */
slimecclResult_t slimecclCommGetDevicePathInfo(slimecclComm_t comm, slimecclDevicePathInfo* info);

/** The way an op ran (slimecclOpRoute). */
typedef enum {
  slimecclRouteNone = 0,        /**< no op has started on the communicator yet */
  slimecclRouteNet = 1,         /**< a schedule over the net modules (shm, socket, ib or a plugin) */
  slimecclRouteSharedSlots = 2, /**< the shared slots of a one-host communicator (tiny collectives) */
  slimecclRouteEager = 3,       /**< a Send or Recv of at most 8 KiB, its one message posted straight to the link */
  slimecclRouteGpuToGpu = 4,    /**< device buffers GPU to GPU (slimecclCommGetDevicePathInfo counts how) */
  slimecclRouteHostTiers = 5    /**< an AllGather across hosts in two tiers: within each host, then between hosts
                                   (docs/cuda.md); its parts run on the tiers' own communicators */
} slimecclRoute_t;
/** How this rank's most recently started op of a communicator runs (docs/debugging.md). */
typedef struct {
  slimecclRoute_t route;  /**< which way it went */
  char op[16];            /**< the call: "AllReduce", "Send", ... */
  char algorithm[16];     /**< a host collective's algorithm as SLIMECCL_ALGO spells it ("ring", "hd", ...), a
                             reduction's GPU to GPU as SLIMECCL_GPU_REDUCE_ALGO does ("oneshot", "ring", ...),
                             "scatter_ag" for a Broadcast GPU to GPU that the root scatters and the others pass
                             on, "lines" for any op by flagged lines (small ops GPU to GPU, docs/cuda.md); empty
                             for other Send/Recv and other ops GPU to GPU */
  unsigned long long seq; /**< the op's sequence number (a collective's, or the Send/Recv's with its peer) */
} slimecclOpRoute;
/** Fills `route` for this rank's most recently started op of the communicator. */
slimecclResult_t slimecclCommGetLastOpRoute(slimecclComm_t comm, slimecclOpRoute* route);

/** Host memory that the ranks of other processes on this host can map (a shared memfd). Any buffer
 * works with every call; a buffer from here lets shm peers copy from it with memcpy rather than
 * process_vm_readv, which is faster for large messages. Page-aligned; size 0 gives NULL.
 * slimecclMemFree takes only pointers from slimecclMemAlloc (NULL is a no-op), and no op may
 * still use the buffer. */
slimecclResult_t slimecclMemAlloc(void** ptr, size_t size);
/** Frees memory from slimecclMemAlloc. */
slimecclResult_t slimecclMemFree(void* ptr);

/** NCCL's buffer registration. A registered buffer (host or device memory; device memory must lie
 * within one allocation) stays mapped by the peers that write into it on the GPU-to-GPU path for as
 * long as the communicator lives, instead of taking its turn in their cache of mappings, so a
 * buffer reused for many ops is mapped once (docs/cuda.md). Unregistered buffers work the same
 * way otherwise. *handle is for slimecclCommDeregister on the same communicator. */
slimecclResult_t slimecclCommRegister(const slimecclComm_t comm, void* buff, size_t size, void** handle);
/** Ends a registration made by slimecclCommRegister. */
slimecclResult_t slimecclCommDeregister(const slimecclComm_t comm, void* handle);

/** Every rank's sendcount elements, in rank order, into every rank's recvbuff (nranks * sendcount;
 * in place when sendbuff is recvbuff + rank * sendcount). The collectives below are NCCL's, with
 * NCCL's arguments; an op is queued on `stream` (see slimecclStream_t). */
slimecclResult_t slimecclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, slimecclDataType_t datatype,
                                   slimecclComm_t comm, slimecclStream_t stream);
/** The reduction over ranks of every rank's count elements, into every rank's recvbuff. */
slimecclResult_t slimecclAllReduce(const void* sendbuff, void* recvbuff, size_t count, slimecclDataType_t datatype,
                                   slimecclRedOp_t op, slimecclComm_t comm, slimecclStream_t stream);
/** The reduction of every rank's nranks * recvcount elements; rank r receives block r. */
slimecclResult_t slimecclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                       slimecclDataType_t datatype, slimecclRedOp_t op, slimecclComm_t comm,
                                       slimecclStream_t stream);
/** The root's count elements into every rank's recvbuff. */
slimecclResult_t slimecclBroadcast(const void* sendbuff, void* recvbuff, size_t count, slimecclDataType_t datatype,
                                   int root, slimecclComm_t comm, slimecclStream_t stream);
/** The reduction over ranks of every rank's count elements, into the root's recvbuff. */
slimecclResult_t slimecclReduce(const void* sendbuff, void* recvbuff, size_t count, slimecclDataType_t datatype,
                                slimecclRedOp_t op, int root, slimecclComm_t comm, slimecclStream_t stream);
/** NCCL's pre-multiplied sum: a reduction operator for `comm` that sums every rank's input
 * multiplied by that rank's own scalar (of `datatype`, the only datatype it takes; each rank makes
 * its own, with its own scalar). With slimecclScalarDevice, `scalar` is device memory of the
 * comm's GPU that each op reads when it runs; with slimecclScalarHostImmediate it is read now.
 * The operator works with AllReduce, ReduceScatter and Reduce on every path (docs/algorithms.md
 * says how it rounds). slimecclInvalidArgument for a NULL pointer, a bad datatype or residence, or
 * a device scalar that is not device memory. */
slimecclResult_t slimecclRedOpCreatePreMulSum(slimecclRedOp_t* op, void* scalar, slimecclDataType_t datatype,
                                              slimecclScalarResidence_t residence, slimecclComm_t comm);
/** Frees an operator of slimecclRedOpCreatePreMulSum; calls made with it before may still be
 * running. slimecclInvalidArgument for an operator that is not a live one of `comm`. */
slimecclResult_t slimecclRedOpDestroy(slimecclRedOp_t op, slimecclComm_t comm);
/** Block r (count elements) of every rank's sendbuff to rank r, in sender order. */
slimecclResult_t slimecclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, slimecclDataType_t datatype,
                                  slimecclComm_t comm, slimecclStream_t stream);
/** count elements to `peer`, which posts the matching slimecclRecv. */
slimecclResult_t slimecclSend(const void* sendbuff, size_t count, slimecclDataType_t datatype, int peer,
                              slimecclComm_t comm, slimecclStream_t stream);
/** count elements from `peer`, which posts the matching slimecclSend. */
slimecclResult_t slimecclRecv(void* recvbuff, size_t count, slimecclDataType_t datatype, int peer, slimecclComm_t comm,
                              slimecclStream_t stream);
/** Opens a group: the calls until slimecclGroupEnd are issued together (NCCL's semantics), so
 * Sends and Recvs between ranks cannot deadlock on their order. */
slimecclResult_t slimecclGroupStart(void);
/** Closes a group and issues its calls. */
slimecclResult_t slimecclGroupEnd(void);

/** C[M x N] = AllGather(A)[M x K] * B[K x N], row-major, M = nranks * mLocal. aGathered may be
 * NULL (the library keeps a workspace); when given it receives the gathered A. The GEMM of the
 * blocks that have landed runs while the rest of A is still in flight. On host buffers, the GEMM
 * is OpenBLAS's: float and double. On device buffers (all of them memory of the stream's GPU, the
 * stream from slimecclStreamCreateFromCuda, outside a group), each block's GEMM is cuBLAS's,
 * queued on the CUDA stream as the block lands, while copy engines move the others: bfloat16,
 * float16 (both accumulating in float), float (TF32 with SLIMECCL_GEMM_TF32=1) and double. Other
 * types are slimecclInvalidArgument (docs/overlap.md). */
slimecclResult_t slimecclAllGatherGemm(const void* aLocal, void* aGathered, const void* b, void* c, size_t mLocal,
                                       size_t n, size_t k, slimecclDataType_t datatype, slimecclComm_t comm,
                                       slimecclStream_t stream);
/** The general form. On host buffers, onChunk runs (on the library's thread) as soon as each
 * rank's block lands: once per rank, own block first, then in arrival order, one call at a time;
 * the op completes after the last callback returns. On device buffers (the stream from
 * slimecclStreamCreateFromCuda, outside a group), onChunk runs on the calling thread before the
 * call returns, once per rank, own block first, then rank-1, rank-2, ...: work it queues on the
 * CUDA stream at that point runs once that block has landed, while the later blocks are still in
 * flight (the own block may be handed at sendbuff). The callback must not write into chunk
 * (docs/overlap.md). */
typedef void (*slimecclChunkFn)(int srcRank, void* chunk, size_t count, void* user);
/** AllGather calling onChunk for each rank's block as it lands (see slimecclChunkFn). */
slimecclResult_t slimecclAllGatherOverlap(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          slimecclDataType_t datatype, slimecclChunkFn onChunk, void* user,
                                          slimecclComm_t comm, slimecclStream_t stream);

/** C[mLocal x N] = this rank's block of rows of ReduceScatter_op(A[M x K] x B[K x N]), row-major,
 * M = nranks * mLocal: every rank holds its own A and B (its shard of a row-parallel layer, K being
 * the local K) and rank r receives rows r * mLocal .. (r + 1) * mLocal - 1 of the reduced product.
 * The partial product bound for rank d is A's row block d times B; block d is reduced to rank d
 * while the GEMM of block d+1 runs (blocks 0, 1, ... in that order on every rank). C must share no
 * bytes with A or B. Types as slimecclAllGatherGemm's: on host buffers OpenBLAS's float and double;
 * on device buffers (the stream from slimecclStreamCreateFromCuda, outside a group) cuBLASLt's
 * bfloat16, float16, float and double, the Reduces GPU to GPU on a stream of the library's beside
 * the caller's. op: any that slimecclReduceScatter takes (docs/overlap.md). */
slimecclResult_t slimecclGemmReduceScatter(const void* a, const void* b, void* c, size_t mLocal, size_t n, size_t k,
                                           slimecclDataType_t datatype, slimecclRedOp_t op, slimecclComm_t comm,
                                           slimecclStream_t stream);
/** The general form: a ReduceScatter whose send blocks are produced as it goes. produce(d, block,
 * recvcount, user) fills block d of sendbuff, for d = 0, 1, ..., nranks-1 in that order; block d is
 * reduced to rank d (into its recvbuff) while block d+1 is produced. On host buffers produce runs on
 * the library's thread, one call at a time, starting when the op's turn comes on its stream; on
 * device buffers it runs on the calling thread before the call returns and queues on the CUDA
 * stream the work that fills the block. produce must not call slimeccl on the same communicator.
 * recvcount == 0 does nothing (docs/overlap.md). */
slimecclResult_t slimecclReduceScatterOverlap(void* sendbuff, void* recvbuff, size_t recvcount,
                                              slimecclDataType_t datatype, slimecclRedOp_t op, slimecclChunkFn produce,
                                              void* user, slimecclComm_t comm, slimecclStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SLIMECCL_H_ */
