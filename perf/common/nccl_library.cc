#include "common/nccl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <stdexcept>

#include "nccl.h"

namespace slimeccl_perf {

struct NcclLibrary::Calls {
  decltype(&ncclGetUniqueId) getUniqueId;
  decltype(&ncclCommInitRank) commInitRank;
  decltype(&ncclAllGather) allGather;
  decltype(&ncclCommDestroy) commDestroy;
  decltype(&ncclGetVersion) getVersion;
  decltype(&ncclGetErrorString) getErrorString;
};

namespace {

template <typename Fn>
bool bind(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

}  // namespace

NcclLibrary::NcclLibrary(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    why_ = std::string("dlopen: ") + dlerror();
    return;
  }
  const link_map* map = nullptr;
  const std::string file = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr ? map->l_name : path;
  // slimeccl's NCCL library links slimeccl, so its calls are in reach of the handle.
  if (dlsym(handle, "slimecclGetVersion") != nullptr) {
    why_ = file + " is slimeccl's own NCCL library; pass NCCL's with -B";
    dlclose(handle);
    return;
  }
  auto calls = new Calls{};
  if (!bind(handle, "ncclGetUniqueId", &calls->getUniqueId) ||
      !bind(handle, "ncclCommInitRank", &calls->commInitRank) || !bind(handle, "ncclAllGather", &calls->allGather) ||
      !bind(handle, "ncclCommDestroy", &calls->commDestroy) || !bind(handle, "ncclGetVersion", &calls->getVersion) ||
      !bind(handle, "ncclGetErrorString", &calls->getErrorString)) {
    why_ = file + " lacks a call of NCCL's API";
    delete calls;
    dlclose(handle);
    return;
  }
  handle_ = handle;
  calls_ = calls;
  int version = 0;
  calls_->getVersion(&version);
  description_ = file + " (NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                 std::to_string(version % 100) + ")";
}

NcclLibrary::~NcclLibrary() {
  delete calls_;
  if (handle_ != nullptr) dlclose(handle_);
}

void NcclLibrary::check(int result, const char* call) const {
  if (result != ncclSuccess)
    throw std::runtime_error(std::string(call) +
                             " failed: " + calls_->getErrorString(static_cast<ncclResult_t>(result)));
}

void NcclLibrary::uniqueId(void* id) const {
  ncclUniqueId made;
  check(calls_->getUniqueId(&made), "ncclGetUniqueId");
  memcpy(id, &made, sizeof(made));
}

void* NcclLibrary::initRank(int nranks, const void* id, int rank) const {
  ncclUniqueId given;
  memcpy(&given, id, sizeof(given));
  ncclComm_t comm = nullptr;
  check(calls_->commInitRank(&comm, nranks, given, rank), "ncclCommInitRank");
  return comm;
}

void NcclLibrary::allGather(const void* send, void* recv, size_t count, int ncclDatatype, void* comm,
                            void* cudaStream) const {
  check(calls_->allGather(send, recv, count, static_cast<ncclDataType_t>(ncclDatatype), static_cast<ncclComm_t>(comm),
                          static_cast<cudaStream_t>(cudaStream)),
        "ncclAllGather");
}

void NcclLibrary::destroy(void* comm) const { calls_->commDestroy(static_cast<ncclComm_t>(comm)); }

}  // namespace slimeccl_perf
