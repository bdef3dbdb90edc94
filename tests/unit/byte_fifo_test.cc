#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "net/shm/byte_fifo.h"

namespace slimeccl {
namespace {

TEST(ByteFifo, WrapsAroundAndKeepsOrder) {
  const size_t capacity = 64;
  std::vector<char> mapping(ByteFifo::mappingBytes(capacity));
  ByteFifo::format(mapping.data(), capacity);
  ByteFifo writer(mapping.data()), reader(mapping.data());
  std::vector<char> in(1000), out;
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<char>(i * 13);
  size_t written = 0;
  std::mt19937 rng(7);
  while (out.size() < in.size()) {
    written += writer.write(in.data() + written, std::min<size_t>(rng() % 50, in.size() - written));
    char buf[64];
    size_t got = reader.read(buf, rng() % 40);
    out.insert(out.end(), buf, buf + got);
  }
  EXPECT_EQ(in, out);
}

TEST(ByteFifo, NeverOverfills) {
  const size_t capacity = 32;
  std::vector<char> mapping(ByteFifo::mappingBytes(capacity));
  ByteFifo::format(mapping.data(), capacity);
  ByteFifo writer(mapping.data());
  std::vector<char> data(100, 'x');
  EXPECT_EQ(writer.write(data.data(), data.size()), capacity);
  EXPECT_EQ(writer.write(data.data(), 1), 0u);
}

TEST(ByteFifo, TwoThreadsStreamMegabytes) {
  const size_t capacity = 4096, total = 8 << 20;
  std::vector<char> mapping(ByteFifo::mappingBytes(capacity));
  ByteFifo::format(mapping.data(), capacity);
  std::thread producer([&] {
    ByteFifo writer(mapping.data());
    std::vector<char> chunk(1500);
    size_t sent = 0;
    while (sent < total) {
      size_t n = std::min(chunk.size(), total - sent);
      for (size_t i = 0; i < n; ++i) chunk[i] = static_cast<char>((sent + i) % 251);
      size_t off = 0;
      while (off < n) off += writer.write(chunk.data() + off, n - off);
      sent += n;
    }
  });
  ByteFifo reader(mapping.data());
  std::vector<char> buf(999);
  size_t received = 0, wrong = 0;
  while (received < total) {
    size_t got = reader.read(buf.data(), buf.size());
    for (size_t i = 0; i < got; ++i) wrong += buf[i] != static_cast<char>((received + i) % 251);
    received += got;
  }
  producer.join();
  EXPECT_EQ(wrong, 0u);
}

}  // namespace
}  // namespace slimeccl
