/* slimeccl net-module plugin ABI.
 *
 * A net module moves bytes between two ranks over unidirectional connections. The receiving side
 * listens and publishes a handle (through the library's bootstrap); the sending side connects to
 * that handle; the receiving side accepts. Messages on one connection arrive in the order they
 * were sent, and every isend matches exactly one irecv posted in the same order. A receive may be
 * posted with a larger size than the message; the received size is reported by test(). A message
 * larger than the posted receive is an error (never a write past the buffer).
 *
 * An external module is a shared library named libslimeccl-net-NAME.so that exports the symbol
 * SLIMECCL_NET_PLUGIN_SYMBOL_V1 (a slimecclNet_v1_t), loaded when SLIMECCL_NET_PLUGIN=NAME (peers
 * on other hosts) or SLIMECCL_NET=NAME (every peer). Every entry is required. At load the library
 * lists the devices and reads their properties (each must move host memory); a rank's connections
 * take the device whose name its placement names, else device 0. Each buffer is registered with
 * regMr just before the isend or irecv that moves it and deregistered once test() reports it done
 * or failed. The tag of a message is its number on its connection (0, 1, 2, ...), the same on the
 * sending and the receiving side. tests/net_plugin/example_net_plugin.c is a complete example. */
#ifndef SLIMECCL_NET_H_
#define SLIMECCL_NET_H_

#include <stddef.h>
#include <stdint.h>

#include "slimeccl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SLIMECCL_NET_HANDLE_MAXSIZE 128
#define SLIMECCL_NET_PLUGIN_SYMBOL_V1 "slimecclNetPlugin_v1"

#define SLIMECCL_PTR_HOST 0x1
#define SLIMECCL_PTR_CUDA 0x2

typedef enum {
  SLIMECCL_LOG_NONE = 0,
  SLIMECCL_LOG_WARN = 1,
  SLIMECCL_LOG_INFO = 2,
  SLIMECCL_LOG_TRACE = 3
} slimecclNetLogLevel_t;

/* The library's logger, handed to init(): lines go through SLIMECCL_DEBUG like the core's. */
typedef void (*slimecclNetLogger_t)(slimecclNetLogLevel_t level, const char* file, int line, const char* fmt, ...);

typedef struct {
  char* name;     /* device name, for logs and slimeccl-info */
  char* pciPath;  /* sysfs path of the device, or NULL */
  uint64_t guid;  /* unique per physical device */
  int ptrSupport; /* SLIMECCL_PTR_HOST | SLIMECCL_PTR_CUDA */
  int speedMbps;  /* link speed; 0 if unknown */
  int port;
  int maxComms; /* how many connections the device supports */
  int maxRecvs; /* receives that may be grouped; 1 for v1 modules */
} slimecclNetProperties_v1_t;

typedef struct {
  const char* name; /* module name, e.g. "socket" */
  /* Called once before any other function. */
  slimecclResult_t (*init)(slimecclNetLogger_t logger);
  slimecclResult_t (*devices)(int* ndev);
  slimecclResult_t (*getProperties)(int dev, slimecclNetProperties_v1_t* props);
  /* Creates a listening endpoint; fills handle (at most SLIMECCL_NET_HANDLE_MAXSIZE bytes). */
  slimecclResult_t (*listen)(int dev, void* handle, void** listenComm);
  /* Non-blocking: returns Success with *sendComm == NULL until the connection is made; call again. */
  slimecclResult_t (*connect)(int dev, void* handle, void** sendComm);
  /* Non-blocking likewise: *recvComm stays NULL until a connection arrives. */
  slimecclResult_t (*accept)(void* listenComm, void** recvComm);
  /* type: SLIMECCL_PTR_HOST or SLIMECCL_PTR_CUDA. */
  slimecclResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  slimecclResult_t (*deregMr)(void* comm, void* mhandle);
  /* Non-blocking: *request == NULL means "retry later" (too many requests in flight). */
  slimecclResult_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
  slimecclResult_t (*irecv)(void* recvComm, void* data, size_t size, int tag, void* mhandle, void** request);
  /* *done becomes 1 once the request completed; *size then holds the bytes moved. The request is
   * freed when it reports done (or an error). */
  slimecclResult_t (*test)(void* request, int* done, size_t* size);
  slimecclResult_t (*closeSend)(void* sendComm);
  slimecclResult_t (*closeRecv)(void* recvComm);
  slimecclResult_t (*closeListen)(void* listenComm);
} slimecclNet_v1_t;

#ifdef __cplusplus
}
#endif

#endif /* SLIMECCL_NET_H_ */
