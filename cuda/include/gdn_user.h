/*
 * gdn_user.h — arms defined at run time (docs/USER-ARMS.md), part of gdn.h's contract.
 *
 * A user arm is a per-thread body compiled outside libgdn (by lib/arms from a notebook cell) into
 * a module per backend: a shared object for the host backend, a cubin for the CUDA backend. It is
 * appended to its family's arm table (gdn_arm_count / gdn_arm_info_get list it, flag GDN_ARM_USER);
 * its id is used like a built-in arm's in gdn_conv_args.arm / gdn_postconv_args.arm and in
 * gdn_time_ops; gdn_conv_launch_contract describes its launch.
 *
 * Isolation: libgdn never loads a user module into the calling process. Every op that runs a user
 * arm (and every gdn_time_ops list containing one) is executed by a worker process (gdn_user_worker,
 * next to libgdn) on copies of the op's buffers; the results are copied back when it succeeds. A
 * fault there — a checked-mode bounds violation, a signal (SIGSEGV, SIGBUS, SIGILL, SIGTRAP,
 * SIGFPE), a CUDA error, a run past the arm's time limit — returns GDN_ERR_ARM_FAULT with a message
 * naming the arm and the fault; the worker is replaced and the caller's buffers are untouched. An
 * interrupt (SIGINT to the caller's process group, which the worker shares) that ends the worker while
 * it serves the call returns GDN_ERR_INTERRUPTED instead, with the same guarantees.
 */
#ifndef GDN_USER_H
#define GDN_USER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gdn_user_arm_desc {
  int32_t op;                 /* GDN_OP_CONV or GDN_OP_POSTCONV */
  int32_t threads_per_block;  /* 1..1024 */
  int32_t channels_per_block; /* conv: channels of one block (grid_x = ceil(C / this)); post-conv: unused */
  int32_t tokens_per_program; /* conv: tokens of an exact-mapping program; post-conv: unused (the token-tile
                                 layout: 16 tokens per block) */
  int32_t mappings;           /* conv: bit (1 << gdn_conv_mapping) per mapping run as asked (SEQUENCE always) */
  int32_t shared_bytes;       /* dynamic shared memory per block, 0..49152 */
  int32_t cooperative;        /* 1: the body calls sync() or shfl_xor() (host: threads run as fibers) */
  int32_t time_limit_ms;      /* per launch (0: 10000); past it the worker is killed */
  int32_t requires_d128;      /* post-conv: runs only with Dk = Dv = 128, else falls back to tree */
  int32_t reserved0;
  const char* name;           /* 1..31 of a-z 0-9 - _ .; registering a name again replaces that arm (same id) */
  const char* host_module;    /* host shared object used by forward (checked build), or NULL */
  const char* host_fast_module; /* host shared object used by gdn_time_ops (unchecked), or NULL */
  const char* cuda_module;    /* cubin for the CUDA backend, or NULL */
  int32_t reserved[8];
} gdn_user_arm_desc;

/* Registers (or, for a name already registered in op's family, replaces) a user arm. */
GDN_API gdn_status gdn_arm_register(const gdn_user_arm_desc* desc, int32_t* id_out);

/* The worker's loop (gdn_user_worker's main): requests on in_fd, replies on out_fd, buffers in the
 * shared memory file shm_fd. Not for other callers. */
GDN_API gdn_status gdn_user_worker_serve(int32_t in_fd, int32_t out_fd, int32_t shm_fd);

#ifdef __cplusplus
}
#endif

#endif /* GDN_USER_H */
