// gdn_user_worker.cpp — gdn_user_worker: the process in which user arms run (docs/USER-ARMS.md). Started by
// libgdn (user/worker.cpp) with its request pipe on fd 3, its reply pipe on fd 4, the shared file on
// fd 5 and the parent's pid; it dies with its parent.
#include "gdn.h"

#include <csignal>
#include <cstdlib>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != (pid_t)std::atoll(argv[4])) return 3;  // the parent is already gone
  return gdn_user_worker_serve(std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3])) == GDN_OK ? 0 : 1;
}
