// NCCL itself, loaded at run time for a baseline beside slimeccl in one run: dlopen of a library
// with NCCL's API, refused where it is slimeccl's own NCCL library (which exports slimeccl's calls).
#pragma once

#include <cstddef>
#include <string>

namespace slimeccl_perf {

class NcclLibrary {
 public:
  // Loads `path` (a file name searches as dlopen does). On failure usable() is false and why()
  // says so.
  explicit NcclLibrary(const std::string& path);
  ~NcclLibrary();
  NcclLibrary(const NcclLibrary&) = delete;
  NcclLibrary& operator=(const NcclLibrary&) = delete;

  bool usable() const { return handle_ != nullptr; }
  const std::string& why() const { return why_; }
  // "/lib/x86_64-linux-gnu/libnccl.so.2 (NCCL 2.28.9)".
  const std::string& description() const { return description_; }

  // 128 bytes of ncclUniqueId, made on one rank and passed to all.
  static constexpr size_t kUniqueIdBytes = 128;
  void uniqueId(void* id) const;
  // Every call below throws std::runtime_error naming the NCCL call and its error string.
  void* initRank(int nranks, const void* id, int rank) const;  // ncclComm_t
  void allGather(const void* send, void* recv, size_t count, int ncclDatatype, void* comm, void* cudaStream) const;
  void destroy(void* comm) const;

 private:
  void check(int result, const char* call) const;

  void* handle_ = nullptr;
  std::string why_, description_;
  struct Calls;
  Calls* calls_ = nullptr;
};

}  // namespace slimeccl_perf
