/* SPDX-License-Identifier: MIT */
/*
 * hipobj.h - the public API of hipObject.
 *
 * hipObject moves the payload of an S3 object between an S3 server and a
 * buffer in GPU or host memory with one-sided RDMA. The application keeps its
 * S3 conversation: it carries the token that hipObject mints in the
 * x-amz-rdma-token request header and hands the x-amz-rdma-reply response
 * header back. docs/protocol.md specifies what travels on the wire.
 *
 * Thread-safety classes used below:
 *   MT-Safe     may be called from any number of threads at once.
 *   Init-Serial hipObjInit() and hipObjShutdown() serialise with each other;
 *               other calls running meanwhile keep the instance they found.
 *   Pure        touches no library state; needs no hipObjInit().
 *
 * Callbacks (hipObjOps_t) run on the thread that called hipObjGet() or
 * hipObjPut(), with no library lock held. They may call any function of this
 * header; a callback that starts another transfer on the same thread gets
 * hipObjBusy rather than waiting for a connection its own caller holds.
 *
 * This header compiles as C11 and C++11.
 */
#ifndef HIPOBJ_H
#define HIPOBJ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#if defined(__GNUC__)
#define HIPOBJ_API __attribute__((visibility("default")))
#else
#define HIPOBJ_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define HIPOBJ_VERSION_MAJOR 0
#define HIPOBJ_VERSION_MINOR 1
#define HIPOBJ_VERSION_PATCH 0

/* Operation errors. The values are ABI: new codes are appended. */
typedef enum {
  hipObjSuccess = 0,
  hipObjInvalidValue = 1,        /* a bad argument */
  hipObjNotInitialized = 2,      /* no instance, or it was shut down */
  hipObjAlreadyInitialized = 3,  /* hipObjInit() with an instance up */
  hipObjRdmaError = 4,           /* verbs failure, error completion, timeout */
  hipObjS3Error = 5,             /* callback failed, reply not success (501!) */
  hipObjBufNotRegistered = 6,    /* no buffer registered at that address */
  hipObjBufAlreadyRegistered = 7,
  hipObjNicNotFound = 8,         /* no usable RDMA device */
  hipObjDmabufNotSupported = 9,  /* GPU memory cannot be registered */
  hipObjSizeTooLarge = 10,       /* above 4 GiB, or above the map's capacity,
                                    or more than RLIMIT_MEMLOCK lets the
                                    process pin (one warning names it) */
  hipObjInternalError = 11,      /* out of memory, or a library defect */
  hipObjNotSupported = 12,       /* memory type or operation not supported */
  hipObjBusy = 13                /* in use: try again later */
} hipObjOpError_t;

/* An operation error, and the GPU runtime's own error number behind it (a
 * hipError_t or CUresult value), or 0. */
typedef struct {
  hipObjOpError_t opError;
  int hipError;
} hipObjError_t;

/* Unused by the library; kept for API compatibility. */
typedef void *hipObjHandle_t;

/*
 * The application's side of the S3 conversation.
 *
 * sendRequest(ctx, token, tokenLen): send the S3 request with `token` (88 hex
 *   digits, tokenLen 88, NUL-terminated) in the x-amz-rdma-token header. It
 *   may return as soon as the response headers have arrived; the response
 *   body of an RDMA request is empty. Return 0 on success.
 * recvReply(ctx, reply, replyLen): copy the x-amz-rdma-reply header value into
 *   `reply`; *replyLen is the buffer's size (512) on entry and the number of
 *   bytes written on return. A response without the header is a failure:
 *   return non-zero. Return 0 on success.
 * One hipObjGet()/hipObjPut() may call the pair more than once: an attempt
 * that failed for a fabric reason is sent again with a new token
 * (HIPOBJ_RETRIES, docs/protocol.md section 7); each sendRequest is a new
 * S3 request.
 */
typedef struct {
  int (*sendRequest)(void *ctx, const char *token, size_t tokenLen);
  int (*recvReply)(void *ctx, char *reply, size_t *replyLen);
} hipObjOps_t;

typedef struct {
  const char *endpoint;  /* unused by the library; for the application */
  const char *region;    /* unused by the library */
  const char *accessKey; /* unused by the library */
  const char *secretKey; /* unused by the library */
  uint32_t flags;        /* 0, or HIPOBJ_INIT_FIRST_ACTIVE_NIC */
  int gpuDevice;         /* GPU ordinal, or -1 for the current device */
  const char *nicHint;   /* comma-separated RDMA device names: the rails
                            (docs/architecture.md, "Rails"); NULL: chosen
                            from the PCI tree */
} hipObjConfig_t;

/* hipObjConfig_t.flags: when there is no nicHint and no NIC is chosen by its
 * distance from the GPU (no GPU, or no NIC with a PCI bus id), use the first
 * RDMA device (by name) with an active port rather than failing with
 * hipObjNicNotFound; without a GPU, the rails are then the active NICs on
 * the calling CPU's NUMA node (fastest link), where any is known there. */
#define HIPOBJ_INIT_FIRST_ACTIVE_NIC 0x1u

#define HIPOBJ_RDMA_OP_PUT 0 /* server RDMA READs the buffer */
#define HIPOBJ_RDMA_OP_GET 1 /* server RDMA WRITEs the buffer */
#define HIPOBJ_SYNC_TO_HOST 0   /* device -> staging, before a PUT */
#define HIPOBJ_SYNC_TO_DEVICE 1 /* staging -> device, after a GET */
#define HIPOBJ_RDMA_REPLY_NOT_IMPLEMENTED 501
/* Data first (docs/protocol.md, section 5): the reply of a transfer that
 * moved before the answer ("done:<bytes>"), or whose RDMA failed, with
 * HTTP 500: recvReply hands it to hipObject, which tries again. */
#define HIPOBJ_RDMA_REPLY_DONE_PREFIX "done:"
#define HIPOBJ_RDMA_REPLY_RDMA_FAILED "rdma-failed"
#define HIPOBJ_TOKEN_LEN 88        /* hex digits in a token */
#define HIPOBJ_REPLY_BUF_LEN 512   /* the buffer recvReply gets */
#define HIPOBJ_MAX_BUFFER_SIZE ((uint64_t)4 << 30)
#define HIPOBJ_MAX_BUFFERS 256

/* ---- lifecycle ---------------------------------------------------------- */

/*
 * hipObjInit: choose the GPU and its rails (the NICs nearest to it: the
 * smallest PCIe path class, then the fastest link, shared out among the
 * host's GPUs that have the same near set; or the NICs nicHint lists), open
 * every rail with its own connection pool (HIPOBJ_MAX_TRANSFERS
 * connections each; a rail other than the first that does not open is
 * left out with a warning). Each transfer is placed on a healthy rail
 * with the fewest bytes in flight (plus 256 KiB per transfer), ties in
 * turn (a retry on another rail than
 * the one that failed it); a buffer is registered on a rail the first
 * time a transfer uses it there. A host with no GPU needs
 * config->nicHint, or
 * HIPOBJ_INIT_FIRST_ACTIVE_NIC in config->flags (then the rails are the
 * NICs on the calling CPU's NUMA node). hipObjGetInfo() says what was
 * chosen and why.
 * Errors: InvalidValue (NULL config, unknown flags, gpuDevice < -1),
 *   AlreadyInitialized, NicNotFound (no GPU and no hint or flag, no
 *   matching active NIC, libibverbs missing), SizeTooLarge (the
 *   connections' message areas, a page per QP for every connection and its
 *   spare, would take the process above RLIMIT_MEMLOCK: one warning names
 *   the limit and how to raise it), RdmaError (a verbs call failed),
 *   InternalError.
 * Thread safety: Init-Serial.
 */
HIPOBJ_API hipObjError_t hipObjInit(const hipObjConfig_t *config);

/*
 * hipObjShutdown: unpublish the instance. Transfers waiting for a connection
 * fail with NotInitialized; calls in progress finish on the old instance,
 * which is released when the last of them returns. Registered buffers are
 * deregistered then.
 * Errors: NotInitialized. Thread safety: Init-Serial.
 */
HIPOBJ_API hipObjError_t hipObjShutdown(void);

/* ---- buffers ------------------------------------------------------------ */

/*
 * hipObjBufRegister: register [devPtr, devPtr+size) for transfers. Device
 * memory is registered GPU-direct (dma-buf, then plain), or else through a
 * pinned host staging buffer (one warning on stderr; HIPOBJ_REQUIRE_GPU_DIRECT
 * makes that a failure). Host memory is registered as by
 * hipObjBufRegisterHost(). The memory must stay valid until deregistered.
 * Errors: NotInitialized, InvalidValue (NULL, size 0, range not within one
 *   allocation), SizeTooLarge (size > 4 GiB, or 256 buffers registered,
 *   or pinning host memory, the buffer's or its staging buffer, would take
 *   the process above RLIMIT_MEMLOCK: one warning names the limit),
 *   BufAlreadyRegistered, NotSupported (managed memory), DmabufNotSupported
 *   (GPU-direct required and impossible), RdmaError, InternalError.
 * Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjBufRegister(void *devPtr, size_t size);

/*
 * hipObjBufRegisterHost: register host memory (pageable or pinned).
 * Errors: as hipObjBufRegister(). Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjBufRegisterHost(void *hostPtr, size_t size);

/*
 * hipObjBufDeregister: release a registration, by the address it was
 * registered at.
 * Errors: NotInitialized, InvalidValue (NULL), BufNotRegistered, Busy (a
 *   transfer or an abandoned staging copy still uses it).
 * Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjBufDeregister(void *devPtr);

/*
 * hipObjBufSync: for a staged buffer, copy [offset, offset+size) between the
 * device and the staging buffer (direction HIPOBJ_SYNC_TO_HOST before a PUT,
 * HIPOBJ_SYNC_TO_DEVICE after a GET), waiting up to HIPOBJ_STAGE_TIMEOUT_MS.
 * Does nothing, successfully, for a buffer that is not staged.
 * Errors: NotInitialized, InvalidValue (NULL, bad direction, negative offset,
 *   range outside the buffer), BufNotRegistered, Busy (an abandoned copy of
 *   this buffer still runs), RdmaError (the copy timed out: it is abandoned),
 *   InternalError (the copy failed; hipError has the runtime's code).
 * Thread safety: MT-Safe; syncs of overlapping ranges race like memcpy.
 */
HIPOBJ_API hipObjError_t hipObjBufSync(void *devPtr, size_t size,
                                       off_t offset, int direction);

/* ---- transfers through callbacks -------------------------------------- */

/*
 * hipObjGet: the server RDMA WRITEs `size` bytes of the object into the
 * registered buffer `devPtr` at byte `offset` of the buffer. Sequence:
 * lease a connection, sendRequest(token), recvReply(reply), connect to the
 * server's QP named in the reply, exchange the ready and final messages of
 * docs/protocol.md, (staged buffers) copy to the device.
 * An attempt that fails for a fabric reason (an error completion, the
 * server's RDMA failed, nothing from the server for HIPOBJ_STALL_TIMEOUT_MS)
 * is retried on a new connection, at most HIPOBJ_RETRIES times within the
 * transfer's deadline (docs/protocol.md, section 7).
 * Success means the server reported all `size` bytes written.
 * size 0 is InvalidValue.
 * Errors: NotInitialized, InvalidValue (NULL ops or callbacks, size 0,
 *   negative offset, range outside the buffer), BufNotRegistered, Busy
 *   (called from a callback of a transfer on this thread while the pool is
 *   empty, or an abandoned copy of the buffer runs), S3Error (a callback
 *   failed, or the reply was not success: 501 means the server declined RDMA
 *   and the application should fall back to plain HTTP), RdmaError (verbs
 *   failure, error completion, protocol violation, transfer timeout).
 * Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjGet(hipObjHandle_t handle, void *devPtr,
                                   size_t size, off_t offset,
                                   const hipObjOps_t *ops, void *ctx);

/* hipObjPut: as hipObjGet(), but the server RDMA READs the buffer. */
HIPOBJ_API hipObjError_t hipObjPut(hipObjHandle_t handle, const void *devPtr,
                                   size_t size, off_t offset,
                                   const hipObjOps_t *ops, void *ctx);

/*
 * hipObjSetPeerHint: say which server this thread's following transfers
 * (hipObjGet, hipObjPut, hipObjGetRdmaToken) go to: any string that names
 * it, such as the S3 endpoint "https://host:port". Connections persist
 * between transfers; the library prefers one it made for the same peer, so
 * the transfer rides it instead of connecting anew. A wrong or missing hint
 * costs only that: the server answers a proposal it does not recognise
 * with a new connection in the same round trip. NULL clears the hint.
 * Needs no init. Errors: none. Thread safety: MT-Safe (per thread).
 */
HIPOBJ_API hipObjError_t hipObjSetPeerHint(const char *peer);

/* ---- transfers the application drives --------------------------------- */

/*
 * hipObjGetRdmaToken: begin a transfer of the first `size` bytes of the
 * registered buffer `devPtr` and return its token (88 hex digits,
 * NUL-terminated) in *outToken. The token holds a leased connection until it
 * is passed to hipObjCompleteRdmaTransfer() and then to hipObjPutRdmaToken().
 * `op` is HIPOBJ_RDMA_OP_GET or HIPOBJ_RDMA_OP_PUT. For a staged buffer, call
 * hipObjBufSync(HIPOBJ_SYNC_TO_HOST) before a PUT.
 * Errors: NotInitialized, InvalidValue, BufNotRegistered, Busy (pool empty:
 *   this call never waits, or an abandoned copy runs), RdmaError,
 *   InternalError.
 * Thread safety: MT-Safe; tokens may be used from any thread, one at a time.
 */
HIPOBJ_API hipObjError_t hipObjGetRdmaToken(const void *devPtr, size_t size,
                                            int op, char **outToken);

/*
 * hipObjCompleteRdmaTransfer: finish the transfer `token` began, given the
 * server's x-amz-rdma-reply value: connect, send ready, wait for the final
 * message (HIPOBJ_TRANSFER_TIMEOUT_MS plus 100 ms per MB). For a staged
 * buffer, call hipObjBufSync(HIPOBJ_SYNC_TO_DEVICE) after a GET. A token
 * completes once.
 * Errors: InvalidValue (not a live token from hipObjGetRdmaToken, NULL
 *   reply), S3Error (reply not success: 501 means declined), RdmaError,
 *   Busy (already completing on another thread).
 * Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjCompleteRdmaTransfer(const char *token,
                                                    const char *reply,
                                                    size_t replyLen);

/*
 * hipObjRdmaTransferRetryable: after hipObjCompleteRdmaTransfer() failed on
 * `token` (before hipObjPutRdmaToken), *retryable is 1 when the failure was
 * one hipObjGet()/hipObjPut() would retry (a fabric failure before any byte
 * was reported moved: docs/protocol.md, section 7), 0 otherwise (success,
 * an S3 or protocol failure, the deadline). To retry, put the token, get a
 * new one and send the S3 request again with it; counting the attempts
 * and keeping a deadline are the application's.
 * Errors: InvalidValue (NULL, not a live token, or not completed yet).
 * Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjRdmaTransferRetryable(const char *token,
                                                     int *retryable);

/*
 * hipObjPutRdmaToken: release a token and, if its transfer was not completed,
 * abandon the transfer (its connection is retired).
 * The token pointer is the transfer's handle, and no handle is ever reused:
 * token memory is never handed out again at the same address, so a stale
 * or doubled call (Complete or Put after Put) is InvalidValue and can never
 * act on another transfer. Do not read a token after putting it: its memory
 * may be unmapped.
 * Errors: InvalidValue (NULL, or not a live token). Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjPutRdmaToken(char *token);

/* ---- information and diagnostics -------------------------------------- */

/* The GPU runtime in use (hipObjInfo_t.gpuRuntime). Values are ABI. */
typedef enum {
  hipObjGpuRuntimeNone = 0,  /* host memory only */
  hipObjGpuRuntimeHip = 1,   /* libamdhip64 */
  hipObjGpuRuntimeCuda = 2,  /* libcuda, the driver API */
  hipObjGpuRuntimeOther = 3  /* one this header does not name (test doubles) */
} hipObjGpuRuntime_t;

/* Why hipObjInit() chose its NIC (hipObjInfo_t.nicChoice). Values are ABI. */
typedef enum {
  hipObjNicChoiceNone = 0,         /* no instance */
  hipObjNicChoiceClosestToGpu = 1, /* the GPU's first rail (rails[0]):
                                      of its near set, or (nicHint) the
                                      listed active NIC whose PCI bus id is
                                      closest to the GPU's, or (PCI tree
                                      unknown) the active NIC whose bus id
                                      is */
  hipObjNicChoiceHint = 2,         /* the first name of nicHint, as given: no
                                      GPU bus id, or no allowed NIC with one */
  hipObjNicChoiceFirstActive = 3   /* HIPOBJ_INIT_FIRST_ACTIVE_NIC: the first
                                      NIC by name with an active port on
                                      the calling CPU's NUMA node, or of
                                      all when none is known there */
} hipObjNicChoice_t;

/* The GID's type (hipObjInfo_t.gidType), as sysfs reports it. ABI. */
typedef enum {
  hipObjGidUnknown = 0,
  hipObjGidIb = 1,      /* an InfiniBand port */
  hipObjGidRoceV1 = 2,
  hipObjGidRoceV2 = 3
} hipObjGidType_t;

/* hipObjInfo_t.regModes: the ways hipObjBufRegister() registers memory. The
 * device-memory bits name the paths it will try, in this order; whether one
 * works for a given buffer is known only by trying (hipObjBufRegister). */
#define HIPOBJ_REG_HOST 0x1u   /* host memory, plain MR (any instance) */
#define HIPOBJ_REG_DMABUF 0x2u /* device memory, dma-buf MR: a GPU,
                                  HIPOBJ_DMABUF on, ibv_reg_dmabuf_mr found */
#define HIPOBJ_REG_PLAIN 0x4u  /* device memory, plain MR (peer memory) */
#define HIPOBJ_REG_STAGED 0x8u /* device memory through pinned host memory:
                                  a GPU, HIPOBJ_REQUIRE_GPU_DIRECT off */

/* What a token grants the server (hipObjInfo_t.tokenScope). Values are ABI. */
typedef enum {
  hipObjTokenScopeNone = 0,   /* no instance */
  hipObjTokenScopeWindow = 1, /* a type-2 memory window per transfer: exactly
                                 the transfer's range and direction, until
                                 it ends (the NIC enforces it) */
  hipObjTokenScopeBuffer = 2  /* the buffer's MR: the whole registered
                                 buffer, both ways, while it is registered
                                 (the NIC cannot bind windows, or
                                 HIPOBJ_SCOPED_TOKENS is off) */
} hipObjTokenScope_t;

#define HIPOBJ_INFO_MAX_ERRORS 32 /* hipObjInfo_t.failures[] entries */

/* A NIC's PCIe distance from the memory that moves (hipObjRailInfo_t.
 * pathClass), nearest first. From a GPU: by the two devices' places in the
 * PCI tree and their NUMA nodes. From host memory: hipObjPathNumaNode for a
 * NIC on the calling CPU's node, hipObjPathOther for another. Values are
 * ABI. */
typedef enum {
  hipObjPathUnknown = 0,    /* a place not known (rxe, no PCI device) */
  hipObjPathSameSwitch = 1, /* below the same PCIe switch */
  hipObjPathSwitches = 2,   /* through several switches, not the root port */
  hipObjPathRootPort = 3,   /* through one host bridge's root complex */
  hipObjPathNumaNode = 4,   /* another host bridge of the same NUMA node */
  hipObjPathOther = 5       /* another NUMA node, or the nodes unknown */
} hipObjPathClass_t;

/* Why a NIC is a rail (hipObjRailInfo_t.why). Values are ABI. */
typedef enum {
  hipObjRailNone = 0,
  hipObjRailNearGpu = 1,       /* in the GPU's near set: the smallest path
                                  class, then the fastest link; with G GPUs
                                  sharing L such NICs, ceil(L/G) of them */
  hipObjRailNumaLocal = 2,     /* host memory: on the calling CPU's NUMA
                                  node, the fastest link */
  hipObjRailHint = 3,          /* named by nicHint (HIPOBJ_NIC) */
  hipObjRailClosestBusId = 4,  /* no place in the PCI tree known: the NIC
                                  whose bus id is closest to the GPU's */
  hipObjRailFirstActive = 5    /* HIPOBJ_INIT_FIRST_ACTIVE_NIC, and no NIC
                                  known on the CPU's NUMA node */
} hipObjRailWhy_t;

#define HIPOBJ_INFO_MAX_RAILS 16 /* hipObjInfo_t.rails[] entries */

/* A rail's state (hipObjRailStats_t.state). Values are ABI. */
typedef enum {
  hipObjRailNotOpen = 0, /* no such rail, or its NIC did not open */
  hipObjRailUp = 1,      /* open: transfers are placed on it */
  hipObjRailDown = 2     /* marked after a transport failure: no transfer
                            is placed on it while another rail is up, but
                            one probe each HIPOBJ_FAILBACK_MS */
} hipObjRailState_t;

/* One rail's counters (hipObjInfo_t.railStats, beside rails[]). */
typedef struct {
  uint64_t bytes;     /* moved by successful transfers placed on it */
  uint64_t transfers; /* attempts placed on it (a retry is one more) */
  uint64_t failures;  /* of those, failed (or a token put back unused) */
  uint64_t marksDown; /* times marked down */
  uint32_t inFlight;  /* placed on it now */
  uint32_t state;     /* hipObjRailState_t */
} hipObjRailStats_t;

/* One rail (hipObjInfo_t.rails). */
typedef struct {
  char name[64];         /* "mlx5_0" */
  char busId[32];        /* "" for a virtual device (rxe) or unknown */
  int32_t numaNode;      /* -1 unknown */
  int32_t pathClass;     /* hipObjPathClass_t */
  int32_t why;           /* hipObjRailWhy_t */
  uint32_t rateMbps;     /* the active port's link rate, 0 unknown */
} hipObjRailInfo_t;

/*
 * What hipObjGetInfo() reports. ABI rules (as Windows' cbSize and
 * curl_easy_getinfo): `size` comes first and the caller sets it to
 * sizeof(hipObjInfo_t) as it was compiled; the library writes the first
 * min(size, its own sizeof(hipObjInfo_t)) bytes and sets `size` to that.
 * Fields are only ever appended, never moved, resized or removed, so a
 * program built against an older header keeps working with a newer library
 * and the other way round: a field that ends beyond the returned `size` was
 * not written. Strings are NUL-terminated. Counters count since
 * hipObjInit(); a shutdown discards them with the instance.
 */
typedef struct {
  uint32_t size;         /* in: sizeof(hipObjInfo_t); out: bytes written */
  uint32_t initialized;  /* 1: an instance is up; 0: only the version */
  uint32_t versionMajor; /* the library's, as hipObjGetVersion() */
  uint32_t versionMinor;
  uint32_t versionPatch;
  /* The GPU */
  int32_t gpuRuntime;    /* hipObjGpuRuntime_t */
  int32_t gpuDevice;     /* the ordinal in use, -1 for none */
  char gpuBusId[32];     /* "0000:c1:00.0"; "" without a GPU or unknown */
  /* The NIC, port and GID, and why */
  char nicName[64];      /* "mlx5_0" */
  char nicBusId[32];     /* "" for a virtual device (rxe) or unknown */
  int32_t nicNumaNode;   /* -1 unknown */
  int32_t nicChoice;     /* hipObjNicChoice_t */
  uint32_t port;         /* the first active port */
  int32_t gidIndex;      /* the GID in use: RoCE v2 IPv4-mapped preferred */
  uint8_t gid[16];       /* network byte order */
  int32_t gidType;       /* hipObjGidType_t */
  uint32_t regModes;     /* HIPOBJ_REG_* bits */
  uint32_t maxTransfers; /* connections per rail (HIPOBJ_MAX_TRANSFERS) */
  /* Counters: hipObjGet(), hipObjPut() and hipObjCompleteRdmaTransfer()
   * calls that found an instance, counted when they return. transfers ==
   * transfersSucceeded + the sum of failures[]. */
  uint64_t transfers;
  uint64_t transfersSucceeded;
  uint64_t bytesGet;     /* moved by successful GETs (into buffers) */
  uint64_t bytesPut;     /* moved by successful PUTs (out of buffers) */
  uint64_t failures[HIPOBJ_INFO_MAX_ERRORS]; /* by hipObjOpError_t; codes
                                                from 31 count in [31] */
  /* Connections (docs/protocol.md, section 5), from offset 488. */
  uint64_t connectionsMade;   /* new connections */
  uint64_t connectionsReused; /* transfers that rode an existing one */
  uint64_t retiredFailure;    /* connections retired after a failure */
  uint64_t retiredIdle;       /* ... idle longer than HIPOBJ_IDLE_TIMEOUT_MS */
  uint64_t retiredEvicted;    /* ... to make room for another peer's */
  uint64_t retiredReplaced;   /* ... the server did not recognise them */
  uint64_t retiredOneShot;    /* ... a version-1 server's, after one use */
  uint64_t qpTransitions;     /* QP state changes made by this instance */
  uint32_t connectionsLive;   /* connected now */
  uint32_t connectionsIdle;   /* connected and not leased */
  /* Token scope (docs/protocol.md, section 2), from offset 560. */
  uint32_t tokenScope;        /* hipObjTokenScope_t */
  uint32_t waitTimeoutMs;     /* a transfer's wait for a connection at most
                                 (HIPOBJ_WAIT_TIMEOUT_MS) */
  uint64_t windowsBound;      /* memory windows bound for transfers */
  /* Rails (docs/architecture.md, "Rails"), from offset 576: the NICs the
   * instance may move bytes over, rails[0] being nicName. */
  uint32_t railCount;         /* rails[] entries filled, 1 or more */
  uint32_t railsInUse;        /* rails open, each with its own connections:
                                 transfers are placed on them */
  uint32_t railNear;          /* L: NICs in the near set (the GPU's, or the
                                 CPU's node's); 0 when not chosen by it */
  uint32_t railGpus;          /* G: the host's GPUs sharing that near set */
  uint32_t railGpuIndex;      /* this GPU's index among them, by bus id */
  int32_t railPathClass;      /* hipObjPathClass_t of the near set */
  hipObjRailInfo_t rails[HIPOBJ_INFO_MAX_RAILS];
  /* Retries inside the library (docs/protocol.md, section 7), from offset
   * 2392: a hipObjGet()/hipObjPut() that failed for a fabric reason is
   * sent again on a new connection, at most HIPOBJ_RETRIES times, within
   * its deadline. Counted per retry, by cause. */
  uint64_t retriesFabric;     /* an error completion (the fabric's retries
                                 exhausted, a flushed work request) */
  uint64_t retriesServerRdma; /* final said the server's RDMA failed */
  uint64_t retriesStalled;    /* a GET: nothing from the server for
                                 HIPOBJ_STALL_TIMEOUT_MS */
  uint64_t retriesKeptBroken; /* a kept connection failed before the server
                                 had ready */
  uint64_t keptBroken;        /* kept connections found in error before a
                                 transfer and replaced in the same call */
  uint32_t retries;           /* HIPOBJ_RETRIES */
  uint32_t stallTimeoutMs;    /* HIPOBJ_STALL_TIMEOUT_MS */
  /* Data first (docs/protocol.md, section 5, version 3), from offset
   * 2440: on a kept connection the payload moves before the server's
   * answer, which carries the outcome. */
  uint64_t transfersDataFirst; /* transfers that ended so */
  uint32_t dataFirst;          /* HIPOBJ_DATA_FIRST (1 on) */
  uint32_t probeIntervalMs;    /* HIPOBJ_PROBE_INTERVAL_MS */
  /* Liveness probes (docs/protocol.md, section 7), from offset 2456:
   * zero-length RDMA WRITEs sent while a final is awaited, and those that
   * failed (each a server whose side of the connection was gone, found
   * before the deadline). */
  uint64_t probesSent;
  uint64_t probesFailed;
  /* Per rail (docs/architecture.md, "Rails"), from offset 2472:
   * railStats[i] is rails[i]'s. The connection, window and probe counters
   * above are the sums over the rails. */
  hipObjRailStats_t railStats[HIPOBJ_INFO_MAX_RAILS];
  /* The deadline that follows progress (docs/protocol.md, section 7),
   * from offset 3112: a transfer still moving at its deadline (its
   * receive PSN moved since the deadline was set) gets one budget more,
   * up to HIPOBJ_TRANSFER_MAX_MS from its start. */
  uint64_t deadlinesMoved;    /* times a moving transfer's deadline moved */
  uint32_t transferTimeoutMs; /* HIPOBJ_TRANSFER_TIMEOUT_MS */
  uint32_t transferMaxMs;     /* HIPOBJ_TRANSFER_MAX_MS (0: four budgets) */
  /* New fields are appended here. */
} hipObjInfo_t;

/*
 * hipObjGetInfo: what the library chose and counted: version, GPU runtime
 * and device, NIC, port, GID and why, registration modes, transfer
 * counters. Set info->size first (memset the struct to 0 and set size to
 * sizeof *info). Without an instance (before hipObjInit, after
 * hipObjShutdown) it succeeds with `initialized` 0, the version filled,
 * gpuDevice, nicNumaNode and gidIndex -1 and every other field 0. The
 * counters are read one by one, not as one snapshot.
 * Errors: InvalidValue (NULL, size smaller than this header's first
 *   hipObjInfo_t, 488 bytes). Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjGetInfo(hipObjInfo_t *info);

/*
 * hipObjGetEnvVar: the index-th environment variable hipObjInit() reads
 * (index from 0 up), its name ("HIPOBJ_MAX_TRANSFERS") and its default as
 * text ("16 connections"), both static strings: what a tool lists without
 * copying the library's table. Pure: reads no environment, needs no
 * instance. Errors: InvalidValue (NULL name or defaultText, or index past
 * the last variable: the end of the list). Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjGetEnvVar(uint32_t index, const char **name,
                                         const char **defaultText);

/* Log levels (hipObjLogCallback_t). Values are ABI. */
typedef enum {
  hipObjLogWarning = 1, /* an event no return code can carry */
  hipObjLogDebug = 2    /* only with HIPOBJ_RDMA_DEBUG */
} hipObjLogLevel_t;

/* A log line, without the "hipobj: " prefix or a newline. It is valid only
 * during the call. */
typedef void (*hipObjLogCallback_t)(void *ctx, hipObjLogLevel_t level,
                                    const char *message);

/*
 * hipObjSetLogCallback: send the library's warnings and debug lines to
 * fn(ctx, level, message) instead of stderr; fn NULL restores stderr, where
 * each line reads "hipobj: warning: ..." or "hipobj: debug: ...". The
 * callback runs on the thread that logs, with no lock of the logger held,
 * possibly while hipObjInit() or another call is in progress on that
 * thread: it should only copy or route the message, and must not call
 * hipObjInit() or hipObjShutdown(). It may be called from several threads
 * at once. hipObjSetLogCallback returns once every call of the previous
 * callback has returned, so the previous ctx may then be freed. Called
 * from inside a log callback it returns Busy. Needs no hipObjInit(); the
 * setting outlives hipObjShutdown().
 * Errors: Busy. Thread safety: MT-Safe.
 */
HIPOBJ_API hipObjError_t hipObjSetLogCallback(hipObjLogCallback_t fn,
                                              void *ctx);

/* ---- pure helpers ------------------------------------------------------- */

/*
 * hipObjParseRdmaReply: parse an x-amz-rdma-reply value strictly (grammar in
 * docs/protocol.md) and write its HTTP-style status (ok is 200) to *httpCode.
 * `err` parses and yields 500. *httpCode is written only on success.
 * Errors: InvalidValue (NULL arguments or a malformed reply). Thread: Pure.
 */
HIPOBJ_API hipObjError_t hipObjParseRdmaReply(const char *reply,
                                              size_t replyLen, int *httpCode);

/*
 * hipObjTokenClientNic: write the dotted IPv4 address of the token's GID to
 * nicIp when the GID is IPv4-mapped, else the empty string (a success).
 * nicIpLen of 16 always suffices. Errors: InvalidValue (NULL, malformed token,
 * buffer too small). Thread safety: Pure.
 */
HIPOBJ_API hipObjError_t hipObjTokenClientNic(const char *token, char *nicIp,
                                              size_t nicIpLen);

/* hipObjGetErrorString: a constant string; never NULL. Thread: Pure. */
HIPOBJ_API const char *hipObjGetErrorString(hipObjOpError_t err);

/* hipObjGetVersionString: a constant "major.minor.patch". Thread: Pure. */
HIPOBJ_API const char *hipObjGetVersionString(void);

/* hipObjGetVersion: any argument may be NULL. Always succeeds. Thread: Pure. */
HIPOBJ_API hipObjError_t hipObjGetVersion(unsigned *major, unsigned *minor,
                                          unsigned *patch);

#ifdef __cplusplus
}
#endif

#endif /* HIPOBJ_H */
