// External net modules: libslimeccl-net-NAME.so exporting a slimecclNet_v1_t, adapted to the
// internal interface. Plugins know nothing of doorbells, so waits on them poll with a timer.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <string>

#include "net/net.h"
#include "src/error.h"

namespace slimeccl {
namespace {

void pluginLogger(slimecclNetLogLevel_t level, const char* file, int line, const char* format, ...) {
  LogLevel mapped = level == SLIMECCL_LOG_WARN ? LogLevel::Warn
                    : level == SLIMECCL_LOG_INFO ? LogLevel::Info
                                                 : LogLevel::Trace;
  if (level == SLIMECCL_LOG_NONE || !logEnabled(mapped, kLogNet)) return;
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  logWrite(mapped, kLogNet, -1, fmt::format("plugin {}:{} {}", file, line, text));
}

class PluginModule final : public NetModule {
 public:
  explicit PluginModule(const slimecclNet_v1_t* table) : table_(table) {}
  const char* name() const override { return table_->name; }

  slimecclResult_t listen(const NetContext&, void* handle, void** listenComm) override {
    return wrap("listen", table_->listen(0, handle, listenComm));
  }
  slimecclResult_t connect(const NetContext&, const void* handle, ConnKind, void** sendComm) override {
    return wrap("connect", table_->connect(0, const_cast<void*>(handle), sendComm));
  }
  slimecclResult_t accept(void* listenComm, void** recvComm) override {
    return wrap("accept", table_->accept(listenComm, recvComm));
  }
  slimecclResult_t isend(void* sendComm, const void* data, size_t size, void** request) override {
    return wrap("isend", table_->isend(sendComm, const_cast<void*>(data), size, 0, nullptr, request));
  }
  slimecclResult_t irecv(void* recvComm, void* data, size_t size, void** request) override {
    return wrap("irecv", table_->irecv(recvComm, data, size, 0, nullptr, request));
  }
  slimecclResult_t test(void* request, bool* done, size_t* size) override {
    int finished = 0;
    slimecclResult_t rc = table_->test(request, &finished, size);
    *done = finished != 0;
    return wrap("test", rc);
  }
  void closeSend(void* sendComm) override { table_->closeSend(sendComm); }
  void closeRecv(void* recvComm) override { table_->closeRecv(recvComm); }
  void closeListen(void* listenComm) override { table_->closeListen(listenComm); }

 private:
  slimecclResult_t wrap(const char* what, slimecclResult_t rc) {
    if (rc == slimecclSuccess) return rc;
    return fail(rc, "net plugin '{}': {} failed with {}", table_->name, what, slimecclGetErrorString(rc));
  }
  const slimecclNet_v1_t* table_;
};

}  // namespace

NetModule* loadNetPlugin(const std::string& name) {
  std::string file = "libslimeccl-net-" + name + ".so";
  void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    fail(slimecclInvalidArgument, "net module '{}' is not built in and {} cannot be loaded: {}", name, file, dlerror());
    return nullptr;
  }
  auto* table = static_cast<const slimecclNet_v1_t*>(dlsym(lib, SLIMECCL_NET_PLUGIN_SYMBOL_V1));
  if (table == nullptr) {
    fail(slimecclInvalidArgument, "{} does not export {}", file, SLIMECCL_NET_PLUGIN_SYMBOL_V1);
    dlclose(lib);
    return nullptr;
  }
  if (table->init == nullptr || table->listen == nullptr || table->connect == nullptr || table->accept == nullptr ||
      table->isend == nullptr || table->irecv == nullptr || table->test == nullptr || table->closeSend == nullptr ||
      table->closeRecv == nullptr || table->closeListen == nullptr) {
    fail(slimecclInvalidArgument, "{}: the v1 function table has missing entries", file);
    dlclose(lib);
    return nullptr;
  }
  if (table->init(pluginLogger) != slimecclSuccess) {
    fail(slimecclSystemError, "{}: init failed", file);
    dlclose(lib);
    return nullptr;
  }
  SLIMECCL_INFO(kLogNet | kLogInit, -1, "loaded net plugin '{}' from {}", table->name, file);
  return new PluginModule(table);
}

}  // namespace slimeccl
