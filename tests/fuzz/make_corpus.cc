// Writes the seed corpus of every fuzz target: a few valid messages and a few typical invalid ones,
// built from the library's own structs. Usage: make_corpus DIR (writes DIR/<target>/<seed>).
#include <arpa/inet.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "net/ib/ib_wire.h"
#include "net/socket/socket_wire.h"
#include "src/bootstrap/unique_id.h"
#include "src/bootstrap/wire.h"
#include "src/exec/plan.h"
#include "tests/fuzz/input_records.h"
#include "tests/fuzz/known_secret.h"

namespace {

using namespace slimeccl;

std::string outDir;

template <typename T>
std::string bytesOf(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(value));
}

void write(const std::string& target, const std::string& name, const std::string& bytes) {
  std::string dir = outDir + "/" + target;
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

std::string header(WireType type, uint32_t length) {
  return bytesOf(WireHeader{kWireMagic, static_cast<uint32_t>(type), length, 0});
}

std::string hello(int nranks, int rank, const CommSecret& secret) {
  HelloPayload h{};
  h.proof = proveSecret(secret, ProofPurpose::RootHello, 0, fuzz::knownChallenge());
  h.nranks = nranks;
  h.rank = rank;
  h.timeoutMs = 1000;
  h.info.rank = rank;
  return header(WireType::Hello, sizeof(h)) + bytesOf(h);
}

std::string table(int nranks) {
  std::string out = header(WireType::Table, static_cast<uint32_t>(nranks * sizeof(RankInfo)));
  for (int r = 0; r < nranks; ++r) {
    RankInfo info{};
    info.rank = r;
    info.pid = 1000 + r;
    out += bytesOf(info);
  }
  return out;
}

std::string rootError(int32_t code, const std::string& text) {
  return header(WireType::RootError, static_cast<uint32_t>(sizeof(code) + text.size())) + bytesOf(code) + text;
}

std::string ringHello(int rank, const CommSecret& secret) {
  RingHelloPayload h{proveSecret(secret, ProofPurpose::RingHello, rank, fuzz::knownChallenge()), rank, 0};
  return header(WireType::RingHello, sizeof(h)) + bytesOf(h);
}

std::string challenge() {
  ChallengePayload c{fuzz::knownChallenge()};
  return header(WireType::Challenge, sizeof(c)) + bytesOf(c);
}

CommSecret wrongSecret() {
  CommSecret s = fuzz::knownSecret();
  s.bytes[kSecretBytes - 1] ^= 1;
  return s;
}

// Context byte of the bootstrap targets: nranks = 1 + c % 4, and the rank c / 4 % nranks.
char context(int nranks, int rank) { return static_cast<char>((nranks - 1) + 4 * rank); }

void bootstrapSeeds() {
  const CommSecret secret = fuzz::knownSecret();
  const std::string replies[][2] = {
      {"table_2_ranks", context(2, 1) + table(2)},
      {"table_truncated", context(2, 1) + table(2).substr(0, 100)},
      {"table_wrong_length", context(3, 0) + table(2)},
      {"root_error", context(2, 1) + rootError(slimecclInvalidArgument, "rank 1 joined twice (from 10.0.0.2:4000)")},
      {"root_error_success_code", context(2, 0) + rootError(slimecclSuccess, "not an error")},
      {"root_error_huge_length", context(2, 0) + header(WireType::RootError, 0xffffffffu)},
      {"table_huge_length", context(4, 3) + header(WireType::Table, 0xffffffffu)},
      {"junk", std::string("\x05GET / HTTP/1.0\r\n\r\n")},
  };
  for (const auto& [name, bytes] : replies) {
    write("bootstrap_message", name, bytes);
    write("bootstrap_join", name, bytes);
  }
  write("bootstrap_message", "hello", context(1, 0) + hello(2, 1, secret));
  write("bootstrap_message", "hello_wrong_secret", context(1, 0) + hello(2, 1, wrongSecret()));
  write("bootstrap_message", "hello_rank_out_of_range", context(1, 0) + hello(2, 2, secret));
  write("bootstrap_message", "ring_hello", context(4, 2) + ringHello(2, secret));
  write("bootstrap_message", "ring_hello_wrong_rank", context(4, 2) + ringHello(3, secret));
  write("bootstrap_message", "ring_hello_wrong_secret", context(4, 2) + ringHello(2, wrongSecret()));
  write("bootstrap_message", "challenge", context(1, 0) + challenge());
  write("bootstrap_message", "challenge_truncated", context(1, 0) + challenge().substr(0, 30));
}

void uniqueIdSeeds() {
  UniqueIdContents v4{};
  v4.root.u.v4.sin_family = AF_INET;
  v4.root.u.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  v4.root.setPort(29500);
  v4.secret = fuzz::knownSecret();
  v4.rootAtRankZero = true;
  UniqueIdContents v6 = v4;
  v6.root = SockAddr();
  v6.root.u.v6.sin6_family = AF_INET6;
  v6.root.u.v6.sin6_addr = in6addr_loopback;
  v6.root.setPort(29501);
  v6.rootAtRankZero = false;
  slimecclUniqueId id;
  encodeUniqueId(v4, &id);
  std::string good4(id.internal, sizeof(id.internal));
  write("unique_id", "ipv4", good4);
  encodeUniqueId(v6, &id);
  write("unique_id", "ipv6", std::string(id.internal, sizeof(id.internal)));
  std::string badMagic = good4, badVersion = good4, noPort = good4;
  badMagic[0] ^= 0x40;
  badVersion[4] = 9;
  v4.root.setPort(0);
  encodeUniqueId(v4, &id);
  write("unique_id", "bad_magic", badMagic);
  write("unique_id", "bad_version", badVersion);
  write("unique_id", "no_port", std::string(id.internal, sizeof(id.internal)));
  write("unique_id", "short", good4.substr(0, 20));
}

// Mirrors the fuzz target's 16-byte description of the local call.
std::string localCall(Coll coll, slimecclDataType_t type, int rank, int peerOffset, uint32_t count, uint32_t seq) {
  struct {
    uint8_t coll, type, redOp, placement;
    int32_t root;
    uint32_t count, seq;
  } call{static_cast<uint8_t>(coll),
         static_cast<uint8_t>(type),
         0,
         static_cast<uint8_t>(rank + 4 * (peerOffset - 1)),
         0,
         count,
         seq};
  return bytesOf(call);
}

std::string desc(Coll coll, slimecclDataType_t type, int rank, uint64_t count, uint64_t seq) {
  OpRecord op{};
  op.coll = coll;
  op.type = type;
  op.count = count;
  op.seq = seq;
  OpDesc d;
  fillDesc(op, rank, op.bytes(), &d);
  return bytesOf(d);
}

void opDescSeeds() {
  write("op_desc", "allgather_match",
        localCall(Coll::AllGather, slimecclFloat, 0, 1, 100, 7) + desc(Coll::AllGather, slimecclFloat, 1, 100, 7));
  write("op_desc", "allgather_count_mismatch",
        localCall(Coll::AllGather, slimecclFloat, 0, 1, 100, 7) + desc(Coll::AllGather, slimecclFloat, 1, 200, 7));
  write("op_desc", "allreduce_vs_allgather",
        localCall(Coll::AllReduce, slimecclInt32, 2, 2, 8, 1) + desc(Coll::AllGather, slimecclInt32, 0, 8, 1));
  write("op_desc", "send_meets_recv",
        localCall(Coll::Send, slimecclUint8, 1, 1, 4096, 0) + desc(Coll::Recv, slimecclUint8, 2, 4096, 0));
  write("op_desc", "send_meets_send",
        localCall(Coll::Send, slimecclUint8, 1, 1, 4096, 0) + desc(Coll::Send, slimecclUint8, 2, 4096, 0));
  std::string corrupt = desc(Coll::AllGather, slimecclFloat, 1, 100, 7);
  corrupt[0] ^= 1;
  write("op_desc", "bad_magic", localCall(Coll::AllGather, slimecclFloat, 0, 1, 100, 7) + corrupt);
  // A mismatch whose peer names no datatype: the sentence must not cast the byte to the enum.
  std::string noType = desc(Coll::AllReduce, slimecclFloat, 1, 100, 7);
  noType[offsetof(OpDesc, type)] = static_cast<char>(186);
  write("op_desc", "peer_type_out_of_range", localCall(Coll::AllGather, slimecclFloat, 0, 1, 100, 7) + noType);
}

// Rank 1's data stream `index` of `streams` of connection `connection`, proved over the listener's
// (known) nonce, or with a proof one bit off.
std::string streamHello(uint32_t index, uint32_t streams, uint64_t connection, bool proved = true) {
  StreamHello h =
      makeStreamHello(&fuzz::knownNetAuth(), fuzz::knownChallenge().bytes, 1, 0, connection, index, streams);
  if (!proved) h.proof[0] ^= 1;
  return bytesOf(h);
}

std::string message(const std::string& payload) { return bytesOf(static_cast<uint64_t>(payload.size())) + payload; }

std::string socketInput(uint16_t recvSize, std::initializer_list<std::string> connections) {
  std::string input = bytesOf(recvSize);
  for (const std::string& c : connections) fuzz::appendRecord(&input, c);
  return input;
}

void socketSeeds() {
  write("socket_stream", "one_stream_two_messages",
        socketInput(64, {streamHello(0, 1, 7) + message("hello") + message("")}));
  write("socket_stream", "two_streams",
        socketInput(64, {streamHello(0, 2, 9) + message("split"), streamHello(1, 2, 9)}));
  write("socket_stream", "message_over_receive",
        socketInput(16, {streamHello(0, 1, 3) + message(std::string(40, 'x'))}));
  write("socket_stream", "truncated_body", socketInput(64, {streamHello(0, 1, 5) + message("abcdef").substr(0, 11)}));
  write("socket_stream", "bad_hello", socketInput(64, {std::string(64, '\xff'), streamHello(0, 1, 1).substr(0, 10)}));
  write("socket_stream", "wrong_proof", socketInput(64, {streamHello(0, 1, 6, false) + message("intruder")}));
  // Streams that contradict their group (same index twice, another stream count) must be dropped.
  write("socket_stream", "same_index_twice", socketInput(64, {streamHello(0, 2, 9), streamHello(0, 2, 9)}));
  write("socket_stream", "stream_count_changes", socketInput(64, {streamHello(1, 2, 4), streamHello(0, 1, 4)}));
  // A connection's hello sent again on a second connection (a replay) must not open it twice.
  write("socket_stream", "replayed_hello",
        socketInput(64, {streamHello(0, 1, 8) + message("first"), streamHello(0, 1, 8) + message("replay")}));
}

// Rank 1's setup record for its data connection `connection`, proved over the gate's (known)
// nonce, or with a proof one bit off.
std::string ibSetup(uint64_t connection, bool proved = true) {
  IbSetup s{};
  s.magic = kIbSetupMagic;
  s.version = kIbSetupVersion;
  s.rank = 1;
  s.kind = 0;
  s.qpCount = 1;
  s.connection = connection;
  fuzz::knownNetAuth().prove(claimOf(s), fuzz::knownChallenge().bytes, s.proof);
  if (!proved) s.proof[0] ^= 1;
  return bytesOf(s);
}

void ibSideChannelSeeds() {
  std::string input;
  fuzz::appendRecord(&input, ibSetup(11));
  write("ib_side_channel", "one_sender", input);
  fuzz::appendRecord(&input, ibSetup(11));
  write("ib_side_channel", "replayed_setup", input);
  std::string two;
  fuzz::appendRecord(&two, ibSetup(12));
  fuzz::appendRecord(&two, ibSetup(13, false));
  write("ib_side_channel", "wrong_proof_beside_a_good_one", two);
  std::string changed = ibSetup(14);
  changed[offsetof(IbSetup, connection)] ^= 1;  // another connection id under the same proof
  std::string altered;
  fuzz::appendRecord(&altered, changed);
  write("ib_side_channel", "claim_changed_after_proof", altered);
  std::string truncated;
  fuzz::appendRecord(&truncated, ibSetup(15).substr(0, 40));
  write("ib_side_channel", "truncated", truncated);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  outDir = argv[1];
  mkdir(outDir.c_str(), 0755);
  bootstrapSeeds();
  uniqueIdSeeds();
  opDescSeeds();
  socketSeeds();
  ibSideChannelSeeds();
  return 0;
}
