// slimeccl-info: what slimeccl sees on this host (or in SLIMECCL_TOPO_FILE) and what it chooses.
#include <cstdio>
#include <string>

#include "src/base/error.h"
#include "src/base/util/version_line.h"
#include "tools/slimeccl-info/command_line.h"
#include "tools/slimeccl-info/info_report.h"
#include "tools/slimeccl-info/json_report.h"
#include "tools/slimeccl-info/text_report.h"

int main(int argc, char** argv) {
  using namespace slimeccl::info;
  Options options;
  std::string error;
  if (!parseCommandLine(argc, argv, &options, &error)) {
    fprintf(stderr, "slimeccl-info: %s\n%s", error.c_str(), usageText());
    return 2;
  }
  if (options.help) {
    fputs(usageText(), stdout);
    return 0;
  }
  if (options.version) {
    fputs(slimeccl::versionLine("slimeccl-info").c_str(), stdout);
    return 0;
  }
  InfoReport report;
  if (gatherReport(options, &report) != slimecclSuccess) {
    fprintf(stderr, "slimeccl-info: %s\n", slimeccl::threadError().c_str());
    return 1;
  }
  std::string text = options.json ? jsonReport(report) : textReport(report);
  fputs(text.c_str(), stdout);
  return 0;
}
