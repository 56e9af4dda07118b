// worker.cpp — isolation of user arms (docs/USER-ARMS.md): every op that runs a user arm is executed
// by a worker process, gdn_user_worker, on copies of the op's buffers.
//
// Parent (any process that is not the worker): per backend kind and device one worker, spawned on
// first use, fed through two pipes; the bytes of the op's buffers travel through a shared memory
// file (memfd) whose first 4 KiB hold a fault message. For one op:
//   1. each address field of the op becomes a range (its validated extent, the plan's sizes), copied
//      into the shared file (inputs, and outputs too so that unwritten elements keep their poison);
//   2. the worker allocates its own buffers at the same offset modulo 256 (alignment decides
//      fallbacks), uploads, says STARTED, runs the op through the ordinary gdn_* entry points
//      (in the worker the user arm runs in-process), copies the written ranges back, says DONE;
//   3. the parent waits for DONE at most the arm's time limit after STARTED; then copies the written
//      ranges into its own buffers. Nothing of the caller's memory is written unless the run succeeded.
// When the worker dies (a signal other than SIGINT, or checked mode's exit 86 with its message in the
// fault page), overruns its time limit (SIGKILL), or reports a CUDA error (its context is lost: it exits
// after replying), the call returns GDN_ERR_ARM_FAULT naming the arm and the fault, and the next call
// starts a fresh worker and registers the live arms in it again.
//
// Interrupts: the worker shares its parent's process group, so the SIGINT a Jupyter interrupt sends to the
// kernel's group reaches it too. While idle it ignores SIGINT (an interrupt of an idle kernel leaves it
// alone); while it serves a request SIGINT ends it, so an interrupt stops a running user arm and the call
// returns GDN_ERR_INTERRUPTED naming the interrupt. A worker found dead before a call (whatever ended it) is
// replaced before the call instead of being reported. A process group of its own would keep idle interrupts
// out as well, but then nothing would stop a running arm: the parent's thread is blocked in the call.
#include "common/backend.h"
#include "common/backend_ops.h"
#include "user/user_arms.h"

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace gdn {
namespace user {
namespace {

constexpr uint64_t kFaultBytes = 4096;  // the fault page at the start of the shared file (prelude.h)
constexpr int kFaultExit = 86;          // checked mode's exit status (prelude.h)
constexpr int kDefaultLimitMs = 10000;
constexpr int kTransferLimitMs = 120000;  // uploads and registration, before STARTED

enum MsgType : uint32_t { kRegister = 1, kUnregister = 2, kRun = 3, kTime = 4, kStarted = 10, kDone = 11 };
enum RangeFlags : uint32_t { kIn = 1, kOut = 2 };

struct MsgHeader {
  uint32_t type;
  uint32_t reserved;
  uint64_t payload;
};

struct RangeDesc {
  uint64_t shm_offset, bytes;
  uint32_t flags, align;  // align: the caller's address modulo 256
};

struct RunHead {
  int32_t kind, ordinal, n_ops, n_ranges;
  gdn_timing_config cfg;
  uint64_t shm_bytes;
  int32_t forward;  // 1: one op; 0: gdn_time_ops (the outputs are copied back either way)
  int32_t n_order;  // int32 entries of the schedule blob after the ranges
};

struct DoneReply {
  int32_t status;
  int32_t msg_len;
  gdn_launch_contract contract;
  gdn_postconv_result postconv;
};

struct RegisterHead {
  gdn_user_arm_desc desc;  // pointers ignored
  int32_t id;
  int32_t len[4];          // name, host_module, host_fast_module, cuda_module
};

// ----------------------------------------------------------------- pipes
bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= (size_t)w;
  }
  return true;
}

// Reads n bytes; deadline_ms < 0 waits forever. 0 ok, 1 timeout, 2 EOF or error.
int read_all(int fd, void* p, size_t n, int64_t deadline_ms) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    if (deadline_ms >= 0) {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      const int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
      if (now >= deadline_ms) return 1;
      pollfd pfd{fd, POLLIN, 0};
      const int r = ::poll(&pfd, 1, (int)(deadline_ms - now));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) return 1;
      if (r < 0) return 2;
    }
    const ssize_t got = ::read(fd, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 2;
    c += got;
    n -= (size_t)got;
  }
  return 0;
}

int64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Writes one message. A worker that has gone away makes the write fail with EPIPE; the SIGPIPE that comes
// with it is blocked and consumed here, so a host process that does not ignore SIGPIPE survives it.
bool send_msg(int fd, uint32_t type, const std::vector<char>& payload) {
  MsgHeader h{type, 0, payload.size()};
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  const bool ok = write_all(fd, &h, sizeof h) && (payload.empty() || write_all(fd, payload.data(), payload.size()));
  if (!ok && !was_pending) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return ok;
}

template <class T>
void put(std::vector<char>& v, const T& x) {
  const char* c = reinterpret_cast<const char*>(&x);
  v.insert(v.end(), c, c + sizeof x);
}
void put_bytes(std::vector<char>& v, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  v.insert(v.end(), c, c + n);
}

// ----------------------------------------------------------------- the address fields of an op
struct Field {
  gdn_addr* addr;
  uint64_t bytes;
  uint32_t flags;
};

uint64_t dsize(int32_t dt) { return (uint64_t)dtype_size(dt); }

// Every buffer an op reads or writes, with the extent its plan validated.
void op_fields(gdn_op& op, std::vector<Field>* f) {
  if (op.kind == GDN_OP_CONV) {
    gdn_conv_args& a = op.conv;
    const uint64_t T = (uint64_t)a.T, C = (uint64_t)a.C, K = (uint64_t)a.K, N = (uint64_t)a.num_seqs;
    const uint64_t xs = dsize(a.x_dtype);
    f->push_back({&a.x, T > 0 ? ((T - 1) * (uint64_t)a.x_row_stride + C) * xs : 0, kIn});
    f->push_back({&a.weight, C * K * xs, kIn});
    f->push_back({&a.bias, C * xs, kIn});
    f->push_back({&a.query_start_loc, (N + 1) * 4, kIn});
    f->push_back({&a.has_initial_state, N * (a.his_dtype == GDN_I32 ? 4 : 1), kIn});
    f->push_back({&a.conv_state, N * C * (K - 1) * 4, kIn | kOut});
    f->push_back({&a.out, T * C * dsize(a.out_dtype), kIn | kOut});
  } else if (op.kind == GDN_OP_CONV_UPDATE) {
    gdn_conv_update_args& a = op.update;
    const uint64_t B = (uint64_t)a.B, C = (uint64_t)a.C, K = (uint64_t)a.K;
    f->push_back({&a.x, B * C * dsize(a.x_dtype), kIn});
    f->push_back({&a.weight, C * K * dsize(a.x_dtype), kIn});
    f->push_back({&a.bias, C * dsize(a.x_dtype), kIn});
    f->push_back({&a.state, (uint64_t)a.num_slots * C * (K - 1) * dsize(a.state_dtype), kIn | kOut});
    f->push_back({&a.state_indices, B * 4, kIn});
    f->push_back({&a.out, B * C * dsize(a.out_dtype), kIn | kOut});
  } else if (op.kind == GDN_OP_POSTCONV) {
    gdn_postconv_args& a = op.postconv;
    const uint64_t T = (uint64_t)a.T, Hk = (uint64_t)a.Hk, Hv = (uint64_t)a.Hv, Dk = (uint64_t)a.Dk, Dv = (uint64_t)a.Dv;
    const uint64_t C = 2 * Hk * Dk + Hv * Dv, gs = dsize(a.gate_dtype), qs = dsize(a.qkv_dtype);
    f->push_back({&a.conv_out, T * C * dsize(a.conv_dtype), kIn});
    f->push_back({&a.a, T > 0 ? ((T - 1) * (uint64_t)a.a_row_stride + Hv) * gs : 0, kIn});
    f->push_back({&a.b, T > 0 ? ((T - 1) * (uint64_t)a.b_row_stride + Hv) * gs : 0, kIn});
    f->push_back({&a.A_log, Hv * 4, kIn});
    f->push_back({&a.dt_bias, Hv * 4, kIn});
    f->push_back({&a.q, T * Hk * Dk * qs, kIn | kOut});
    f->push_back({&a.k, T * Hk * Dk * qs, kIn | kOut});
    f->push_back({&a.v, T * Hv * Dv * qs, kIn | kOut});
    f->push_back({&a.g, T * Hv * 4, kIn | kOut});
    f->push_back({&a.beta, T * Hv * 4, kIn | kOut});
  } else if (op.kind == GDN_OP_COPY) {
    f->push_back({&op.copy.src, op.copy.bytes, kIn});
    f->push_back({&op.copy.dst, op.copy.bytes, kOut});
  }
}

int32_t user_arm_of(const gdn_op& op, int32_t* family) {
  Arm a;
  if (op.kind == GDN_OP_CONV && find(GDN_OP_CONV, op.conv.arm, &a)) {
    *family = GDN_OP_CONV;
    return op.conv.arm;
  }
  if (op.kind == GDN_OP_POSTCONV && find(GDN_OP_POSTCONV, op.postconv.arm, &a)) {
    *family = GDN_OP_POSTCONV;
    return op.postconv.arm;
  }
  return -1;
}

const char* signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (a read or write outside mapped memory)";
    case SIGBUS: return "SIGBUS (a misaligned or unbacked memory access)";
    case SIGILL: return "SIGILL (an illegal instruction, e.g. __builtin_trap)";
    case SIGTRAP: return "SIGTRAP (a trap instruction)";
    case SIGFPE: return "SIGFPE (an arithmetic exception, e.g. integer division by zero)";
    case SIGABRT: return "SIGABRT (abort)";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return "a signal";
  }
}

// ----------------------------------------------------------------- the parent's view of a worker
struct Worker {
  std::mutex mu;
  pid_t pid = -1;
  int to = -1, from = -1, shm = -1;
  char* map = nullptr;
  uint64_t map_bytes = 0;
  std::map<int64_t, uint64_t> known;  // (op << 32 | id) -> version registered in this worker
};

std::mutex g_workers_mu;
std::map<std::pair<int32_t, int32_t>, Worker*> g_workers;

std::string worker_path() {
  if (const char* env = getenv("GDN_USER_WORKER")) return env;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&gdn_arm_register), &info) && info.dli_fname) {
    std::string lib = info.dli_fname;
    const size_t slash = lib.rfind('/');
    return (slash == std::string::npos ? std::string(".") : lib.substr(0, slash)) + "/gdn_user_worker";
  }
  return "gdn_user_worker";
}

void close_worker(Worker* w, bool kill_it) {
  if (w->pid > 0) {
    if (kill_it) ::kill(w->pid, SIGKILL);
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (w->to >= 0) ::close(w->to);
  if (w->from >= 0) ::close(w->from);
  w->pid = -1;
  w->to = w->from = -1;
  w->known.clear();
}

// Why the worker ended (after EOF on its pipe): reaps it and describes its status. *code (may be null) receives
// the status the call reports: GDN_ERR_INTERRUPTED when SIGINT ended it (the caller's own process group was
// interrupted, so the caller can report an interrupt, not a fault, from the code alone), else GDN_ERR_ARM_FAULT.
std::string reap(Worker* w, gdn_status* code = nullptr) {
  int status = 0;
  pid_t r;
  do r = waitpid(w->pid, &status, 0);
  while (r < 0 && errno == EINTR);
  w->pid = -1;
  if (code) *code = GDN_ERR_ARM_FAULT;
  std::string why;
  if (r < 0) why = "the worker disappeared";
  else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) {
    why = "interrupted (SIGINT) while it ran: the interrupt stopped its worker";
    if (code) *code = GDN_ERR_INTERRUPTED;
  } else if (WIFSIGNALED(status)) why = std::string("the worker was killed by ") + signal_text(WTERMSIG(status));
  else if (WIFEXITED(status) && WEXITSTATUS(status) == kFaultExit && w->map) {
    why = std::string(w->map, strnlen(w->map, kFaultBytes - 1));
    if (why.empty()) why = "checked mode stopped the worker";
  } else if (WIFEXITED(status)) why = "the worker exited with status " + std::to_string(WEXITSTATUS(status));
  close_worker(w, false);
  return why;
}

gdn_status ensure_map(gdn_backend* b, Worker* w, uint64_t bytes) {
  if (bytes <= w->map_bytes) return GDN_OK;
  const uint64_t want = (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20);
  if (ftruncate(w->shm, (off_t)want) != 0)
    return fail(b, GDN_ERR_OUT_OF_MEMORY, "user arm worker: cannot grow the shared file to %" PRIu64 " bytes: %s", want,
                strerror(errno));
  if (w->map) munmap(w->map, w->map_bytes);
  void* m = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, w->shm, 0);
  if (m == MAP_FAILED) {
    w->map = nullptr;
    w->map_bytes = 0;
    return fail(b, GDN_ERR_OUT_OF_MEMORY, "user arm worker: cannot map the shared file: %s", strerror(errno));
  }
  w->map = static_cast<char*>(m);
  w->map_bytes = want;
  return GDN_OK;
}

gdn_status spawn(gdn_backend* b, Worker* w) {
  if (w->shm < 0) {
    w->shm = memfd_create("gdn-user-io", MFD_CLOEXEC);
    if (w->shm < 0) return fail(b, GDN_ERR_INTERNAL, "user arm worker: memfd_create failed: %s", strerror(errno));
  }
  gdn_status st = ensure_map(b, w, kFaultBytes);
  if (st != GDN_OK) return st;
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0) return fail(b, GDN_ERR_INTERNAL, "user arm worker: pipe failed: %s", strerror(errno));
  if (pipe2(from, O_CLOEXEC) != 0) {
    ::close(to[0]);
    ::close(to[1]);
    return fail(b, GDN_ERR_INTERNAL, "user arm worker: pipe failed: %s", strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to[0], 3);
  posix_spawn_file_actions_adddup2(&fa, from[1], 4);
  posix_spawn_file_actions_adddup2(&fa, w->shm, 5);
  const std::string path = worker_path();
  const std::string ppid = std::to_string((long long)getpid());
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("3"), const_cast<char*>("4"),
                  const_cast<char*>("5"), const_cast<char*>(ppid.c_str()), nullptr};
  // SIGINT stays blocked from exec until the worker has set it to ignored (gdn_user_worker_serve), so an
  // interrupt that arrives while it starts is discarded instead of ending it.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  sigaddset(&mask, SIGINT);
  posix_spawnattr_setsigmask(&attr, &mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, path.c_str(), &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(to[0]);
  ::close(from[1]);
  if (rc != 0) {
    ::close(to[1]);
    ::close(from[0]);
    return fail(b, GDN_ERR_UNSUPPORTED, "user arms run in a worker process, but %s could not be started: %s "
                "(build it with scripts/build.sh, or set GDN_USER_WORKER)", path.c_str(), strerror(rc));
  }
  w->pid = pid;
  w->to = to[1];
  w->from = from[0];
  w->known.clear();
  return GDN_OK;
}

// A worker that ended while idle (an interrupt in the moment it finished a request, a kill from outside) is
// reaped quietly so that the call spawns a fresh one: nothing of the caller's was running in it.
void drop_if_dead(Worker* w) {
  if (w->pid <= 0) return;
  int status = 0;
  pid_t r;
  do r = waitpid(w->pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return;  // alive
  w->pid = -1;         // reaped (or not ours any more: ECHILD)
  close_worker(w, false);
}

Worker* worker_for(gdn_backend* b) {
  std::lock_guard<std::mutex> lock(g_workers_mu);
  Worker*& w = g_workers[{b->kind, b->device_ordinal}];
  if (w == nullptr) w = new Worker();  // lives as long as the process (a worker per backend kind and device)
  return w;
}

// Reads one reply; a dead worker becomes GDN_ERR_ARM_FAULT naming `who` (GDN_ERR_INTERRUPTED when SIGINT ended it).
gdn_status read_reply(gdn_backend* b, Worker* w, const std::string& who, int64_t deadline, int limit_ms,
                      MsgHeader* h, std::vector<char>* payload) {
  const int r = read_all(w->from, h, sizeof *h, deadline);
  if (r == 1) {
    close_worker(w, true);
    return fail(b, GDN_ERR_ARM_FAULT, "%s: ran past its time limit of %d ms; its worker was killed (the next call "
                "starts a fresh one)", who.c_str(), limit_ms);
  }
  if (r == 2) {
    gdn_status code;
    const std::string why = reap(w, &code);
    // Checked mode's message already names the arm ("arm 'x' read x at element ...").
    const bool named = why.compare(0, 5, "arm '") == 0;
    return fail(b, code, "%s%s%s; the kernel process and its buffers are unaffected (the next call starts a "
                "fresh worker)", named ? "" : who.c_str(), named ? "" : ": ", why.c_str());
  }
  payload->resize((size_t)h->payload);
  if (h->payload && read_all(w->from, payload->data(), payload->size(), -1) != 0) {
    gdn_status code;
    const std::string why = reap(w, &code);
    return fail(b, code, "%s: %s", who.c_str(), why.c_str());
  }
  return GDN_OK;
}

// Registers in the worker every live arm it has not seen at its current version. *gone: the first message
// could not be written because the worker had already ended (the caller replaces it and tries again).
gdn_status sync_arms(gdn_backend* b, Worker* w, bool* gone) {
  for (const Arm& a : all_arms()) {
    const int64_t key = ((int64_t)a.op << 32) | (uint32_t)a.id;
    auto it = w->known.find(key);
    if (it != w->known.end() && it->second == a.version) continue;
    std::vector<char> p;
    RegisterHead rh{};
    rh.desc = a.desc;
    rh.id = a.id;
    const std::string* s[4] = {&a.name, &a.host_module, &a.host_fast_module, &a.cuda_module};
    for (int i = 0; i < 4; ++i) rh.len[i] = (int32_t)s[i]->size();
    put(p, rh);
    for (int i = 0; i < 4; ++i) put_bytes(p, s[i]->data(), s[i]->size());
    if (!send_msg(w->to, kRegister, p)) {
      gdn_status code;
      const std::string why = reap(w, &code);
      *gone = true;
      return fail(b, code, "arm '%s': could not reach the worker: %s", a.name.c_str(), why.c_str());
    }
    MsgHeader h;
    std::vector<char> reply;
    gdn_status st = read_reply(b, w, "arm '" + a.name + "'", now_ms() + kTransferLimitMs, kTransferLimitMs, &h, &reply);
    if (st != GDN_OK) return st;
    DoneReply d;
    std::memcpy(&d, reply.data(), sizeof d);
    if (d.status != GDN_OK)
      return fail(b, (gdn_status)d.status, "%.*s", (int)d.msg_len, reply.data() + sizeof d);
    w->known[key] = a.version;
  }
  return GDN_OK;
}

struct Staged {
  std::vector<RangeDesc> ranges;
  std::vector<gdn_addr> caller;  // the caller's address of each range
  std::vector<int32_t> orders;
  uint64_t shm_bytes = kFaultBytes;
};

// Rewrites the ops' address fields into range numbers (1-based) and lays the ranges out in the shared file.
void stage(std::vector<gdn_op>& ops, Staged* s) {
  std::map<std::pair<gdn_addr, uint64_t>, uint32_t> seen;
  for (gdn_op& op : ops) {
    std::vector<Field> fields;
    op_fields(op, &fields);
    for (const Field& f : fields) {
      if (*f.addr == 0) continue;
      const auto key = std::make_pair(*f.addr, f.bytes);
      auto it = seen.find(key);
      uint32_t idx;
      if (it == seen.end()) {
        idx = (uint32_t)s->ranges.size();
        RangeDesc r{s->shm_bytes, f.bytes, f.flags, (uint32_t)(*f.addr % 256)};
        s->shm_bytes += (f.bytes + 255) / 256 * 256 + 256;
        s->ranges.push_back(r);
        s->caller.push_back(*f.addr);
        seen[key] = idx;
      } else {
        idx = it->second;
        s->ranges[idx].flags |= f.flags;
      }
      *f.addr = (gdn_addr)idx + 1;
    }
    if (op.kind == GDN_OP_CONV && op.conv.schedule.kind == GDN_SCHED_EXPLICIT && op.conv.schedule.order) {
      const int32_t at = (int32_t)s->orders.size();
      s->orders.insert(s->orders.end(), op.conv.schedule.order, op.conv.schedule.order + op.conv.schedule.order_len);
      op.conv.schedule.order = reinterpret_cast<const int32_t*>((uintptr_t)at + 1);
    }
  }
}

gdn_status copy_from_caller(gdn_backend* b, const Staged& s, char* map, bool include_out_only) {
  for (size_t i = 0; i < s.ranges.size(); ++i) {
    const RangeDesc& r = s.ranges[i];
    if (r.bytes == 0 || (!(r.flags & kIn) && !include_out_only)) continue;
    gdn_status st = read_to_host(b, map + r.shm_offset, s.caller[i], r.bytes, "user arm input");
    if (st != GDN_OK) return st;
  }
  return GDN_OK;
}

gdn_status copy_to_caller(gdn_backend* b, const Staged& s, const char* map) {
  for (size_t i = 0; i < s.ranges.size(); ++i) {
    const RangeDesc& r = s.ranges[i];
    if (r.bytes == 0 || !(r.flags & kOut)) continue;
    gdn_status st = check_range(b, s.caller[i], r.bytes, "user arm output");
    if (st != GDN_OK) return st;
#if GDN_HAVE_CUDA
    if (backend_is_cuda(b)) {
      st = cuda::upload(b, s.caller[i], map + r.shm_offset, r.bytes);
      if (st != GDN_OK) return st;
      continue;
    }
#endif
    std::memcpy(reinterpret_cast<void*>((uintptr_t)s.caller[i]), map + r.shm_offset, (size_t)r.bytes);
  }
  return GDN_OK;
}

// Runs ops (one forward op, or a timing list) in the worker. who names the user arm for messages.
gdn_status run_in_worker(gdn_backend* b, std::vector<gdn_op> ops, bool forward, const gdn_timing_config* cfg,
                         int limit_ms, const std::string& who, DoneReply* done, float* samples) {
  Worker* w = worker_for(b);
  std::lock_guard<std::mutex> lock(w->mu);
  gdn_status st = GDN_OK;
  // A worker that died while idle is replaced; one that dies between this check and the first write
  // (EPIPE: nothing of this call ran in it) is replaced once more.
  for (int attempt = 0;; ++attempt) {
    drop_if_dead(w);
    if (w->pid <= 0) st = spawn(b, w);
    bool gone = false;
    if (st == GDN_OK) st = sync_arms(b, w, &gone);
    if (st == GDN_OK || !gone || attempt > 0) break;
  }
  if (st != GDN_OK) return st;
  Staged s;
  stage(ops, &s);
  st = ensure_map(b, w, s.shm_bytes);
  if (st != GDN_OK) return st;
  std::memset(w->map, 0, kFaultBytes);
  // Outputs travel too, forward or timed: elements the arm leaves unwritten keep the caller's values.
  st = copy_from_caller(b, s, w->map, true);
  if (st != GDN_OK) return st;

  std::vector<char> p;
  RunHead rh{};
  rh.kind = b->kind;
  rh.ordinal = b->device_ordinal;
  rh.n_ops = (int32_t)ops.size();
  rh.n_ranges = (int32_t)s.ranges.size();
  if (cfg) rh.cfg = *cfg;
  rh.shm_bytes = w->map_bytes;
  rh.forward = forward ? 1 : 0;
  rh.n_order = (int32_t)s.orders.size();
  put(p, rh);
  put_bytes(p, ops.data(), ops.size() * sizeof(gdn_op));
  put_bytes(p, s.ranges.data(), s.ranges.size() * sizeof(RangeDesc));
  put_bytes(p, s.orders.data(), s.orders.size() * sizeof(int32_t));
  if (!send_msg(w->to, forward ? kRun : kTime, p)) {
    // It ended while idle after the registrations (nothing of this call ran in it): a fresh one takes the request.
    reap(w);
    bool gone = false;
    st = spawn(b, w);
    if (st == GDN_OK) st = sync_arms(b, w, &gone);
    if (st != GDN_OK) return st;
    if (!send_msg(w->to, forward ? kRun : kTime, p)) {
      gdn_status code;
      const std::string why = reap(w, &code);
      return fail(b, code, "%s: could not reach the worker: %s", who.c_str(), why.c_str());
    }
  }
  MsgHeader h;
  std::vector<char> reply;
  st = read_reply(b, w, who, now_ms() + kTransferLimitMs, kTransferLimitMs, &h, &reply);
  if (st != GDN_OK) return st;
  if (h.type == kStarted) st = read_reply(b, w, who, now_ms() + limit_ms, limit_ms, &h, &reply);
  if (st != GDN_OK) return st;
  if (h.type != kDone || reply.size() < sizeof(DoneReply)) {
    close_worker(w, true);
    return fail(b, GDN_ERR_INTERNAL, "%s: the worker replied out of protocol", who.c_str());
  }
  std::memcpy(done, reply.data(), sizeof *done);
  const char* tail = reply.data() + sizeof *done;
  const size_t n_samples = forward ? 0 : (size_t)ops.size() * (size_t)(cfg ? cfg->rounds : 0);
  if (done->status != GDN_OK) {
    const std::string msg(tail + n_samples * sizeof(float), (size_t)done->msg_len);
    if (b->kind == GDN_BACKEND_CUDA && (done->status == GDN_ERR_DEVICE || done->status == GDN_ERR_ARM_FAULT)) {
      reap(w);  // the worker leaves after a CUDA error: its context is lost
      return fail(b, GDN_ERR_ARM_FAULT, "%s on CUDA: %s; the worker's CUDA context was lost and is replaced at the next "
                  "call; this process's device tensors are intact (they never left it)", who.c_str(), msg.c_str());
    }
    return fail(b, (gdn_status)done->status, "%s", msg.c_str());
  }
  if (samples && n_samples) std::memcpy(samples, tail, n_samples * sizeof(float));
  // A timed run leaves the last launch's outputs in the caller's buffers, as gdn_time_ops does in process,
  // so what was timed can be checked bit for bit (test/arms/module-identity.test.ts).
  return copy_to_caller(b, s, w->map);
}

std::string who_of(int32_t family, int32_t id) {
  return std::string("arm '") + name_of(family, id) + "' (" + (family == GDN_OP_CONV ? "conv" : "post-conv") + ")";
}

int limit_of(int32_t family, int32_t id) {
  Arm a;
  if (!find(family, id, &a)) return kDefaultLimitMs;
  return a.desc.time_limit_ms > 0 ? a.desc.time_limit_ms : kDefaultLimitMs;
}

}  // namespace

bool any_user_op(const std::vector<PlannedOp>& planned) {
  for (const PlannedOp& op : planned) {
    if (op.kind == GDN_OP_CONV && is_user(op.conv.arm)) return true;
    if (op.kind == GDN_OP_POSTCONV && is_user(op.postconv.arm)) return true;
  }
  return false;
}

gdn_status isolated_conv_forward(gdn_backend* b, const gdn_conv_args* args, gdn_launch_contract* contract) {
  gdn_op op{};
  op.kind = GDN_OP_CONV;
  op.conv = *args;
  DoneReply d{};
  const gdn_status st = run_in_worker(b, {op}, true, nullptr, limit_of(GDN_OP_CONV, args->arm),
                                      who_of(GDN_OP_CONV, args->arm), &d, nullptr);
  if (st == GDN_OK && contract) *contract = d.contract;
  return st;
}

gdn_status isolated_postconv_forward(gdn_backend* b, const gdn_postconv_args* args, gdn_postconv_result* result) {
  gdn_op op{};
  op.kind = GDN_OP_POSTCONV;
  op.postconv = *args;
  DoneReply d{};
  const gdn_status st = run_in_worker(b, {op}, true, nullptr, limit_of(GDN_OP_POSTCONV, args->arm),
                                      who_of(GDN_OP_POSTCONV, args->arm), &d, nullptr);
  if (st == GDN_OK && result) *result = d.postconv;
  return st;
}

gdn_status isolated_time_ops(gdn_backend* b, const gdn_op* ops, int32_t n_ops, const gdn_timing_config* cfg,
                             float* samples_us) {
  std::vector<gdn_op> list(ops, ops + n_ops);
  std::string who;
  int64_t limit = 60000;
  for (const gdn_op& op : list) {
    int32_t family = 0;
    const int32_t id = user_arm_of(op, &family);
    if (id < 0) continue;
    if (who.empty()) who = who_of(family, id);
    limit += (int64_t)limit_of(family, id) * cfg->rounds;
  }
  if (limit > INT32_MAX) limit = INT32_MAX;
  DoneReply d{};
  return run_in_worker(b, list, false, cfg, (int)limit, who.empty() ? "timing" : "timing " + who, &d, samples_us);
}

// ----------------------------------------------------------------- the worker's side
namespace {

struct Served {
  gdn_backend* backend = nullptr;
  int32_t kind = -1, ordinal = -1;
};

void reply_done(int fd, const DoneReply& d, const float* samples, size_t n_samples, const std::string& msg) {
  std::vector<char> p;
  DoneReply r = d;
  r.msg_len = (int32_t)msg.size();
  put(p, r);
  if (n_samples) put_bytes(p, samples, n_samples * sizeof(float));
  put_bytes(p, msg.data(), msg.size());
  send_msg(fd, kDone, p);
}

std::string last_error_text(gdn_backend* b) {
  std::string m = gdn_last_error();
  if (m.empty() && b) {
    char buf[1024];
    gdn_backend_last_error(b, buf, sizeof buf);
    m = buf;
  }
  return m;
}

// Serves one RUN or TIME request; false when the worker must end (CUDA context lost).
bool serve_ops(int out_fd, int shm_fd, Served* sv, const std::vector<char>& payload, bool forward) {
  RunHead rh;
  std::memcpy(&rh, payload.data(), sizeof rh);
  const char* at = payload.data() + sizeof rh;
  std::vector<gdn_op> ops((size_t)rh.n_ops);
  std::memcpy(ops.data(), at, ops.size() * sizeof(gdn_op));
  at += ops.size() * sizeof(gdn_op);
  std::vector<RangeDesc> ranges((size_t)rh.n_ranges);
  std::memcpy(ranges.data(), at, ranges.size() * sizeof(RangeDesc));
  at += ranges.size() * sizeof(RangeDesc);
  std::vector<int32_t> orders((size_t)rh.n_order);
  std::memcpy(orders.data(), at, orders.size() * sizeof(int32_t));

  DoneReply d{};
  std::vector<float> samples;
  auto finish = [&](gdn_status st, const std::string& msg) {
    d.status = st;
    reply_done(out_fd, d, samples.data(), st == GDN_OK ? samples.size() : 0, msg);
    return !(sv->kind == GDN_BACKEND_CUDA && st != GDN_OK && (st == GDN_ERR_DEVICE || st == GDN_ERR_ARM_FAULT));
  };
  if (sv->backend == nullptr || sv->kind != rh.kind || sv->ordinal != rh.ordinal) {
    if (sv->backend) gdn_backend_close(sv->backend);
    sv->backend = nullptr;
    if (gdn_backend_open(rh.kind, rh.ordinal, &sv->backend) != GDN_OK) return finish(GDN_ERR_DEVICE, gdn_last_error());
    sv->kind = rh.kind;
    sv->ordinal = rh.ordinal;
  }
  gdn_backend* b = sv->backend;
  void* m = mmap(nullptr, rh.shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
  if (m == MAP_FAILED) return finish(GDN_ERR_INTERNAL, std::string("worker: cannot map the shared file: ") + strerror(errno));
  char* map = static_cast<char*>(m);
  std::vector<gdn_addr> base(ranges.size(), 0), addr(ranges.size(), 0);
  gdn_status st = GDN_OK;
  std::string msg;
  for (size_t i = 0; i < ranges.size() && st == GDN_OK; ++i) {
    st = gdn_buffer_alloc(b, ranges[i].bytes + 512, &base[i]);
    if (st != GDN_OK) break;
    addr[i] = base[i] + ranges[i].align;
    if ((ranges[i].flags & kIn) && ranges[i].bytes) st = gdn_buffer_upload(b, addr[i], map + ranges[i].shm_offset, ranges[i].bytes);
  }
  if (st == GDN_OK) {
    for (gdn_op& op : ops) {
      std::vector<Field> fields;
      op_fields(op, &fields);
      for (const Field& f : fields)
        if (*f.addr) *f.addr = addr[(size_t)*f.addr - 1];
      if (op.kind == GDN_OP_CONV && op.conv.schedule.kind == GDN_SCHED_EXPLICIT && op.conv.schedule.order)
        op.conv.schedule.order = orders.data() + ((uintptr_t)op.conv.schedule.order - 1);
    }
    send_msg(out_fd, kStarted, {});
    if (forward && ops[0].kind == GDN_OP_CONV) {
      st = gdn_conv_forward(b, &ops[0].conv, &d.contract);
    } else if (forward) {
      st = gdn_postconv_forward(b, &ops[0].postconv, &d.postconv);
    } else {
      samples.assign((size_t)rh.n_ops * (size_t)rh.cfg.rounds, 0.0f);
      set_timing(true);
      st = gdn_time_ops(b, ops.data(), rh.n_ops, &rh.cfg, samples.data());
      set_timing(false);
    }
    if (st != GDN_OK) msg = last_error_text(b);
    for (size_t i = 0; st == GDN_OK && i < ranges.size(); ++i)
      if ((ranges[i].flags & kOut) && ranges[i].bytes)
        st = gdn_buffer_download(b, map + ranges[i].shm_offset, addr[i], ranges[i].bytes);
    if (st != GDN_OK && msg.empty()) msg = last_error_text(b);
  } else {
    msg = last_error_text(b);
  }
  for (gdn_addr a : base)
    if (a) gdn_buffer_free(b, a);
  munmap(m, rh.shm_bytes);
  return finish(st, msg);
}

}  // namespace
}  // namespace user
}  // namespace gdn

GDN_API gdn_status gdn_user_worker_serve(int32_t in_fd, int32_t out_fd, int32_t shm_fd) {
  using namespace gdn::user;
  set_in_worker();
  // The fault page: checked mode writes its message here before ending the process (prelude.h).
  void* fault = mmap(nullptr, kFaultBytes, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
  if (fault == MAP_FAILED) return GDN_ERR_INTERNAL;
  set_fault_page(static_cast<char*>(fault));
  // Idle, an interrupt is not for the worker; serving a request, it stops the request (see the top of this
  // file). SIGINT arrives blocked from the parent's spawn, so nothing is lost or fatal before this point.
  struct sigaction ignore {}, stop {};
  ignore.sa_handler = SIG_IGN;
  stop.sa_handler = SIG_DFL;
  sigaction(SIGINT, &ignore, nullptr);
  sigset_t sigint;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &sigint, nullptr);
  Served sv;
  for (;;) {
    MsgHeader h;
    if (read_all(in_fd, &h, sizeof h, -1) != 0) break;  // the parent went away
    sigaction(SIGINT, &stop, nullptr);
    std::vector<char> payload((size_t)h.payload);
    if (h.payload && read_all(in_fd, payload.data(), payload.size(), -1) != 0) break;
    if (h.type == kRegister) {
      RegisterHead rh;
      std::memcpy(&rh, payload.data(), sizeof rh);
      std::string s[4];
      const char* at = payload.data() + sizeof rh;
      for (int i = 0; i < 4; ++i) {
        s[i].assign(at, (size_t)rh.len[i]);
        at += rh.len[i];
      }
      gdn_user_arm_desc d = rh.desc;
      d.name = s[0].c_str();
      d.host_module = s[1].empty() ? nullptr : s[1].c_str();
      d.host_fast_module = s[2].empty() ? nullptr : s[2].c_str();
      d.cuda_module = s[3].empty() ? nullptr : s[3].c_str();
      int32_t id = 0;
      DoneReply r{};
      r.status = register_arm(&d, rh.id, &id);
      reply_done(out_fd, r, nullptr, 0, r.status == GDN_OK ? "" : gdn_last_error());
    } else if (h.type == kRun || h.type == kTime) {
      if (!serve_ops(out_fd, shm_fd, &sv, payload, h.type == kRun)) break;
    } else {
      break;
    }
    sigaction(SIGINT, &ignore, nullptr);
  }
  if (sv.backend) gdn_backend_close(sv.backend);
  return GDN_OK;
}
