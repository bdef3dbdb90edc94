#include <mutex>

#include "net/net.h"
#include "src/base/error.h"
#include "src/base/param.h"

namespace slimeccl {

NetModule* netModuleByName(const std::string& name) {
  if (name == "shm") return shmNetModule();
  if (name == "socket") return socketNetModule();
#ifdef SLIMECCL_HAVE_IB
  if (name == "ib") return ibNetModule();
#endif
  static std::mutex pluginMutex;
  static std::string pluginName;
  static NetModule* plugin = nullptr;
  std::lock_guard<std::mutex> lock(pluginMutex);
  if (plugin != nullptr && pluginName == name) return plugin;
  if (plugin != nullptr) {
    fail(slimecclInvalidUsage, "net module '{}' requested but plugin '{}' is already loaded", name, pluginName);
    return nullptr;
  }
  plugin = loadNetPlugin(name);
  if (plugin != nullptr) pluginName = name;
  return plugin;
}

}  // namespace slimeccl
