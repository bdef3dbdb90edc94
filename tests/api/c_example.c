/* A C99 program that uses only slimeccl.h: four forked ranks AllGather their data and check it.
 * Exits 0 when every rank saw every other rank's data. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slimeccl.h"

#define NRANKS 4
#define COUNT 1001
#define RANK_TIME_LIMIT_S 60

static int value_of(int rank, int index) { return rank * 100000 + index; }

static int fail(int rank, const char* what, slimecclResult_t result, slimecclComm_t comm) {
  fprintf(stderr, "c_example rank %d: %s returned %s: %s\n", rank, what, slimecclGetErrorString(result),
          slimecclGetLastError(comm));
  return 1;
}

static int write_all(int fd, const void* data, size_t bytes) {
  const char* cursor = (const char*)data;
  while (bytes > 0) {
    ssize_t written = write(fd, cursor, bytes);
    if (written <= 0) return -1;
    cursor += written;
    bytes -= (size_t)written;
  }
  return 0;
}

static int read_all(int fd, void* data, size_t bytes) {
  char* cursor = (char*)data;
  while (bytes > 0) {
    ssize_t got = read(fd, cursor, bytes);
    if (got <= 0) return -1;
    cursor += got;
    bytes -= (size_t)got;
  }
  return 0;
}

/* One rank's whole life; returns the process exit code. Rank 0 makes the unique id and writes it
 * into every other rank's pipe. */
static int run_rank(int rank, int id_pipes[NRANKS][2]) {
  slimecclUniqueId id;
  slimecclComm_t comm = NULL;
  slimecclResult_t result;
  int* sendbuf;
  int* recvbuf;
  int peer;
  int i;
  int errors = 0;

  /* Only rank 0 writes ids, so a rank 0 that dies leaves the others reading end of file. */
  if (rank != 0) {
    for (peer = 0; peer < NRANKS; ++peer) close(id_pipes[peer][1]);
  }
  if (rank == 0) {
    result = slimecclGetUniqueId(&id);
    if (result != slimecclSuccess) return fail(rank, "slimecclGetUniqueId", result, NULL);
    for (peer = 1; peer < NRANKS; ++peer) {
      if (write_all(id_pipes[peer][1], &id, sizeof(id)) != 0) return 1;
    }
  } else if (read_all(id_pipes[rank][0], &id, sizeof(id)) != 0) {
    fprintf(stderr, "c_example rank %d: no unique id from rank 0\n", rank);
    return 1;
  }

  result = slimecclCommInitRank(&comm, NRANKS, id, rank);
  if (result != slimecclSuccess) return fail(rank, "slimecclCommInitRank", result, NULL);

  sendbuf = (int*)malloc(COUNT * sizeof(int));
  recvbuf = (int*)malloc((size_t)NRANKS * COUNT * sizeof(int));
  if (sendbuf == NULL || recvbuf == NULL) return 1;
  for (i = 0; i < COUNT; ++i) sendbuf[i] = value_of(rank, i);
  for (i = 0; i < NRANKS * COUNT; ++i) recvbuf[i] = -1;

  result = slimecclAllGather(sendbuf, recvbuf, COUNT, slimecclInt32, comm, NULL);
  if (result != slimecclSuccess) return fail(rank, "slimecclAllGather", result, comm);
  for (peer = 0; peer < NRANKS; ++peer) {
    for (i = 0; i < COUNT; ++i) {
      if (recvbuf[peer * COUNT + i] != value_of(peer, i)) ++errors;
    }
  }
  if (errors != 0) fprintf(stderr, "c_example rank %d: %d wrong elements\n", rank, errors);

  result = slimecclCommFinalize(comm);
  if (result != slimecclSuccess) return fail(rank, "slimecclCommFinalize", result, comm);
  result = slimecclCommDestroy(comm);
  if (result != slimecclSuccess) return fail(rank, "slimecclCommDestroy", result, NULL);
  free(sendbuf);
  free(recvbuf);
  return errors == 0 ? 0 : 1;
}

int main(void) {
  int id_pipes[NRANKS][2];
  pid_t pids[NRANKS];
  int rank;
  int failed = 0;

  for (rank = 0; rank < NRANKS; ++rank) {
    if (pipe(id_pipes[rank]) != 0) {
      perror("pipe");
      return 1;
    }
  }
  fflush(NULL);
  for (rank = 0; rank < NRANKS; ++rank) {
    pids[rank] = fork();
    if (pids[rank] < 0) {
      perror("fork");
      return 1;
    }
    if (pids[rank] == 0) {
      /* A rank that hangs is ended by the alarm rather than holding the test forever. */
      alarm(RANK_TIME_LIMIT_S);
      _exit(run_rank(rank, id_pipes));
    }
  }
  for (rank = 0; rank < NRANKS; ++rank) {
    int status = 0;
    if (waitpid(pids[rank], &status, 0) != pids[rank] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "c_example: rank %d failed (wait status %d)\n", rank, status);
      failed = 1;
    }
  }
  if (!failed) printf("c_example: %d ranks gathered %d ints each correctly\n", NRANKS, COUNT);
  return failed;
}
