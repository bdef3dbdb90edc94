// The header of a session's first message in both forms: what the receiver reads back from each,
// and what it makes of a message that is neither.
#include "src/exec/session_header.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace slimeccl {
namespace {

OpDesc sendOf(size_t bytes, int rank) {
  OpRecord op{};
  op.coll = Coll::Send;
  op.count = bytes / 4;
  op.type = slimecclInt32;
  op.peer = 1;
  op.seq = 7;
  OpDesc desc;
  fillDesc(op, rank, bytes, &desc);
  return desc;
}

TEST(SessionHeader, ShortFormGivesTheSendersRankCallAndTheBytesThatFollow) {
  std::vector<char> message(sizeof(OpDesc) + 64, 0);
  size_t at = writeHeader(sendOf(40, 3), true, message.data());
  EXPECT_EQ(at, 8u);
  OpDesc read;
  EXPECT_EQ(readHeader(message.data(), at + 40, &read), 8u);
  EXPECT_EQ(read.magic, kOpDescMagic);
  EXPECT_EQ(read.isP2P, 1);
  EXPECT_EQ(read.coll, static_cast<uint8_t>(Coll::Send));
  EXPECT_EQ(read.rank, 3);
  EXPECT_EQ(read.bytes, 40u);
  // A short header alone is a Send of nothing.
  EXPECT_EQ(readHeader(message.data(), at, &read), 8u);
  EXPECT_EQ(read.bytes, 0u);
}

TEST(SessionHeader, WholeFormIsTheDescriptorAsWritten) {
  std::vector<char> message(sizeof(OpDesc) + 64, 0);
  OpDesc desc = sendOf(40, 2);
  size_t at = writeHeader(desc, false, message.data());
  EXPECT_EQ(at, sizeof(OpDesc));
  OpDesc read;
  EXPECT_EQ(readHeader(message.data(), at + 40, &read), sizeof(OpDesc));
  EXPECT_EQ(memcmp(&read, &desc, sizeof(OpDesc)), 0);
}

TEST(SessionHeader, AMessageInNeitherFormReadsAsNoDescriptor) {
  std::vector<char> message(sizeof(OpDesc), 'x');
  OpDesc read;
  EXPECT_EQ(readHeader(message.data(), message.size(), &read), 0u);
  EXPECT_NE(read.magic, kOpDescMagic);
  // Too short for either form, even with the right magic.
  writeHeader(sendOf(40, 2), true, message.data());
  EXPECT_EQ(readHeader(message.data(), 7, &read), 0u);
  writeHeader(sendOf(40, 2), false, message.data());
  EXPECT_EQ(readHeader(message.data(), sizeof(OpDesc) - 1, &read), 0u);
  EXPECT_NE(read.magic, kOpDescMagic);
}

TEST(SessionHeader, IsShortSendOnlyForThatPeersSendOfThatSize) {
  std::vector<char> message(sizeof(OpDesc) + 64, 0);
  size_t at = writeShortHeader(Coll::Send, 2, message.data());
  EXPECT_TRUE(isShortSend(message.data(), at + 40, 2, 40));
  EXPECT_FALSE(isShortSend(message.data(), at + 40, 1, 40));
  EXPECT_FALSE(isShortSend(message.data(), at + 40, 2, 39));
  writeShortHeader(Coll::Recv, 2, message.data());
  EXPECT_FALSE(isShortSend(message.data(), at + 40, 2, 40));
  // The whole form of the same call reads back as the same Send, but is not the short one.
  at = writeHeader(sendOf(40, 2), false, message.data());
  EXPECT_FALSE(isShortSend(message.data(), at + 40, 2, 40));
}

}  // namespace
}  // namespace slimeccl
