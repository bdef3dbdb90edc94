// A large shm message is pulled by the receiver from the sender's buffer: a sender that dies after
// posting it, before the receiver has copied it, must end the Recv with a RemoteError naming the
// peer, not with a hang or with garbage.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "slimeccl.h"

namespace {

constexpr size_t kCount = 16 * 1024 * 1024;  // 64 MiB of int32: far above the single-copy size

// Rank 1 sends one small message (so that the connections exist), posts the large Send on a
// stream, gives it time to reach the receiver, then exits uncleanly.
void runSender(int idPipe) {
  slimecclUniqueId id;
  slimecclComm_t comm;
  slimecclStream_t stream;
  if (read(idPipe, &id, sizeof(id)) != sizeof(id)) _exit(20);
  if (slimecclCommInitRank(&comm, 2, id, 1) != slimecclSuccess) _exit(21);
  if (slimecclStreamCreate(&stream) != slimecclSuccess) _exit(22);
  int first = 7;
  if (slimecclSend(&first, 1, slimecclInt32, 0, comm, nullptr) != slimecclSuccess) _exit(24);
  std::vector<int> data(kCount, 5);
  if (slimecclSend(data.data(), kCount, slimecclInt32, 0, comm, stream) != slimecclSuccess) _exit(23);
  usleep(300 * 1000);
  _exit(0);
}

// Rank 0 starts its Recv only once the sender is gone; it reports result and error on `report`.
void runReceiver(int idPipe, int report, int senderGone) {
  slimecclUniqueId id;
  slimecclComm_t comm;
  if (slimecclGetUniqueId(&id) != slimecclSuccess) _exit(10);
  if (write(idPipe, &id, sizeof(id)) != sizeof(id)) _exit(11);
  if (slimecclCommInitRank(&comm, 2, id, 0) != slimecclSuccess) _exit(12);
  int first = 0;
  if (slimecclRecv(&first, 1, slimecclInt32, 1, comm, nullptr) != slimecclSuccess || first != 7) _exit(15);
  char gone;
  if (read(senderGone, &gone, 1) != 1) _exit(13);
  std::vector<int> data(kCount, 0);
  int code = slimecclRecv(data.data(), kCount, slimecclInt32, 1, comm, nullptr);
  std::string error = slimecclGetLastError(comm);
  if (write(report, &code, sizeof(code)) != sizeof(code) ||
      write(report, error.c_str(), error.size()) != static_cast<ssize_t>(error.size()))
    _exit(14);
  _exit(0);
}

TEST(SingleCopyFailure, ASenderThatDiesBeforeItsBufferIsPulledIsARemoteError) {
  setenv("SLIMECCL_NET", "shm", 1);
  setenv("SLIMECCL_TIMEOUT_MS", "30000", 1);
  setenv("SLIMECCL_SHM_SINGLE_COPY_BYTES", "65536", 1);
  int idPipe[2], report[2], gone[2];
  ASSERT_EQ(pipe(idPipe), 0);
  ASSERT_EQ(pipe(report), 0);
  ASSERT_EQ(pipe(gone), 0);
  pid_t receiver = fork();
  if (receiver == 0) runReceiver(idPipe[1], report[1], gone[0]);
  pid_t sender = fork();
  if (sender == 0) runSender(idPipe[0]);
  int status = 0;
  waitpid(sender, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "sender exit status " << status;
  ASSERT_EQ(write(gone[1], "x", 1), 1);
  close(report[1]);
  waitpid(receiver, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "receiver exit status " << status;
  int code = 0;
  EXPECT_EQ(read(report[0], &code, sizeof(code)), static_cast<ssize_t>(sizeof(code)));
  char text[2048] = {0};
  ssize_t n = read(report[0], text, sizeof(text) - 1);
  std::string error(text, n > 0 ? static_cast<size_t>(n) : 0);
  EXPECT_EQ(code, slimecclRemoteError) << error;
  EXPECT_NE(error.find("peer 1"), std::string::npos) << error;
  EXPECT_NE(error.find("is gone"), std::string::npos) << error;
  for (int fd : {idPipe[0], idPipe[1], report[0], gone[0], gone[1]}) close(fd);
  for (const char* name : {"SLIMECCL_NET", "SLIMECCL_TIMEOUT_MS", "SLIMECCL_SHM_SINGLE_COPY_BYTES"}) unsetenv(name);
}

}  // namespace
