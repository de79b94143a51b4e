/* SPDX-License-Identifier: MIT */
/*
 * hipobj_server.h: the server side of the hipObject RC protocol
 * (docs/protocol.md) for S3 servers that want to move object payloads by
 * one-sided RDMA. Link with -lhipobj_server (pkg-config hipobj_server,
 * CMake hipobj::hipobj_server). Reference: docs/reference/hipobj_server.md;
 * where each call goes in an S3 server: docs/integrating-a-server.md.
 *
 * The library does not speak HTTP. The S3 server authenticates a request
 * as usual, then hands its x-amz-rdma-token to hipObjServerStart() with the
 * operation and the byte count; it answers the HTTP request at once with
 * the x-amz-rdma-reply and x-amz-rdma-bytes-transferred values it gets
 * back, and the payload moves by RDMA on the library's threads once the
 * client has read that answer. The bytes come from (GET) or go to (PUT,
 * UploadPart) registered memory or the caller's read/write callbacks.
 *
 * Errors: every function that can fail returns hipObjServerStatus_t; its
 * outputs are written only on success (hipObjServerStart also writes the
 * answer for its three "answer the client" results). Nothing is printed
 * on success; warnings go to stderr with the prefix "hipobj: ", or to
 * hipObjServerSetLogCallback()'s callback.
 *
 * Thread safety classes used below:
 *   MT-Safe    any thread, concurrently with any call but hipObjServerClose
 *              of the same server;
 *   Exclusive  no other call on the same object may run or start.
 * Callbacks run on the library's transfer threads, never with a library
 * lock held; which functions they may call is said with each.
 *
 * This header compiles alone as C11 and C++11.
 */
#ifndef HIPOBJ_SERVER_H
#define HIPOBJ_SERVER_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define HIPOBJ_SERVER_API __attribute__((visibility("default")))
#else
#define HIPOBJ_SERVER_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define HIPOBJ_SERVER_VERSION_MAJOR 0
#define HIPOBJ_SERVER_VERSION_MINOR 1
#define HIPOBJ_SERVER_VERSION_PATCH 0

/* The x-amz-rdma-reply value with its NUL: "200:" and 88 hex digits. */
#define HIPOBJ_SERVER_REPLY_MAX 96

/* Results. Values are fixed; new ones are appended. */
typedef enum hipObjServerStatus {
  hipObjServerSuccess = 0,
  hipObjServerInvalidValue = 1,  /* an argument is wrong: nothing happened */
  hipObjServerNoDevice = 2,      /* no usable RDMA device (or no libibverbs) */
  hipObjServerRdmaError = 3,     /* the device or a transfer's RDMA failed */
  hipObjServerNoMemory = 4,
  hipObjServerBadToken = 5,      /* answer 400 InvalidArgument, no reply */
  hipObjServerDeclined = 6,      /* answer 501 with reply "501": the client
                                    falls back to plain HTTP */
  hipObjServerBusy = 7,          /* answer 503 with reply "503" (start), or
                                    the object is in use (deregister) */
  hipObjServerPending = 8,       /* the transfer has not ended yet */
  hipObjServerCancelled = 9,     /* ended by hipObjServerTransferCancel() */
  hipObjServerTimedOut = 10,     /* the client never sent ready in time */
  hipObjServerIoError = 11,      /* a read, write or commit callback failed */
  hipObjServerProtocolError = 12,/* the client's ready disagreed (cookie,
                                    byte count or operation) */
  hipObjServerNotSupported = 13  /* a struct field this library lacks */
} hipObjServerStatus_t;

/* The operation a request asks for (the values of hipobj.h's
 * HIPOBJ_RDMA_OP_GET and HIPOBJ_RDMA_OP_PUT). */
typedef enum hipObjServerOp {
  hipObjServerOpPut = 0, /* PutObject, UploadPart: the server RDMA READs
                            the client's buffer */
  hipObjServerOpGet = 1  /* GetObject: the server RDMA WRITEs it */
} hipObjServerOp_t;

typedef struct hipObjServer hipObjServer_t;
typedef struct hipObjServerMem hipObjServerMem_t;
typedef struct hipObjServerTransfer hipObjServerTransfer_t;

/* hipObjServerConfig_t: at most this many NICs, each name shorter than
 * HIPOBJ_SERVER_NIC_NAME_MAX bytes (with its NUL, as libibverbs'). */
#define HIPOBJ_SERVER_MAX_NICS 64
#define HIPOBJ_SERVER_NIC_NAME_MAX 64

/* hipObjServerConfig_t.flags */
#define HIPOBJ_SERVER_ALL_ACTIVE_NICS 0x1u /* with nicCount 0: every NIC
                                              with an active port */
#define HIPOBJ_SERVER_DATA_FIRST 0x2u      /* answer after the payload when
                                              the client's token asks (a
                                              kept connection: protocol
                                              version 3): hipObjServerStart
                                              then returns once it moved */
#define HIPOBJ_SERVER_NO_PACING 0x4u       /* keep the whole pipeline in
                                              flight on a software device
                                              whatever its retry counter
                                              says (default: paced; docs/
                                              architecture.md, "Pacing") */

/* Size-first: set `size` to sizeof(hipObjServerConfig_t); zero means the
 * default for every other field. Fields are only appended. */
typedef struct hipObjServerConfig {
  uint32_t size;
  uint32_t flags;           /* HIPOBJ_SERVER_* */
  const char *const *nics;  /* nicCount device names ("mlx5_0"), each
                               once: a rail each */
  uint32_t nicCount;        /* 0: the first NIC with an active port, or
                               all of them with ALL_ACTIVE_NICS; at most
                               HIPOBJ_SERVER_MAX_NICS */
  uint32_t maxTransfers;    /* concurrent transfers per NIC (16); more
                               wait in the queue (maxQueued), then get
                               Busy */
  uint32_t maxConnections;  /* client connections kept per NIC (1024) */
  uint32_t idleTimeoutMs;   /* close connections idle this long (60000) */
  uint32_t readyTimeoutMs;  /* wait for the client's ready (10000) */
  uint32_t rdmaTimeoutMs;   /* wait for one RDMA completion (10000) */
  uint32_t depth;           /* work requests in flight per transfer (4,
                               at most 32) */
  uint32_t graceMs;         /* keep closed QPs this long (2000) */
  uint64_t chunkSize;       /* bytes per work request (1 MiB; 4 KiB to
                               1 GiB) */
  uint32_t faultSkipFinal;  /* testing clients only: the next N transfers
                               move their bytes but never send final */
  uint32_t reserved;        /* 0 */
  uint32_t maxQueued;       /* per NIC, starts that wait for a free
                               transfer slot when all maxTransfers are
                               busy (4 x maxTransfers); beyond: Busy */
  uint32_t queueWaitMs;     /* how long one waits (10000); then Busy */
  uint32_t movingMax;       /* per NIC, transfers that move at once, at
                               most maxTransfers; the rest wait in the
                               queue. 0: maxTransfers, and on a software
                               device (Soft-RoCE, siw) 4 per usable CPU
                               shared by the software NICs opened
                               (docs/architecture.md, "Admission") */
  uint32_t reserved2;       /* 0 */
} hipObjServerConfig_t;

/* GET: fill buf with len payload bytes starting at offset. PUT: take len
 * payload bytes starting at offset (they arrive in order, each once).
 * Return 0, or non-zero to fail the transfer (the client is told the
 * store failed). Called on a transfer thread, one call at a time per
 * transfer. */
typedef int (*hipObjServerReadFn)(void *arg, uint64_t offset, void *buf,
                                  size_t len);
typedef int (*hipObjServerWriteFn)(void *arg, uint64_t offset,
                                   const void *buf, size_t len);
/* PUT only: every byte has arrived; make the object (or part) durable and
 * visible and return 0, or non-zero if it cannot be. Runs before the
 * client is told: the client's success means the commit succeeded. */
typedef int (*hipObjServerCommitFn)(void *arg, uint64_t bytes);
/* Once per started transfer, when it has ended: status is Success,
 * Cancelled, TimedOut, IoError, ProtocolError or RdmaError; bytes the
 * payload bytes moved. The memory or callbacks of the request are no
 * longer used. May call any function of this header except
 * hipObjServerClose() and hipObjServerTransferWait() on this transfer. */
typedef void (*hipObjServerDoneFn)(hipObjServerTransfer_t *xfer,
                                   hipObjServerStatus_t status,
                                   uint64_t bytes, void *arg);

/* One request. Size-first, like the config. The payload is either in
 * registered memory (mem, memOffset) or streamed through callbacks (read
 * for a GET, write for a PUT, with ioArg), never both. */
typedef struct hipObjServerRequest {
  uint32_t size;
  uint32_t op;              /* hipObjServerOp_t */
  const char *token;        /* the x-amz-rdma-token value (not copied
                               past the call) */
  uint64_t tokenLength;     /* its length: 88 for a valid token */
  uint64_t length;          /* bytes to move: the range's length for a
                               ranged GET, the body's for a PUT; > 0 */
  hipObjServerMem_t *mem;   /* registered memory, or NULL */
  uint64_t memOffset;       /* where the payload starts in mem */
  hipObjServerReadFn read;
  hipObjServerWriteFn write;
  hipObjServerCommitFn commit; /* PUT, optional */
  void *ioArg;              /* for read, write, commit */
  hipObjServerDoneFn done;  /* optional */
  void *doneArg;
} hipObjServerRequest_t;

/* What to answer the HTTP request with. */
typedef struct hipObjServerReply {
  uint32_t httpStatus;      /* 0 on Success: the request's own status (200,
                               or 206 for a range); 400, 501 or 503 */
  uint32_t reserved;
  char rdmaReply[HIPOBJ_SERVER_REPLY_MAX]; /* x-amz-rdma-reply; "" for 400:
                                              send no such header */
  uint64_t bytesTransferred; /* x-amz-rdma-bytes-transferred (Success) */
} hipObjServerReply_t;

/* Counters, summed over the NICs. Size-first: the library writes what
 * fits in `size` and sets `size` to what it wrote. Fields are only
 * appended. */
typedef struct hipObjServerStats {
  uint32_t size;
  uint32_t nics;               /* NICs open */
  uint64_t started;            /* transfers hipObjServerStart() started */
  uint64_t completed;          /* ended with Success */
  uint64_t failed;             /* ended otherwise */
  uint64_t timedOut;           /* no ready in time (counted in failed) */
  uint64_t badCookie;          /* ready with a wrong cookie (in failed) */
  uint64_t finalFailed;        /* final not acknowledged (in failed) */
  uint64_t cancelled;          /* ended Cancelled (in failed) */
  uint64_t bytesWritten;       /* by RDMA WRITE: GETs whose payload moved */
  uint64_t bytesRead;          /* by RDMA READ: PUTs whose payload moved */
  uint64_t badTokens;          /* starts answered BadToken */
  uint64_t declined;           /* starts answered Declined */
  uint64_t busy;               /* starts answered Busy */
  uint64_t connMade;           /* new connections (docs/protocol.md, 5) */
  uint64_t connReused;         /* transfers on a kept connection */
  uint64_t retiredFailure;     /* connections closed after a failure */
  uint64_t retiredIdle;        /* idle longer than idleTimeoutMs */
  uint64_t retiredEvicted;     /* made room under maxConnections */
  uint64_t retiredStale;       /* the client reused the QP it named */
  uint64_t retiredOneShot;     /* the client will not reuse it */
  uint64_t qpTransitions;      /* QP state changes (setup only) */
  uint32_t connLive;           /* connections kept now */
  uint32_t connIdle;           /* of which idle */
  uint32_t running;            /* transfers running now */
  uint32_t maxReadsInFlight;   /* deepest PUT pipeline seen */
  uint64_t readyReclaimed;     /* with every transfer slot busy, transfers
                                  cancelled after waiting over 1 s for the
                                  client's ready, to serve a new request */
  uint64_t rdmaFailed;         /* the payload's RDMA failed after ready (an
                                  error completion: the fabric's retries
                                  exhausted; in failed): what a client's
                                  retries absorb (docs/protocol.md, 7) */
  uint64_t dataFirst;          /* transfers run before the answer
                                  (HIPOBJ_SERVER_DATA_FIRST; in started) */
  uint64_t paceShrinks;        /* software devices (Soft-RoCE): times the
                                  device's retry counter moved and the
                                  bytes a transfer keeps in flight were cut
                                  to two MTUs (docs/architecture.md,
                                  "Pacing") */
  uint64_t paceWindow;         /* the smallest such window now, bytes; 0:
                                  no NIC is paced */
  uint64_t queued;             /* starts that waited in the queue for a
                                  transfer slot (maxQueued) */
  uint64_t queueRefused;       /* starts answered Busy by a full queue or
                                  a wait that ran out (in busy) */
  uint32_t queuedNow;          /* waiting now */
  uint32_t maxQueuedSeen;      /* the most waiting at once */
  uint32_t movingMax;          /* transfers that may move at once, summed
                                  over the NICs (movingMax) */
  uint32_t reserved2;          /* 0 */
  /* Where the transfers' time went, summed in nanoseconds over the
   * transfers that ended (timeTransfers of them); what is in none of the
   * parts is the library's own bookkeeping (docs/architecture.md, "Where
   * a transfer's time goes"). */
  uint64_t timeTransfers;      /* transfers the sums below are over */
  uint64_t timeTotalNs;        /* admission plus the run (not the wait for
                                  the client's ready) */
  uint64_t timeAdmitNs;        /* the start: the token, a slot and a
                                  connection claimed (a new QP connected) */
  uint64_t timePostNs;         /* posting work requests (on Soft-RoCE the
                                  packets' work runs inside) */
  uint64_t timeWaitNs;         /* waiting for completions */
  uint64_t timeIoNs;           /* the read and write callbacks */
  uint64_t timeCommitNs;       /* the commit callback */
  uint64_t startCalls;         /* hipObjServerStart() calls that started a
                                  transfer */
  uint64_t startNs;            /* their time (data first: the whole
                                  transfer; the rest is timeTotalNs's) */
} hipObjServerStats_t;

/* Log levels. Values are fixed. */
typedef enum hipObjServerLogLevel {
  hipObjServerLogWarning = 1, /* an event no result can carry */
  hipObjServerLogDebug = 2    /* reserved */
} hipObjServerLogLevel_t;

/* A log line, without the "hipobj: " prefix or a newline; valid only
 * during the call. */
typedef void (*hipObjServerLogFn)(void *ctx, hipObjServerLogLevel_t level,
                                  const char *message);

/*
 * hipObjServerSetLogCallback: send the server library's warnings to
 * fn(ctx, level, message) instead of stderr; fn NULL restores stderr
 * ("hipobj: warning: ..."). Process-wide, for every server; needs no
 * server. The callback runs on the thread that logs (often a transfer
 * thread) with no library lock held, possibly on several threads at once.
 * Returns once every call of the previous callback has returned, so its
 * ctx may then be freed. Errors: Busy (called from a log callback),
 * NoMemory. Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerSetLogCallback(hipObjServerLogFn fn, void *ctx);

/*
 * hipObjServerGetVersion: the library's version (any output may be NULL).
 * Errors: none. Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerGetVersion(uint32_t *major, uint32_t *minor, uint32_t *patch);

/*
 * hipObjServerStatusString: a static English phrase for a status ("?" for
 * an unknown value). Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API const char *
hipObjServerStatusString(hipObjServerStatus_t status);

/*
 * hipObjServerOpen: open the NICs cfg names (cfg NULL: every default),
 * with their threads (a transfer slot registers its chunk buffers at its
 * first transfer), and return the server in *out. With several NICs (the
 * server's rails), a client asking for a new connection is served by a
 * NIC whose GID is on the client's subnet (IPv4: the same /24; IPv6: the
 * same /64), the least busy of those, then the next in turn; a kept
 * connection stays on the NIC that holds it.
 * Errors: InvalidValue (out NULL, size too small, a limit out of range,
 *   nics NULL with nicCount > 0, more than HIPOBJ_SERVER_MAX_NICS, a name
 *   empty, too long or given twice), NotSupported (bytes past this library's
 *   struct not zero), NoDevice (libibverbs missing, no such NIC, no active
 *   port), RdmaError, NoMemory.
 * Thread safety: MT-Safe (each call opens its own server).
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerOpen(const hipObjServerConfig_t *cfg, hipObjServer_t **out);

/*
 * hipObjServerClose: wait for the running transfers to end (each ends at
 * the latest at its timeouts; call hipObjServerTransferCancel() first to
 * hurry them), release memory still registered, and free the server.
 * Transfer handles not yet released stay valid for Poll, Wait and
 * Release (they have all ended). NULL is accepted.
 * Thread safety: Exclusive; never from a callback.
 */
HIPOBJ_SERVER_API void hipObjServerClose(hipObjServer_t *srv);

/*
 * hipObjServerNicCount / hipObjServerNicName: the NICs open, in the order
 * used; the name of NIC `index` (NULL past the end; valid until close).
 * Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API uint32_t hipObjServerNicCount(const hipObjServer_t *srv);
HIPOBJ_SERVER_API const char *hipObjServerNicName(const hipObjServer_t *srv,
                                                  uint32_t index);

/*
 * hipObjServerRegister: register the caller's [addr, addr + length) on
 * every NIC so that transfers can move payloads straight from or into it
 * (hipObjServerRequest_t.mem). The memory stays the caller's; it must stay
 * valid until hipObjServerDeregister().
 * hipObjServerAlloc: allocate `length` bytes (page-aligned, zeroed) and
 * register them: a pool the caller carves with memOffset; freed by
 * hipObjServerDeregister(). hipObjServerMemAddress gives its address.
 * Errors: InvalidValue (NULL, length 0), NoMemory, RdmaError.
 * Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerRegister(hipObjServer_t *srv, void *addr, uint64_t length,
                     hipObjServerMem_t **mem);
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerAlloc(hipObjServer_t *srv, uint64_t length,
                  hipObjServerMem_t **mem);
HIPOBJ_SERVER_API void *hipObjServerMemAddress(const hipObjServerMem_t *mem);
HIPOBJ_SERVER_API uint64_t hipObjServerMemLength(const hipObjServerMem_t *mem);

/*
 * hipObjServerDeregister: undo hipObjServerRegister or hipObjServerAlloc
 * (freeing allocated memory). Errors: InvalidValue (NULL), Busy (a
 * transfer still uses it, or another Deregister of it runs: nothing
 * happened), RdmaError (a device refused; the memory can no longer be
 * used by a transfer; calling again, or hipObjServerClose, retries only
 * the NICs that refused, never one twice; what no device lets go is
 * leaked, never freed under the device). Once Deregister has begun, a
 * hipObjServerStart naming the memory gets InvalidValue.
 * Thread safety: MT-Safe; concurrent with Start on the same memory.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerDeregister(hipObjServerMem_t *mem);

/*
 * hipObjServerParseToken: the byte count a client's token names (its
 * length field), for a PUT or UploadPart, whose request has no body: the
 * size to check against the server's limits and to pass as the request's
 * length. Needs no server. Errors: InvalidValue (NULL), BadToken
 * (malformed: answer 400), Declined (well-formed but not an RC token, or
 * another protocol's token such as NVIDIA cuObject's descriptor, with or
 * without its ":ADDR:SIZE": answer 501, so that its client falls back to
 * plain HTTP). Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerParseToken(const char *token, uint64_t tokenLength,
                       uint64_t *length);

/*
 * hipObjServerStart: take a request's token and, if it can be served,
 * start its transfer and say what to answer. Call it after the request is
 * authenticated and authorised, and after the object (GET) or the upload
 * (PUT) is known to be servable: nothing moves until the client, having
 * read the answer, sends ready, or, with HIPOBJ_SERVER_DATA_FIRST and a
 * token that asks for it on a connection the server keeps, before the
 * call returns: the transfer then runs on the calling thread, and has
 * ended (req->done called) when the call returns.
 * On Success: answer the HTTP request now with its own status (or, when
 * reply->httpStatus is not 0, a data-first transfer that failed: with
 * that status, 500, and an error body), an empty body,
 * x-amz-rdma-reply: reply->rdmaReply and
 * x-amz-rdma-bytes-transferred: reply->bytesTransferred; *xfer (if xfer
 * is not NULL) is the transfer; req->done (if set) will be called once.
 * On BadToken, Declined, Busy: answer reply->httpStatus with reply->
 * rdmaReply as x-amz-rdma-reply unless it is empty; nothing started.
 * Errors: InvalidValue (NULL srv, req or reply; req->size too small;
 *   length 0; op unknown; neither or both of mem and callbacks; the
 *   callback the op needs missing; [memOffset, memOffset + length) outside
 *   mem; mem registered on another server, or being deregistered),
 *   NotSupported (bytes past this library's struct not zero),
 *   BadToken, Declined (the token is not an RC token or is another
 *   protocol's, as for hipObjServerParseToken; its length differs
 *   from req->length, or the client cannot be reached), Busy (every
 *   transfer slot of every NIC is in use, or the server is closing),
 *   NoMemory.
 * Thread safety: MT-Safe; may be called from a done callback.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerStart(hipObjServer_t *srv, const hipObjServerRequest_t *req,
                  hipObjServerReply_t *reply, hipObjServerTransfer_t **xfer);

/*
 * hipObjServerTransferPoll: Pending while the transfer runs, then the
 * status its done callback gets, once that callback has returned; *bytes
 * (may be NULL) the bytes moved, written only when it has ended.
 * Errors: InvalidValue (NULL). Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerTransferPoll(const hipObjServerTransfer_t *xfer, uint64_t *bytes);

/*
 * hipObjServerTransferWait: as Poll, but wait up to timeoutMs for the end
 * (0: do not wait; UINT32_MAX: without limit). Pending if it has not ended.
 * Thread safety: MT-Safe; not from this transfer's done callback.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerTransferWait(const hipObjServerTransfer_t *xfer,
                         uint32_t timeoutMs, uint64_t *bytes);

/*
 * hipObjServerTransferCancel: ask the transfer to stop. One moving data
 * stops before its next chunk; one still waiting for the client's ready
 * stops as soon as ready arrives, or at readyTimeoutMs. The client is
 * told the transfer failed (never success), nothing is committed, and the
 * transfer ends Cancelled, unless it had already ended. Returns at once.
 * Errors: InvalidValue (NULL). Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerTransferCancel(hipObjServerTransfer_t *xfer);

/*
 * hipObjServerTransferRelease: the caller is done with the handle. A
 * transfer still running goes on (its done callback is still called);
 * the handle is freed when both have let go. NULL is accepted.
 * Thread safety: MT-Safe, once per handle; may be called from its own
 * done callback.
 */
HIPOBJ_SERVER_API void hipObjServerTransferRelease(hipObjServerTransfer_t *xfer);

/*
 * hipObjServerGetStats: the counters of every NIC, summed, into *stats
 * (set stats->size first). Errors: InvalidValue (NULL, size smaller than
 * the first two fields). Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerGetStats(hipObjServer_t *srv, hipObjServerStats_t *stats);

/*
 * hipObjServerGetNicStats: the counters of NIC `index` alone (the order of
 * hipObjServerNicName: a rail), as hipObjServerGetStats writes them, with
 * nics 1; badTokens, declined, busy and cancelled, counted by the server
 * before a NIC has the token or apart from it, are 0. Errors:
 * InvalidValue (NULL, size smaller than the first two fields, index not
 * below hipObjServerNicCount()). Thread safety: MT-Safe.
 */
HIPOBJ_SERVER_API hipObjServerStatus_t
hipObjServerGetNicStats(hipObjServer_t *srv, uint32_t index,
                        hipObjServerStats_t *stats);

#ifdef __cplusplus
}
#endif

#endif
