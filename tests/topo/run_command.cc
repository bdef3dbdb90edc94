#include "tests/topo/run_command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/topo/scratch_file.h"

extern char** environ;

namespace slimeccl::test {
namespace {

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The caller's environment without the variables that change what topology code sees.
std::vector<std::string> cleanEnvironment(const EnvList& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("SLIMECCL_", 0) == 0) continue;
    out.push_back(entry);
  }
  for (const auto& [name, value] : extra) out.push_back(name + "=" + value);
  return out;
}

}  // namespace

CommandResult runCommand(const std::string& program, const std::vector<std::string>& args, const EnvList& env) {
  ScratchFile outFile("stdout"), errFile("stderr");
  std::vector<std::string> envStrings = cleanEnvironment(env);
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);
  CommandResult result;
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(outFile.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(errFile.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) _exit(126);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = readAll(outFile.path());
  result.err = readAll(errFile.path());
  return result;
}

}  // namespace slimeccl::test
