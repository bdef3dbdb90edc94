// External net modules: libslimeccl-net-NAME.so exporting a slimecclNet_v1_t, adapted to the
// internal interface, every entry of the table used: its devices are listed at load (the placement
// picks one by name), each buffer is registered for the request that moves it, and each message
// is tagged with its number on its connection. Plugins know nothing of doorbells, so waits on
// them poll with a timer.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "net/net.h"
#include "src/base/error.h"

namespace slimeccl {
namespace {

void pluginLogger(slimecclNetLogLevel_t level, const char* file, int line, const char* format, ...) {
  LogLevel mapped = level == SLIMECCL_LOG_WARN   ? LogLevel::Warn
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

// A connection of the plugin's, and the number of the next message on it: messages carry their
// number as the tag, so the plugin can check that each meets the receive posted for it.
struct PluginConn {
  void* comm;
  int nextTag = 0;
};

// A request, and the registration of its buffer, released when it ends.
struct PluginRequest {
  void* inner;
  void* comm;
  void* mhandle;
};

class PluginModule final : public NetModule {
 public:
  PluginModule(const slimecclNet_v1_t* table, std::vector<std::string> devices)
      : table_(table), devices_(std::move(devices)) {}
  const char* name() const override { return table_->name; }

  slimecclResult_t listen(const NetContext& ctx, void* handle, void** listenComm) override {
    return wrap("listen", table_->listen(deviceFor(ctx), handle, listenComm));
  }
  slimecclResult_t connect(const NetContext& ctx, const void* handle, ConnKind, void** sendComm) override {
    void* comm = nullptr;
    SLIMECCL_CHECK(wrap("connect", table_->connect(deviceFor(ctx), const_cast<void*>(handle), &comm)));
    *sendComm = comm == nullptr ? nullptr : new PluginConn{comm};
    return slimecclSuccess;
  }
  slimecclResult_t accept(void* listenComm, void** recvComm) override {
    void* comm = nullptr;
    SLIMECCL_CHECK(wrap("accept", table_->accept(listenComm, &comm)));
    *recvComm = comm == nullptr ? nullptr : new PluginConn{comm};
    return slimecclSuccess;
  }
  slimecclResult_t isend(void* sendComm, const void* data, size_t size, void** request) override {
    return post(static_cast<PluginConn*>(sendComm), const_cast<void*>(data), size, table_->isend, "isend", request);
  }
  slimecclResult_t irecv(void* recvComm, void* data, size_t size, void** request) override {
    return post(static_cast<PluginConn*>(recvComm), data, size, table_->irecv, "irecv", request);
  }
  slimecclResult_t test(void* request, bool* done, size_t* size) override {
    auto* r = static_cast<PluginRequest*>(request);
    int finished = 0;
    const slimecclResult_t rc = table_->test(r->inner, &finished, size);
    *done = finished != 0;
    // The plugin freed its request; the registration goes with it.
    if (finished != 0 || rc != slimecclSuccess) {
      const slimecclResult_t released = table_->deregMr(r->comm, r->mhandle);
      delete r;
      if (rc == slimecclSuccess) return wrap("deregMr", released);
    }
    return wrap("test", rc);
  }
  void closeSend(void* sendComm) override { close(sendComm, table_->closeSend); }
  void closeRecv(void* recvComm) override { close(recvComm, table_->closeRecv); }
  void closeListen(void* listenComm) override { table_->closeListen(listenComm); }

 private:
  using PostFn = slimecclResult_t (*)(void*, void*, size_t, int, void*, void**);

  // The device the placement names for this rank, else the plugin's first.
  int deviceFor(const NetContext& ctx) const {
    const std::string placed = placementOf(ctx).placedDevice(ctx.rank, table_->name);
    for (size_t dev = 0; dev < devices_.size(); ++dev)
      if (devices_[dev] == placed) return static_cast<int>(dev);
    return 0;
  }

  // Registers the buffer, posts it with the connection's next message number, and hands back a
  // request that holds both; nothing stays registered when the plugin asks to retry later.
  slimecclResult_t post(PluginConn* conn, void* data, size_t size, PostFn fn, const char* what, void** request) {
    *request = nullptr;
    void* mhandle = nullptr;
    SLIMECCL_CHECK(wrap("regMr", table_->regMr(conn->comm, data, size, SLIMECCL_PTR_HOST, &mhandle)));
    void* inner = nullptr;
    const slimecclResult_t rc = fn(conn->comm, data, size, conn->nextTag, mhandle, &inner);
    if (rc != slimecclSuccess || inner == nullptr) {
      table_->deregMr(conn->comm, mhandle);
      return wrap(what, rc);
    }
    ++conn->nextTag;
    *request = new PluginRequest{inner, conn->comm, mhandle};
    return slimecclSuccess;
  }

  static void close(void* comm, slimecclResult_t (*fn)(void*)) {
    auto* conn = static_cast<PluginConn*>(comm);
    fn(conn->comm);
    delete conn;
  }

  slimecclResult_t wrap(const char* what, slimecclResult_t rc) {
    if (rc == slimecclSuccess) return rc;
    return fail(rc, "net plugin '{}': {} failed with {}", table_->name, what, slimecclGetErrorString(rc));
  }
  const slimecclNet_v1_t* table_;
  const std::vector<std::string> devices_;  // by index: the names getProperties gave
};

// The plugin's devices by name; a plugin with none, or none that moves host memory, is refused.
slimecclResult_t pluginDevices(const slimecclNet_v1_t* table, const std::string& file, std::vector<std::string>* out) {
  int count = 0;
  if (table->devices(&count) != slimecclSuccess || count < 1)
    return fail(slimecclSystemError, "{}: devices() reports no device ({})", file, count);
  for (int dev = 0; dev < count; ++dev) {
    slimecclNetProperties_v1_t props{};
    if (table->getProperties(dev, &props) != slimecclSuccess)
      return fail(slimecclSystemError, "{}: getProperties({}) failed", file, dev);
    if ((props.ptrSupport & SLIMECCL_PTR_HOST) == 0)
      return fail(slimecclSystemError, "{}: device {} ('{}') cannot move host memory", file, dev,
                  props.name != nullptr ? props.name : "");
    out->push_back(props.name != nullptr ? props.name : "");
    SLIMECCL_INFO(kLogNet | kLogInit, -1, "net plugin '{}' device {}: '{}', {} Mb/s", table->name, dev, out->back(),
                  props.speedMbps);
  }
  return slimecclSuccess;
}

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
  if (table->init == nullptr || table->devices == nullptr || table->getProperties == nullptr ||
      table->listen == nullptr || table->connect == nullptr || table->accept == nullptr || table->regMr == nullptr ||
      table->deregMr == nullptr || table->isend == nullptr || table->irecv == nullptr || table->test == nullptr ||
      table->closeSend == nullptr || table->closeRecv == nullptr || table->closeListen == nullptr) {
    fail(slimecclInvalidArgument, "{}: the v1 function table has missing entries", file);
    dlclose(lib);
    return nullptr;
  }
  if (table->init(pluginLogger) != slimecclSuccess) {
    fail(slimecclSystemError, "{}: init failed", file);
    dlclose(lib);
    return nullptr;
  }
  std::vector<std::string> devices;
  if (pluginDevices(table, file, &devices) != slimecclSuccess) {
    dlclose(lib);
    return nullptr;
  }
  SLIMECCL_INFO(kLogNet | kLogInit, -1, "loaded net plugin '{}' from {}", table->name, file);
  return new PluginModule(table, std::move(devices));
}

}  // namespace slimeccl
