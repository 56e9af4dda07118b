/*
 * gdn.h — the whole contract between gdnlab's TypeScript layer (lib/, through koffi)
 * and libgdn, the native library of Gated DeltaNet causal-conv and post-conv kernels.
 *
 * Rules of this interface
 *   - Every function returns a gdn_status; nothing throws or aborts across it.
 *   - On failure the library records a message naming the argument and what was
 *     expected. gdn_last_error() returns the calling thread's message;
 *     gdn_backend_last_error() returns the last message recorded on a backend by any
 *     thread (use it after an asynchronous call, which runs on a worker thread).
 *   - Device memory is addressed with gdn_addr (a 64-bit address, as an integer, so the
 *     TypeScript side can do offset arithmetic). On the host backend "device" memory is
 *     host memory owned by libgdn. Every address an op receives must lie, with its whole
 *     extent, inside a live buffer of that backend; the library checks this.
 *   - Structs are plain C, naturally aligned, and only ever grow at the end; the ABI
 *     version changes when anything else changes.
 *   - Semantics of the ops: docs/SPEC.md (conv, post-conv, the arms, the determinism rules).
 *   - Arms are addressed by integer id (args.arm). The ids of the built-in arms are the enum values
 *     below and never change; the full table of every op family, with each arm's name, description
 *     and launch contract, is gdn_arm_count / gdn_arm_info_get (arms registered at run time follow
 *     the built-in ones).
 */
#ifndef GDN_H
#define GDN_H

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define GDN_API __declspec(dllexport)
#else
#define GDN_API __attribute__((visibility("default")))
#endif

#define GDN_ABI_VERSION 9
/* The arithmetic version of the deterministic functions every arm computes with (docs/SPEC.md §9.1). */
#define GDN_ARITH_VERSION 2

/* ---------------------------------------------------------------- status */
typedef enum gdn_status {
  GDN_OK = 0,
  GDN_ERR_INVALID_ARGUMENT = 1, /* an argument is out of its domain; the message names it */
  GDN_ERR_UNSUPPORTED = 2,      /* valid, but not available here (no CUDA build, option on the wrong backend) */
  GDN_ERR_OUT_OF_MEMORY = 3,
  GDN_ERR_NO_DEVICE = 4,        /* the CUDA backend was asked for and no usable GPU exists */
  GDN_ERR_DEVICE = 5,           /* the CUDA runtime reported an error; the message holds its text */
  GDN_ERR_INVALID_BUFFER = 6,   /* an address is not inside a live buffer of this backend (freed, foreign, too short) */
  GDN_ERR_INTERNAL = 7,
  GDN_ERR_ARM_FAULT = 8,        /* an arm faulted: its body broke the execution contract (an undeclared or
                                   divergent barrier, ...), or a user arm failed in its worker (a bounds
                                   violation, a signal other than SIGINT, a CUDA error, its time limit); the
                                   message names the arm and the fault */
  GDN_ERR_INTERRUPTED = 9       /* the call was stopped by an interrupt (SIGINT) of the process that ran it: the
                                   user-arm worker, which shares the caller's process group so that Jupyter's
                                   interrupt of a kernel stops a running user arm. Nothing the call was to
                                   write is valid; the next call works. A code of its own so that a caller
                                   tells an interrupt (report it as one) from a fault without reading the
                                   message, which names the arm. Added in ABI 9. */
} gdn_status;

/* ---------------------------------------------------------------- enums */
typedef enum gdn_backend_kind { GDN_BACKEND_HOST = 0, GDN_BACKEND_CUDA = 1 } gdn_backend_kind;

typedef enum gdn_dtype {
  GDN_F32 = 0,
  GDN_BF16 = 1,
  GDN_F16 = 2,
  GDN_I32 = 3,
  GDN_I8 = 4
} gdn_dtype;

/* Ids of the built-in causal-conv arms (docs/SPEC.md). All give identical bits for out and
 * conv_state. The table (and any arm added since) is gdn_arm_info_get(GDN_OP_CONV, id, ...). */
typedef enum gdn_conv_arm {
  GDN_CONV_SCALAR = 0,   /* one thread per (sequence, channel), serial over tokens: the reference */
  GDN_CONV_TILED = 1,    /* shared-memory tile of (16 + K-1) tokens x 32 channels, one block per sequence */
  GDN_CONV_REG = 2,      /* register window, one thread per channel, 128-channel tile, K at run time */
  GDN_CONV_REG_K4 = 3,   /* as reg with K = 4 fixed; falls back to reg when K != 4 */
  GDN_CONV_REG_K4X2 = 4, /* K = 4, two channels per thread (c, c+128), 256-channel tile; falls back to reg */
  GDN_CONV_VEC = 5       /* roofline arm: 16-byte loads, 64-token chunks; whole-sequence or long-chunk mapping */
} gdn_conv_arm;

/* Work mappings of the register arms (ignored by scalar and tiled, which own whole sequences). */
typedef enum gdn_conv_mapping {
  GDN_MAP_EXACT = 0,      /* one program per (sequence, 8-token chunk); chunk 0 owns the final-state write */
  GDN_MAP_EXACT_RACY = 1, /* the #305 shape: the program reaching the end of the sequence writes the final state */
  GDN_MAP_SEQUENCE = 2,   /* one block per (channel tile, sequence) */
  GDN_MAP_COUNT = 3
} gdn_conv_mapping;

/* Order in which the host backend runs the blocks of a launch (the CUDA backend accepts FORWARD only). */
typedef enum gdn_schedule_kind {
  GDN_SCHED_FORWARD = 0,
  GDN_SCHED_REVERSE = 1,
  GDN_SCHED_SHUFFLE = 2, /* seeded permutation */
  GDN_SCHED_EXPLICIT = 3 /* a caller-given permutation of the linear block indices */
} gdn_schedule_kind;

/* Planted mutations of the conv kernels, for proving that the checks catch them. */
typedef enum gdn_conv_mutant {
  GDN_CONV_MUTANT_NONE = 0,
  GDN_CONV_MUTANT_TAPS_REVERSED = 1,     /* taps applied newest-to-oldest */
  GDN_CONV_MUTANT_STATE_FROM_OUTPUT = 2, /* final state written from the activated outputs, not the raw inputs */
  GDN_CONV_MUTANT_NO_TAIL_GUARD = 3,     /* partial channel tile not guarded: lanes past C spill into the next row */
  GDN_CONV_MUTANT_CHUNK_OFF_BY_ONE = 4,  /* exact-chunk programs cover 7 of their 8 tokens */
  GDN_CONV_MUTANT_COUNT = 5
} gdn_conv_mutant;

typedef enum gdn_conv_update_arm {
  GDN_UPDATE_REFERENCE = 0, /* one thread per (sequence, channel), plain loops */
  GDN_UPDATE_REG = 1        /* register window, K = 4 specialised, vectorised state shift */
} gdn_conv_update_arm;

/* Ids of the built-in post-conv arms (docs/SPEC.md). */
typedef enum gdn_postconv_arm {
  GDN_POSTCONV_TREE = 0,       /* 128-lane reduction tree per (token, head): the reference */
  GDN_POSTCONV_TOKEN_TILE = 1, /* 16 tokens x 4 warps per block, lane fold (x0²+x2²)+(x1²+x3²), shuffles */
  GDN_POSTCONV_SEQ4 = 2,       /* PLANTED MUTANT: token tile with the sequential fold ((x0²+x1²)+x2²)+x3² */
  GDN_POSTCONV_VEC_TILE = 3    /* token tile with 16-byte q/k rows: 16 lanes x 8 features, the tree from shuffles */
} gdn_postconv_arm;

typedef enum gdn_op_kind {
  GDN_OP_NONE = 0,
  GDN_OP_CONV = 1,
  GDN_OP_CONV_UPDATE = 2,
  GDN_OP_POSTCONV = 3,
  GDN_OP_COPY = 4, /* device-to-device copy: the memory roofline */
  GDN_OP_FUSED = 5 /* fused conv -> post-conv (gdn_fused_forward) */
} gdn_op_kind;

typedef uint64_t gdn_addr;
typedef struct gdn_backend gdn_backend;

/* ---------------------------------------------------------------- arm registry */
/* gdn_arm_info.flags */
#define GDN_ARM_REFERENCE 0x1u        /* the family's reference: every other arm must equal it bit for bit */
#define GDN_ARM_MUTANT 0x2u           /* a PLANTED MUTANT arm (wrong on purpose: checks must catch it) */
#define GDN_ARM_BARRIER 0x4u          /* the body uses block barriers (host: cooperative fibers) */
#define GDN_ARM_SHUFFLE 0x8u          /* the body uses warp shuffles (host: cooperative fibers) */
#define GDN_ARM_USER 0x10u            /* registered at run time (not built into libgdn) */
#define GDN_ARM_FALLBACK_TARGET 0x20u /* another arm falls back to this one */
#define GDN_ARM_THREADS_FROM_D 0x40u  /* post-conv: threads = max(32, next power of two >= Dk), <= threads_per_block */

/* gdn_arm_info.data_requires: conditions of the data; when one fails the fallback arm runs */
#define GDN_ARM_REQ_VEC8 0x1u /* conv: C and x_row_stride multiples of 8, x and out 16-byte aligned */
#define GDN_ARM_REQ_D128 0x2u /* post-conv: Dk = Dv = 128 */

/* gdn_arm_info.layout (post-conv grids) */
#define GDN_LAYOUT_NONE 0       /* conv: grid (channel tiles, programs) */
#define GDN_LAYOUT_TOKEN_SLOT 1 /* post-conv: grid (T, 2Hk+Hv), one block per (token, head slot) */
#define GDN_LAYOUT_TILE_SLOTS 2 /* post-conv: ((2Hk+Hv+1) x folds, rows) blocks of (head slot, 16-token tile) */

typedef struct gdn_arm_info {
  int32_t op;                 /* gdn_op_kind: GDN_OP_CONV, GDN_OP_CONV_UPDATE, GDN_OP_POSTCONV or GDN_OP_FUSED */
  int32_t id;                 /* the value of args.arm that selects it */
  char name[32];
  char description[224];
  int32_t threads_per_block;
  int32_t per_block;          /* conv, update: channels per block; post-conv: head slots per block */
  int32_t tokens_per_program; /* conv: tokens per exact-mapping program, 0 = whole sequences only;
                                 post-conv: tokens per block */
  int32_t mappings;           /* conv: bit m set = gdn_conv_mapping m runs as asked (others run SEQUENCE) */
  int32_t shared_bytes_base;  /* shared memory per block = base + per_k * K bytes */
  int32_t shared_bytes_per_k;
  int32_t fixed_k;            /* 0: any K; else the arm needs exactly this K (else: fallback) */
  int32_t data_requires;      /* GDN_ARM_REQ_* (else: fallback); not "requires", a C++20 keyword */
  int32_t fallback;           /* id of the arm that runs when fixed_k or data_requires is not met; -1 none */
  int32_t flags;              /* GDN_ARM_* */
  int32_t layout;             /* GDN_LAYOUT_* */
  int32_t min_blocks_per_sm;  /* CUDA __launch_bounds__ minimum (1: none) */
  char fallback_rule[128];    /* the rule in words, "" when none */
  int32_t reserved[8];
} gdn_arm_info;

/* Arms of an op family (GDN_OP_CONV, GDN_OP_CONV_UPDATE, GDN_OP_POSTCONV, GDN_OP_FUSED): the built-in ones, then
 * any registered at run time. -1 (with gdn_last_error) for another op. */
GDN_API int32_t gdn_arm_count(int32_t op);
GDN_API gdn_status gdn_arm_info_get(int32_t op, int32_t id, gdn_arm_info* out);
/* Name of a gdn_conv_mutant ("none", "taps-reversed", ...), NULL outside 0..GDN_CONV_MUTANT_COUNT-1. */
GDN_API const char* gdn_conv_mutant_name(int32_t mutant);

/* ---------------------------------------------------------------- library */
GDN_API int32_t gdn_abi_version(void);
/* GDN_ARITH_VERSION of the build: which deterministic exp / SiLU / log1p the results carry. */
GDN_API int32_t gdn_arith_version(void);
/* Build facts: "host", "host+cuda"; compiler versions; CUDA architectures compiled. */
GDN_API const char* gdn_build_info(void);
GDN_API const char* gdn_status_name(int32_t status);
/* The calling thread's last error message ("" when none). Valid until the thread's next call. */
GDN_API const char* gdn_last_error(void);
/* Number of usable CUDA devices (0 when the library has no CUDA build, no driver, or no GPU). */
GDN_API gdn_status gdn_cuda_device_count(int32_t* count);

/* ---------------------------------------------------------------- backend */
GDN_API gdn_status gdn_backend_open(int32_t kind, int32_t device_ordinal, gdn_backend** out);
/* Frees every buffer still alive on the backend. NULL is accepted. */
GDN_API gdn_status gdn_backend_close(gdn_backend* backend);
/* Copies the last error recorded on this backend (by any thread) into buf (NUL-terminated). */
GDN_API gdn_status gdn_backend_last_error(gdn_backend* backend, char* buf, int32_t buf_len);

typedef struct gdn_device_info {
  int32_t backend;            /* gdn_backend_kind */
  int32_t device_ordinal;
  char name[256];             /* GPU name, or the host CPU model */
  int32_t sm_major, sm_minor; /* compute capability; 0 on the host */
  int32_t sm_count;           /* multiprocessors; host: logical CPUs */
  int32_t l2_bytes;           /* L2 cache size; host: last-level cache size if known, else 0 */
  uint64_t total_mem_bytes, free_mem_bytes;
  int32_t sm_clock_mhz;        /* current SM clock (NVML when available, else the attribute), 0 if unknown */
  int32_t mem_clock_mhz;       /* current memory clock, 0 if unknown */
  int32_t max_sm_clock_mhz;    /* maximum SM clock, 0 if unknown */
  int32_t max_mem_clock_mhz;   /* maximum memory clock, 0 if unknown */
  int32_t mem_bus_width_bits;  /* 0 if unknown */
  int32_t driver_version;      /* cudaDriverGetVersion, e.g. 13000; 0 on the host */
  int32_t runtime_version;     /* cudaRuntimeGetVersion; 0 on the host */
  char driver_string[64];      /* NVML driver version, e.g. "580.159.03", or "" */
  int32_t clocks_source;       /* 0 unknown, 1 NVML current clocks, 2 device attributes */
  int32_t reserved[7];
} gdn_device_info;

GDN_API gdn_status gdn_device_info_get(gdn_backend* backend, gdn_device_info* out);

/* ---------------------------------------------------------------- buffers */
/* Allocates bytes (> 0) of backend memory, 256-byte aligned, uninitialised. */
GDN_API gdn_status gdn_buffer_alloc(gdn_backend* backend, uint64_t bytes, gdn_addr* out);
GDN_API gdn_status gdn_buffer_free(gdn_backend* backend, gdn_addr buffer);
/* Host → backend: dst must lie with bytes inside a live buffer. Synchronous. */
GDN_API gdn_status gdn_buffer_upload(gdn_backend* backend, gdn_addr dst, const void* src, uint64_t bytes);
/* Backend → host. Synchronous (waits for work in flight on the backend's stream). */
GDN_API gdn_status gdn_buffer_download(gdn_backend* backend, void* dst, gdn_addr src, uint64_t bytes);
/* Fills bytes with a repeated 32-bit pattern (bytes a multiple of 4): poison before a run.
 * Fill and copy are enqueued on the backend's stream (CUDA) without waiting: every later op, copy,
 * download and synchronize is ordered after them; their errors show at the next synchronising call. */
GDN_API gdn_status gdn_buffer_fill_u32(gdn_backend* backend, gdn_addr dst, uint32_t pattern, uint64_t bytes);
GDN_API gdn_status gdn_buffer_copy(gdn_backend* backend, gdn_addr dst, gdn_addr src, uint64_t bytes);
/* n buffers in one call, for an op's fresh outputs (docs/SPEC.md §2, "Fresh outputs"): buffer i has bytes[i] (> 0, a
 * multiple of 4) and is filled with the repeated 32-bit pattern patterns[i], enqueued like
 * gdn_buffer_fill_u32 but as one launch on CUDA for all of them (not one per buffer). out[i] receives
 * the addresses. On failure no buffer stays allocated and out is all 0. */
GDN_API gdn_status gdn_buffers_alloc_filled(gdn_backend* backend, uint32_t n, const uint64_t* bytes, const uint32_t* patterns,
                                            gdn_addr* out);
/* Frees n live buffers, as n calls of gdn_buffer_free; every address is checked before any is freed
 * (an error frees none and names the index). */
GDN_API gdn_status gdn_buffers_free(gdn_backend* backend, uint32_t n, const gdn_addr* buffers);
/* Live buffers and their total size (leak checks). Blocks held by the buffer cache are not live. */
GDN_API gdn_status gdn_buffer_stats(gdn_backend* backend, int64_t* live_count, uint64_t* live_bytes);

/* Host backend: the wall time in nanoseconds of the kernel replayed by the last op call (or gdn_time_ops run) on
 * this backend; 0 when that call replayed none here (refused, matmul, an arm run in the user-arm worker) or before
 * any call. So that a caller can take an op's cost beyond its kernel call by call (gdnlab bench overhead). CUDA
 * backend: GDN_ERR_UNSUPPORTED — its kernels run asynchronously; time them with gdn_time_ops. Added in ABI 8. */
GDN_API gdn_status gdn_last_kernel_ns(gdn_backend* backend, uint64_t* ns);

/* Buffers come from a caching allocator: memory is taken from the backend in segments (cudaMalloc,
 * or anonymous pages on the host), split into blocks, and a freed block is kept for reuse instead of
 * being returned (gdn_buffer_free never synchronises the device). A freed buffer's addresses stop
 * being valid op arguments at once; a later allocation may reuse them. */
typedef struct gdn_buffer_cache_info {
  uint64_t reserved_bytes;      /* held from the backend, in segments */
  uint64_t allocated_bytes;     /* in live blocks (sizes rounded up to 512 bytes) */
  uint64_t cached_bytes;        /* free blocks kept for reuse (reserved - allocated) */
  uint64_t peak_reserved_bytes;
  int64_t segments, allocated_blocks, free_blocks;
  uint64_t alloc_calls;         /* successful gdn_buffer_alloc calls (and internal scratch blocks) */
  uint64_t segment_maps;        /* segments taken from the backend: the allocations the cache missed */
  uint64_t segment_unmaps;      /* segments given back (gdn_buffer_trim, out-of-memory retries) */
  uint64_t reserved[6];
} gdn_buffer_cache_info;
GDN_API gdn_status gdn_buffer_cache_stats(gdn_backend* backend, gdn_buffer_cache_info* out);
/* Gives every wholly unused segment back to the backend (synchronises the CUDA stream first).
 * released_bytes (may be NULL) receives how much. Allocation failures do this by themselves. */
GDN_API gdn_status gdn_buffer_trim(gdn_backend* backend, uint64_t* released_bytes);
GDN_API gdn_status gdn_synchronize(gdn_backend* backend);

/* Host backend: how many threads replay the blocks of a launch. Only launches whose block order does
 * not matter run in parallel: the FORWARD schedule of an arm without a planted mutant and not the racy
 * mapping; reverse, shuffled and explicit schedules and race trials keep their exact serial order.
 * threads = 0 picks every logical CPU (the default), 1 replays serially. Parallel and serial replays
 * give the same bits. gdn_host_threads reports the count in effect. */
GDN_API gdn_status gdn_host_set_threads(gdn_backend* backend, int32_t threads);
GDN_API gdn_status gdn_host_threads(gdn_backend* backend, int32_t* threads);

/* ---------------------------------------------------------------- causal conv, prefill */
typedef struct gdn_schedule {
  int32_t kind;      /* gdn_schedule_kind */
  int32_t order_len; /* EXPLICIT: number of entries in order (must equal the block count) */
  uint64_t seed;     /* SHUFFLE */
  const int32_t* order; /* EXPLICIT: host array, a permutation of 0..blocks-1 (linear index y*grid_x + x) */
} gdn_schedule;

typedef struct gdn_conv_args {
  int64_t T;  /* total tokens over all sequences (rows of x and out) */
  int64_t C;  /* channels */
  int64_t K;  /* taps, 2..GDN_CONV_MAX_K */
  int32_t num_seqs;       /* N */
  int32_t x_dtype;        /* F32 or BF16; weight and bias have the same dtype */
  int32_t out_dtype;      /* F32 or BF16 */
  int32_t his_dtype;      /* has_initial_state dtype: I8 or I32 */
  int64_t x_row_stride;   /* elements between rows of x, >= C */
  gdn_addr x;             /* [T, x_row_stride] */
  gdn_addr weight;        /* [C, K] */
  gdn_addr bias;          /* [C] or 0 */
  gdn_addr query_start_loc;   /* [N+1] int32, 0 = qsl[0] <= ... <= qsl[N] = T; 0 when query_start_loc_host is given */
  gdn_addr has_initial_state; /* [N] his_dtype, or 0 (no sequence has initial state) */
  gdn_addr conv_state;    /* [N, C, K-1] f32, read and written in place */
  gdn_addr out;           /* [T, C] out_dtype, contiguous */
  int32_t arm;            /* gdn_conv_arm */
  int32_t mapping;        /* gdn_conv_mapping (register arms) */
  int32_t mutant;         /* gdn_conv_mutant; NONE in normal use */
  int32_t widen_cycles;   /* CUDA: spin this many cycles before chunk 0 reads the state (0 = off) */
  gdn_schedule schedule;  /* host backend block order */
  /* The offsets as a host array of N+1 int32, or NULL. When given, query_start_loc must be 0: libgdn
   * plans from this copy and puts it on the device itself (stream-ordered, no wait), so the call needs
   * no device-to-host read-back of the offsets (docs/SPEC.md §3.1, "the offsets' two routes"). Read during the
   * call only. */
  const int32_t* query_start_loc_host;
} gdn_conv_args;

#define GDN_CONV_MAX_K 8
#define GDN_CONV_CHUNK 8 /* tokens per exact-mapping program */

/* What a launch is (or was) made of. */
typedef struct gdn_launch_contract {
  int32_t arm_ran;            /* after fallbacks (reg-k4 with K != 4 runs reg) */
  int32_t mapping_ran;        /* scalar and tiled report GDN_MAP_SEQUENCE */
  int32_t threads_per_block;
  int32_t channels_per_block; /* channel tile width */
  int32_t channel_tiles;
  int32_t programs;           /* exact: (sequence, chunk) programs; sequence: sequences */
  int32_t grid_x, grid_y, grid_z;
  int32_t shared_bytes;
  int32_t tokens_per_program; /* chunk length (exact) or 0 for whole sequences */
  int32_t reserved[5];
} gdn_launch_contract;

/* Pure function (no backend): the launch an arm and mapping make for these sizes.
 * query_start_loc is a host array of num_seqs+1 int32. programs_out (host, may be NULL) receives up
 * to programs_capacity (sequence, chunk) pairs as 2*i, 2*i+1. */
GDN_API gdn_status gdn_conv_launch_contract(int32_t arm, int32_t mapping, int64_t C, int64_t K,
                                            const int32_t* query_start_loc, int32_t num_seqs,
                                            gdn_launch_contract* out, int32_t* programs_out,
                                            int32_t programs_capacity);

/* Runs the prefill conv. contract (may be NULL) receives what actually ran. */
GDN_API gdn_status gdn_conv_forward(gdn_backend* backend, const gdn_conv_args* args,
                                    gdn_launch_contract* contract);

/* ---------------------------------------------------------------- causal conv, decode update */
typedef struct gdn_conv_update_args {
  int64_t B;            /* sequences in the batch, one new token each */
  int64_t C, K;
  int32_t x_dtype;      /* F32 or BF16 (weight, bias alike) */
  int32_t out_dtype;    /* F32 or BF16 */
  int32_t state_dtype;  /* F32 or BF16 */
  int32_t arm;          /* gdn_conv_update_arm */
  int64_t num_slots;    /* rows of the state pool */
  gdn_addr x;           /* [B, C] */
  gdn_addr weight;      /* [C, K] */
  gdn_addr bias;        /* [C] or 0 */
  gdn_addr state;       /* [num_slots, C, K-1], column K-2 newest; updated in place */
  gdn_addr state_indices; /* [B] int32: slot of sequence b; negative = skip (out and state untouched);
                             0 when state_indices_host is given */
  gdn_addr out;         /* [B, C] */
  /* ABI 6: the slots as a host copy ([B] int32, read during the call), or null. libgdn checks them as it
   * checks a device array (which it must read back to check: a device-to-host copy and a wait) and
   * passes them to the kernel itself; exactly one of state_indices and state_indices_host is given. */
  const int32_t* state_indices_host;
} gdn_conv_update_args;

GDN_API gdn_status gdn_conv_update(gdn_backend* backend, const gdn_conv_update_args* args);

/* ---------------------------------------------------------------- post-conv */
typedef struct gdn_postconv_args {
  int64_t T, Hk, Hv, Dk, Dv; /* conv_out has C = 2*Hk*Dk + Hv*Dv channels: [q | k | v] */
  int32_t conv_dtype;   /* F32 or BF16 */
  int32_t gate_dtype;   /* dtype of a and b: F32 or BF16 */
  int32_t qkv_dtype;    /* F32 or BF16 */
  int32_t arm;          /* gdn_postconv_arm */
  int64_t a_row_stride, b_row_stride; /* elements, >= Hv (a and b may interleave in one buffer) */
  gdn_addr conv_out;    /* [T, C] contiguous */
  gdn_addr a, b;        /* first element of row 0 of each */
  gdn_addr A_log, dt_bias; /* [Hv] f32 */
  gdn_addr q, k;        /* [T, Hk, Dk] qkv_dtype */
  gdn_addr v;           /* [T, Hv, Dv] qkv_dtype */
  gdn_addr g, beta;     /* [T, Hv] f32 */
} gdn_postconv_args;

typedef struct gdn_postconv_result {
  int32_t arm_ran;      /* token-tile, seq4 and vec-tile fall back to tree unless Dk = Dv = 128 */
  int32_t threads_per_block;
  int32_t grid_x, grid_y;
  int32_t reserved[4];
} gdn_postconv_result;

GDN_API gdn_status gdn_postconv_forward(gdn_backend* backend, const gdn_postconv_args* args,
                                        gdn_postconv_result* result);

/* ---------------------------------------------------------------- dense helpers */
/* out[M, N] (f32) = a[M, Kd] (row-major) · b[N, Kd]ᵀ, both of in_dtype (F32 or BF16), f32 accumulation
 * in a fixed order (k ascending, fmaf) on both backends: the projections of Qwen3.5 layer 0. */
typedef struct gdn_matmul_args {
  int64_t M, N, Kd;
  int32_t in_dtype;
  int32_t out_dtype;    /* F32 or BF16 */
  gdn_addr a, b, out;
} gdn_matmul_args;
GDN_API gdn_status gdn_matmul_nt(gdn_backend* backend, const gdn_matmul_args* args);

/* ---------------------------------------------------------------- fused conv -> post-conv */
/* The causal conv (docs/SPEC.md §3) and the post-conv (§6) in one pass: x is read once; q, k (L2-normalised),
 * v, g, beta and the final conv state are written; the conv output never reaches memory. Bit-identical to
 * gdn_conv_forward (arm scalar, out_dtype = conv_dtype) followed by gdn_postconv_forward (arm tree): each
 * conv output is rounded to conv_dtype exactly where that chain stores it, and the q/k sum of squares is
 * summed in the tree's order. Needs Dk = Dv = 128 (the head size of every Qwen3.5 model). */
/* Ids of the built-in fused arms; the table is gdn_arm_info_get(GDN_OP_FUSED, id, ...). */
typedef enum gdn_fused_arm {
  GDN_FUSED_HEAD_TILE = 0 /* one block per (head slot, 64-token program of a sequence): 8 groups of 16 lanes,
                             a lane holds features 4j..4j+3 and 64+4j..64+4j+3 of a head for 8 tokens */
} gdn_fused_arm;

/* Planted mutations of the fused op, for proving that the checks catch them. */
typedef enum gdn_fused_mutant {
  GDN_FUSED_MUTANT_NONE = 0,
  GDN_FUSED_MUTANT_SEQ_FOLD = 1, /* each lane sums its 8 squares in sequence, then a 16-lane butterfly: not the tree */
  GDN_FUSED_MUTANT_NO_ROUND = 2, /* the conv output is not rounded to conv_dtype before the post-conv */
  GDN_FUSED_MUTANT_COUNT = 3
} gdn_fused_mutant;

typedef struct gdn_fused_args {
  int64_t T, Hk, Hv, Dk, Dv; /* x has C = 2*Hk*Dk + Hv*Dv channels: [q heads | k heads | v heads] */
  int64_t K;                 /* taps, 2..GDN_CONV_MAX_K */
  int32_t num_seqs;          /* N */
  int32_t x_dtype;           /* F32 or BF16; weight and bias have the same dtype */
  int32_t conv_dtype;        /* F32 or BF16: the dtype the two-op chain stores the conv output in */
  int32_t qkv_dtype;         /* F32 or BF16 */
  int32_t gate_dtype;        /* dtype of a and b: F32 or BF16 */
  int32_t his_dtype;         /* has_initial_state dtype: I8 or I32 */
  int32_t arm;               /* gdn_fused_arm */
  int32_t mutant;            /* gdn_fused_mutant; NONE in normal use */
  int64_t x_row_stride;      /* elements between rows of x, >= C, a multiple of 4 */
  int64_t a_row_stride, b_row_stride; /* elements, >= Hv */
  gdn_addr x;                /* [T, x_row_stride], 8-byte (bf16) or 16-byte (f32) aligned */
  gdn_addr weight;           /* [C, K] */
  gdn_addr bias;             /* [C] or 0 */
  gdn_addr query_start_loc;  /* [N+1] int32, 0 = qsl[0] <= ... <= qsl[N] = T; 0 when query_start_loc_host is given */
  gdn_addr has_initial_state; /* [N] his_dtype, or 0 */
  gdn_addr conv_state;       /* [N, C, K-1] f32, read and written in place */
  gdn_addr a, b;             /* first element of row 0 of each */
  gdn_addr A_log, dt_bias;   /* [Hv] f32 */
  gdn_addr q, k;             /* [T, Hk, Dk] qkv_dtype, aligned like x */
  gdn_addr v;                /* [T, Hv, Dv] qkv_dtype, aligned like x */
  gdn_addr g, beta;          /* [T, Hv] f32 */
  /* The offsets as a host array of N+1 int32, or NULL: as gdn_conv_args.query_start_loc_host (query_start_loc
   * must then be 0; libgdn plans from this copy and puts it on the device itself, with no read-back). Read during
   * the call only. */
  const int32_t* query_start_loc_host;
} gdn_fused_args;

typedef struct gdn_fused_result {
  int32_t arm_ran;
  int32_t threads_per_block;
  int32_t grid_x;             /* head slots: 2*Hk + Hv + 1 (the last computes the gates) */
  int32_t grid_y;             /* programs: (sequence, 64-token chunk) pairs */
  int32_t tokens_per_program;
  int32_t reserved[3];
} gdn_fused_result;

/* Runs the fused op. result (may be NULL) receives what ran. */
GDN_API gdn_status gdn_fused_forward(gdn_backend* backend, const gdn_fused_args* args, gdn_fused_result* result);

/* ---------------------------------------------------------------- timing */
typedef struct gdn_copy_args {
  gdn_addr dst, src;
  uint64_t bytes;
} gdn_copy_args;

/* One timed operation; only the member named by kind is read. */
typedef struct gdn_op {
  int32_t kind;         /* gdn_op_kind */
  int32_t reserved;
  gdn_conv_args conv;
  gdn_conv_update_args update;
  gdn_postconv_args postconv;
  gdn_copy_args copy;
  gdn_fused_args fused;
} gdn_op;

typedef struct gdn_timing_config {
  int32_t rounds;       /* each round launches every op once, in order (arms interleaved) */
  int32_t flush_l2;     /* 1: before each launch, outside the timed region, overwrite an L2-sized buffer */
  int32_t rotate_order; /* 1: round r starts at op (r mod n_ops), so no op always follows the flush or another */
  int32_t graph_launches; /* 0: one timed launch per sample. G > 0 (at most 1000): each sample is one replay of a
                           * CUDA graph of G back-to-back launches of the op, divided by G, which removes the
                           * launch overhead of short kernels (L2 warm after the first launch; a flush, when
                           * asked for, runs before the replay). The host backend runs the op G times
                           * back to back and divides likewise (it has no launches to remove). This member
                           * was `reserved` (always 0) before: same layout, same ABI. */
} gdn_timing_config;

/* Times n_ops ops for cfg->rounds rounds. samples_us (host, rounds*n_ops floats) receives the time of
 * op i in round r at [r*n_ops + i] (per launch, in graph mode the replay's time / graph_launches):
 * CUDA events around the single launch (or graph replay) on the CUDA backend, a
 * monotonic clock around the call on the host backend. Ops are validated and planned once, before
 * the first round; planning is never inside a timed region. */
GDN_API gdn_status gdn_time_ops(gdn_backend* backend, const gdn_op* ops, int32_t n_ops,
                                const gdn_timing_config* cfg, float* samples_us);

#ifdef __cplusplus
}
#endif

#include "gdn_user.h" /* arms defined at run time */

#endif /* GDN_H */
