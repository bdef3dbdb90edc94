/* An external net module for slimeccl, as a vendor would write one: libslimeccl-net-example.so,
 * exporting the v1 table of include/slimeccl_net.h, built against nothing but that header. It
 * moves messages over TCP (one connection per slimeccl connection, non-blocking), each framed by
 * its length and tag, and checks what the library promises it: every buffer it moves was
 * registered with regMr and covers the message, and each message meets the receive with its tag.
 * EXAMPLE_NET_ADDR names the IPv4 address its listeners take (default 127.0.0.1). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "slimeccl_net.h"

#define LOG(level, ...)                                                 \
  do {                                                                  \
    if (logger != NULL) logger(level, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

static slimecclNetLogger_t logger;

/* What the library asked of this process's copy of the module, for the tests: devices listed,
 * buffers registered, messages posted (sends and receives). */
static uint64_t devicesListed, registrations, messagesPosted;

__attribute__((visibility("default"))) void exampleNetCounts(uint64_t* devices, uint64_t* regs, uint64_t* messages) {
  *devices = __atomic_load_n(&devicesListed, __ATOMIC_RELAXED);
  *regs = __atomic_load_n(&registrations, __ATOMIC_RELAXED);
  *messages = __atomic_load_n(&messagesPosted, __ATOMIC_RELAXED);
}

struct handle {
  struct sockaddr_in addr;
};

/* What each message carries before its bytes. */
struct frame {
  uint64_t size;
  int32_t tag;
  int32_t pad;
};

struct region {
  const char* data;
  size_t size;
};

struct request;

/* One end of a connection: its socket and its requests in the order posted, which is the order
 * their bytes cross. */
struct conn {
  int fd;
  int sending;
  int broken; /* a message failed: every request still queued fails */
  struct request* head;
  struct request* tail;
};

struct request {
  struct conn* conn;
  struct request* next;
  char* data;
  size_t size;
  int tag;
  struct frame frame;
  size_t frameDone; /* bytes of the frame sent or received */
  size_t dataDone;
  int finished;
};

static slimecclResult_t init(slimecclNetLogger_t log) {
  logger = log;
  return slimecclSuccess;
}

static slimecclResult_t devices(int* ndev) {
  __atomic_add_fetch(&devicesListed, 1, __ATOMIC_RELAXED);
  *ndev = 1;
  return slimecclSuccess;
}

static slimecclResult_t getProperties(int dev, slimecclNetProperties_v1_t* props) {
  if (dev != 0) return slimecclInvalidArgument;
  memset(props, 0, sizeof(*props));
  props->name = (char*)"example-tcp";
  props->guid = 0x6578616d706c65ull;
  props->ptrSupport = SLIMECCL_PTR_HOST;
  props->maxComms = 65536;
  props->maxRecvs = 1;
  return slimecclSuccess;
}

static int nonBlocking(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static slimecclResult_t listenOn(int dev, void* handle, void** listenComm) {
  if (dev != 0) return slimecclInvalidArgument;
  const char* addr = getenv("EXAMPLE_NET_ADDR");
  struct handle h;
  memset(&h, 0, sizeof(h));
  h.addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, addr != NULL ? addr : "127.0.0.1", &h.addr.sin_addr) != 1) return slimecclInvalidArgument;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  socklen_t len = sizeof(h.addr);
  if (fd < 0 || bind(fd, (struct sockaddr*)&h.addr, sizeof(h.addr)) != 0 || listen(fd, 128) != 0 ||
      getsockname(fd, (struct sockaddr*)&h.addr, &len) != 0 || nonBlocking(fd) != 0) {
    LOG(SLIMECCL_LOG_WARN, "cannot listen: %s", strerror(errno));
    if (fd >= 0) close(fd);
    return slimecclSystemError;
  }
  memcpy(handle, &h, sizeof(h));
  struct conn* c = calloc(1, sizeof(*c));
  c->fd = fd;
  *listenComm = c;
  return slimecclSuccess;
}

static struct conn* newConn(int fd, int sending) {
  struct conn* c = calloc(1, sizeof(*c));
  c->fd = fd;
  c->sending = sending;
  return c;
}

static slimecclResult_t connectTo(int dev, void* handle, void** sendComm) {
  if (dev != 0) return slimecclInvalidArgument;
  struct handle h;
  memcpy(&h, handle, sizeof(h));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr*)&h.addr, sizeof(h.addr)) != 0 || nonBlocking(fd) != 0) {
    LOG(SLIMECCL_LOG_WARN, "cannot connect: %s", strerror(errno));
    if (fd >= 0) close(fd);
    return slimecclRemoteError;
  }
  *sendComm = newConn(fd, 1);
  return slimecclSuccess;
}

static slimecclResult_t acceptFrom(void* listenComm, void** recvComm) {
  struct conn* l = listenComm;
  *recvComm = NULL;
  int fd = accept(l->fd, NULL, NULL);
  if (fd < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? slimecclSuccess : slimecclSystemError;
  if (nonBlocking(fd) != 0) {
    close(fd);
    return slimecclSystemError;
  }
  *recvComm = newConn(fd, 0);
  return slimecclSuccess;
}

static slimecclResult_t regMr(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (comm == NULL || type != SLIMECCL_PTR_HOST) return slimecclInvalidArgument;
  __atomic_add_fetch(&registrations, 1, __ATOMIC_RELAXED);
  struct region* r = malloc(sizeof(*r));
  r->data = data;
  r->size = size;
  *mhandle = r;
  return slimecclSuccess;
}

static slimecclResult_t deregMr(void* comm, void* mhandle) {
  if (comm == NULL || mhandle == NULL) return slimecclInvalidArgument;
  free(mhandle);
  return slimecclSuccess;
}

static int covers(const struct region* r, const void* data, size_t size) {
  return r != NULL && (const char*)data >= r->data && (const char*)data + size <= r->data + r->size;
}

static slimecclResult_t post(struct conn* c, void* data, size_t size, int tag, void* mhandle, void** request) {
  if (!covers(mhandle, data, size)) {
    LOG(SLIMECCL_LOG_WARN, "a buffer of %zu bytes was not registered", size);
    return slimecclInvalidUsage;
  }
  __atomic_add_fetch(&messagesPosted, 1, __ATOMIC_RELAXED);
  struct request* r = calloc(1, sizeof(*r));
  r->conn = c;
  r->data = data;
  r->size = size;
  r->tag = tag;
  r->frame.size = size;
  r->frame.tag = tag;
  if (c->tail != NULL)
    c->tail->next = r;
  else
    c->head = r;
  c->tail = r;
  *request = r;
  return slimecclSuccess;
}

static slimecclResult_t isend(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(sendComm, data, size, tag, mhandle, request);
}

static slimecclResult_t irecv(void* recvComm, void* data, size_t size, int tag, void* mhandle, void** request) {
  return post(recvComm, data, size, tag, mhandle, request);
}

/* Moves bytes of [at, at + size) of buf; returns 1 when they are all done, 0 when the socket
 * would block, -1 on failure. */
static int move(struct conn* c, char* buf, size_t size, size_t* done) {
  while (*done < size) {
    ssize_t n =
        c->sending ? send(c->fd, buf + *done, size - *done, MSG_NOSIGNAL) : recv(c->fd, buf + *done, size - *done, 0);
    if (n > 0) {
      *done += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    return -1;
  }
  return 1;
}

/* Progresses the connection's oldest request; 1 when it finished. */
static int progressHead(struct conn* c) {
  struct request* r = c->head;
  int step = move(c, (char*)&r->frame, sizeof(r->frame), &r->frameDone);
  if (step <= 0) return step;
  if (!c->sending && (r->frame.size > r->size || r->frame.tag != r->tag)) {
    LOG(SLIMECCL_LOG_WARN, "a message of %llu bytes with tag %d met a receive of %zu bytes with tag %d",
        (unsigned long long)r->frame.size, r->frame.tag, r->size, r->tag);
    return -1;
  }
  return move(c, r->data, (size_t)r->frame.size, &r->dataDone);
}

static void dropRequest(struct conn* c, struct request* r) {
  struct request** at = &c->head;
  struct request* before = NULL;
  while (*at != NULL && *at != r) {
    before = *at;
    at = &(*at)->next;
  }
  if (*at == NULL) return;
  *at = r->next;
  if (c->tail == r) c->tail = before;
}

static slimecclResult_t test(void* request, int* done, size_t* size) {
  struct request* r = request;
  struct conn* c = r->conn;
  *done = 0;
  /* Requests finish in order: the ones posted before this one move first. One that finishes
   * before it is tested stays finished until its test. */
  while (!r->finished && !c->broken) {
    const int step = progressHead(c);
    if (step == 0) return slimecclSuccess;
    if (step < 0) {
      c->broken = 1;
      break;
    }
    struct request* head = c->head;
    c->head = head->next;
    if (c->head == NULL) c->tail = NULL;
    head->finished = 1;
  }
  if (!r->finished) {
    dropRequest(c, r);
    free(r);
    return slimecclRemoteError;
  }
  *done = 1;
  *size = (size_t)r->frame.size;
  free(r);
  return slimecclSuccess;
}

static slimecclResult_t closeConn(void* comm) {
  struct conn* c = comm;
  if (c == NULL) return slimecclSuccess;
  while (c->head != NULL) {
    struct request* next = c->head->next;
    free(c->head);
    c->head = next;
  }
  close(c->fd);
  free(c);
  return slimecclSuccess;
}

__attribute__((visibility("default"))) const slimecclNet_v1_t slimecclNetPlugin_v1 = {
    "example", init,  devices, getProperties, listenOn,  connectTo, acceptFrom, regMr,
    deregMr,   isend, irecv,   test,          closeConn, closeConn, closeConn,
};
