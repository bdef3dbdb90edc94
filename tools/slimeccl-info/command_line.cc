#include "tools/slimeccl-info/command_line.h"

#include <cstdlib>
#include <cstring>

namespace slimeccl::info {
namespace {

constexpr int kMaxLocalRanks = 4096;

bool parseCount(const char* text, int* out) {
  char* end = nullptr;
  long value = strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > kMaxLocalRanks) return false;
  *out = static_cast<int>(value);
  return true;
}

}  // namespace

bool parseCommandLine(int argc, char** argv, Options* out, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (strcmp(arg, "--json") == 0) {
      out->json = true;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      out->help = true;
    } else if (strcmp(arg, "--version") == 0) {
      out->version = true;
    } else if (strcmp(arg, "--local-ranks") == 0 || strcmp(arg, "-n") == 0) {
      if (i + 1 >= argc || !parseCount(argv[i + 1], &out->localRanks)) {
        *error = std::string(arg) + " needs a rank count from 1 to " + std::to_string(kMaxLocalRanks);
        return false;
      }
      ++i;
    } else if (strncmp(arg, "--local-ranks=", 14) == 0) {
      if (!parseCount(arg + 14, &out->localRanks)) {
        *error = "--local-ranks needs a rank count from 1 to " + std::to_string(kMaxLocalRanks);
        return false;
      }
    } else {
      *error = std::string("unknown argument '") + arg + "'";
      return false;
    }
  }
  return true;
}

const char* usageText() {
  return "usage: slimeccl-info [--json] [--local-ranks N] [--version]\n"
         "\n"
         "Prints what slimeccl sees on this host and what it chooses: host identity, NUMA nodes,\n"
         "NICs, GPUs, verbs devices, the net module per peer class, the NIC and NUMA node of each\n"
         "local rank, and the tuner table.\n"
         "\n"
         "  --json              machine-readable output\n"
         "  --local-ranks N     local ranks to place (default: SLIMECCL_LOCAL_NRANKS, else one\n"
         "                      per GPU, else 1)\n"
         "\n"
         "SLIMECCL_TOPO_FILE reads an hwloc XML topology instead of this machine;\n"
         "SLIMECCL_TOPO_DUMP_FILE writes the topology in use. SLIMECCL_NET, SLIMECCL_NET_PLUGIN,\n"
         "SLIMECCL_IB_HCA and SLIMECCL_SOCKET_IFNAME change the choices as they do in the library.\n";
}

}  // namespace slimeccl::info
