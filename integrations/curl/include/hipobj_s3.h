/* SPDX-License-Identifier: MIT */
/*
 * hipobj_s3.h - S3 objects into and out of GPU or host memory: hipObject's
 * RDMA path with an explicit plain-HTTP fallback, on libcurl.
 *
 * libhipobj does not speak HTTP; this library (libhipobj_s3) is the S3 side
 * most applications need: path-style S3 requests signed with AWS Signature
 * V4 (the x-amz-rdma-token header included), the x-amz-rdma-reply header
 * handed back to hipObject, the HTTP status and S3 error bodies checked.
 *
 *   hipObjS3Client_t *c;
 *   hipObjS3Result_t r;
 *   hipObjS3ClientCreate(NULL, &c, NULL);         // AWS_* environment
 *   hipObjS3GetObject(c, "bucket", "key", buf, size, hipObjS3MemDevice, &r);
 *   printf("%s\n", r.fellBack ? r.message : "via RDMA");
 *   hipObjS3ClientDestroy(c);
 *
 * Paths. A transfer moves by RDMA when hipObject is initialised and the
 * server accepts the token. Otherwise it moves by plain HTTP, and the result
 * says so (fellBack, fallbackReason) and the client's counters count it:
 *   - no RDMA: hipObjInit() failed (no RDMA device, no libibverbs), or the
 *     client was created with HIPOBJ_S3_NO_RDMA;
 *   - declined: the server answered 501 (x-amz-rdma-reply: 501). A GET
 *     repeats as a plain GET, a PUT as a PUT with the body.
 * HIPOBJ_S3_REQUIRE_RDMA turns both into errors. Nothing else falls back: a
 * reply that is missing, malformed or names no peer, or a failed RDMA
 * transfer, is an error (hipObjS3ProtocolError, hipObjS3RdmaFailed).
 *
 * Device memory. The fallback never reads or writes device memory with the
 * CPU: it moves the bytes through a host bounce buffer (pinned, when the
 * application gives allocHost) and the application's copy functions
 * (hipObjS3DeviceOps_t). Without them, a fallback into or out of device
 * memory fails with hipObjS3NoDeviceOps. On the RDMA path the library
 * registers device memory as hipObjBufRegister() does (GPU-direct, else
 * staged through its own pinned buffer).
 *
 * Large objects. An object larger than the part size (default 1 GiB, at
 * most HIPOBJ_MAX_BUFFER_SIZE) moves as ranges (GET) or as a multipart
 * upload (PUT), `concurrency` parts at a time, each on its own thread and
 * connection.
 *
 * Buffers. A GET or PUT registers the buffer with hipObject for the
 * duration of the call (in windows of at most 4 GiB) unless the application
 * has registered it already at the same address, and deregisters what it
 * registered before returning. A buffer registered by the application must
 * not be deregistered during the call.
 *
 * Thread safety. A client is MT-Safe: any number of threads may run
 * transfers on it at once. hipObjS3ClientCreate() and
 * hipObjS3ClientDestroy() are not: create before, destroy after all other
 * use; the first create in a process calls curl_global_init(). Callbacks
 * (device copies, progress) are called from the calling thread and from
 * worker threads, several at once: they must be thread-safe.
 *
 * Ownership. Strings passed in are copied; nothing returned needs freeing
 * except the client and calls, by their destroy functions.
 *
 * This header compiles as C11 and C++11.
 */
#ifndef HIPOBJ_S3_H
#define HIPOBJ_S3_H

#include <stddef.h>
#include <stdint.h>

#include <hipobj.h>

#if defined(__GNUC__)
#define HIPOBJ_S3_API __attribute__((visibility("default")))
#else
#define HIPOBJ_S3_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Outcomes. The values are ABI: new codes are appended. */
typedef enum {
  hipObjS3Ok = 0,
  hipObjS3InvalidArgument = 1,  /* a bad argument, URL or configuration */
  hipObjS3OutOfMemory = 2,
  hipObjS3ConnectFailed = 3,    /* the endpoint could not be reached */
  hipObjS3NoSuchBucket = 4,
  hipObjS3NoSuchKey = 5,
  hipObjS3AccessDenied = 6,     /* 403: credentials, signature, permission */
  hipObjS3InvalidRange = 7,     /* the range lies outside the object */
  hipObjS3BufferTooSmall = 8,   /* the object is larger than the buffer */
  hipObjS3HttpError = 9,        /* any other HTTP or S3 error */
  hipObjS3ProtocolError = 10,   /* an answer breaking S3 or docs/protocol.md */
  hipObjS3RdmaUnavailable = 11, /* REQUIRE_RDMA, and hipObject is not usable */
  hipObjS3RdmaDeclined = 12,    /* REQUIRE_RDMA, and the server answered 501 */
  hipObjS3RdmaFailed = 13,      /* registration or an RDMA transfer failed */
  hipObjS3NoDeviceOps = 14,     /* HTTP to device memory needs deviceOps */
  hipObjS3DeviceCopyFailed = 15 /* a deviceOps function returned non-zero */
} hipObjS3Status_t;

/* Where a buffer lives. */
typedef enum {
  hipObjS3MemHost = 0,  /* host memory (pageable or pinned) */
  hipObjS3MemDevice = 1 /* GPU memory: never touched by the CPU */
} hipObjS3MemKind_t;

/* Why bytes moved by plain HTTP. */
typedef enum {
  hipObjS3FallbackNone = 0,     /* everything moved by RDMA */
  hipObjS3FallbackDisabled = 1, /* the client has HIPOBJ_S3_NO_RDMA */
  hipObjS3FallbackNoRdma = 2,   /* hipObjInit() failed: see rdmaError */
  hipObjS3FallbackDeclined = 3  /* the server answered 501 */
} hipObjS3Fallback_t;

/* Flags of hipObjS3Config_t. */
#define HIPOBJ_S3_NO_RDMA 0x1u      /* plain HTTP only; hipObjInit not called */
#define HIPOBJ_S3_REQUIRE_RDMA 0x2u /* no fallback: fail instead */
#define HIPOBJ_S3_ANONYMOUS 0x4u    /* never sign, whatever keys are found */
#define HIPOBJ_S3_NO_ENV 0x8u       /* ignore the AWS_* environment */
/* hipObjInit() with HIPOBJ_INIT_FIRST_ACTIVE_NIC: where no NIC is named
 * (nicHint, HIPOBJ_NIC) and none is chosen by its distance from a GPU
 * (a host without one), the first RDMA device with an active port. */
#define HIPOBJ_S3_FIRST_ACTIVE_NIC 0x10u

#define HIPOBJ_S3_DEFAULT_PART_SIZE ((uint64_t)1 << 30)
#define HIPOBJ_S3_DEFAULT_CONCURRENCY 4u
#define HIPOBJ_S3_MAX_CONCURRENCY 64u
#define HIPOBJ_S3_MESSAGE_LEN 512
#define HIPOBJ_S3_ETAG_LEN 80

/*
 * Copies for the plain-HTTP path of device memory. Each returns 0 on
 * success. dst/src ranges never exceed the buffer given to the transfer.
 * allocHost/freeHost are optional (both or neither): pinned host memory for
 * the bounce buffers, which makes the copies faster; without them the
 * bounce buffers come from malloc().
 */
typedef struct {
  int (*copyToDevice)(void *ctx, void *devDst, const void *hostSrc, size_t n);
  int (*copyToHost)(void *ctx, void *hostDst, const void *devSrc, size_t n);
  void *(*allocHost)(void *ctx, size_t n);
  void (*freeHost)(void *ctx, void *p);
  void *ctx;
} hipObjS3DeviceOps_t;

/*
 * Progress: `done` of `total` payload bytes of one GetObject or PutObject
 * have moved. Called at most every 100 ms per thread and at the end, from
 * any thread of the transfer. Return 0 to go on; non-zero cancels the
 * transfer (hipObjS3HttpError, message "cancelled").
 */
typedef int (*hipObjS3Progress_t)(void *ctx, uint64_t done, uint64_t total);

/*
 * Client configuration. Start from hipObjS3ConfigInit(); NULL strings mean
 * "from the environment" (unless HIPOBJ_S3_NO_ENV), else the default:
 *   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else
 *                https://s3.REGION.amazonaws.com. Path-style URLs:
 *                ENDPOINT/BUCKET/KEY.
 *   region       AWS_REGION, AWS_DEFAULT_REGION, else us-east-1
 *   accessKey    AWS_ACCESS_KEY_ID; secretKey AWS_SECRET_ACCESS_KEY;
 *   sessionToken AWS_SESSION_TOKEN. Requests are signed (SigV4) when both
 *                keys are known, and sent unsigned otherwise.
 *   nicHint      HIPOBJ_NIC (a host without a GPU needs one for RDMA)
 */
typedef struct {
  const char *endpoint;
  const char *region;
  const char *accessKey;
  const char *secretKey;
  const char *sessionToken;
  uint64_t partSize;    /* bytes per range or part; 0: the default */
  unsigned concurrency; /* parts in flight; 0: the default */
  uint32_t flags;       /* HIPOBJ_S3_* */
  int gpuDevice;        /* for hipObjInit: GPU ordinal, -1 current */
  const char *nicHint;  /* for hipObjInit: RDMA device names, or NULL */
  const hipObjS3DeviceOps_t *deviceOps; /* copied; may be NULL */
  hipObjS3Progress_t progress;          /* may be NULL */
  void *progressCtx;
} hipObjS3Config_t;

/* What a transfer did. Written by every call that takes one, also on
 * failure (then `message` says what happened and what to do). */
typedef struct {
  hipObjS3Status_t status;
  long httpStatus;       /* of the last response, or 0 */
  uint64_t bytes;        /* payload bytes moved */
  uint64_t objectSize;   /* GET and HEAD: the object's size */
  unsigned partsRdma;    /* ranges or parts moved by RDMA */
  unsigned partsHttp;    /* ranges or parts moved by plain HTTP */
  int fellBack;          /* non-zero: some bytes moved by plain HTTP */
  hipObjS3Fallback_t fallbackReason;
  hipObjOpError_t rdmaError; /* the hipObject error behind a failure */
  char s3Code[64];           /* "NoSuchKey", ... from the error body */
  char etag[HIPOBJ_S3_ETAG_LEN]; /* PUT over HTTP, HEAD, GET: with quotes */
  char message[HIPOBJ_S3_MESSAGE_LEN];
} hipObjS3Result_t;

/* Totals of a client, since it was created. */
typedef struct {
  uint64_t rdmaTransfers, rdmaBytes;
  uint64_t httpTransfers, httpBytes;
  uint64_t fallbacksDeclined; /* parts that fell back after a 501 */
  uint64_t fallbacksNoRdma;   /* parts sent over HTTP without asking */
  uint64_t requests;          /* HTTP requests sent */
} hipObjS3Counters_t;

typedef struct hipObjS3Client hipObjS3Client_t;

/* hipObjS3ConfigInit: zero everything, gpuDevice -1. Always succeeds. */
HIPOBJ_S3_API void hipObjS3ConfigInit(hipObjS3Config_t *cfg);

/*
 * hipObjS3ClientCreate: resolve the configuration (cfg may be NULL: all
 * defaults) and, unless HIPOBJ_S3_NO_RDMA, call hipObjInit() with gpuDevice
 * and nicHint. An instance that is already up is used as it is (and not
 * shut down by this client); a failing hipObjInit() leaves the client on
 * plain HTTP (hipObjS3ClientRdma() says why) unless HIPOBJ_S3_REQUIRE_RDMA.
 * result may be NULL; on failure its message says what to change.
 * Errors: InvalidArgument (bad endpoint or region, part size above 4 GiB,
 *   concurrency above HIPOBJ_S3_MAX_CONCURRENCY, half of deviceOps or of
 *   the key pair), RdmaUnavailable, OutOfMemory. *out is written only on
 *   success. Thread safety: not MT-Safe (see above).
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3ClientCreate(const hipObjS3Config_t *cfg,
                                                    hipObjS3Client_t **out,
                                                    hipObjS3Result_t *result);

/* hipObjS3ClientDestroy: free the client; shut hipObject down if this
 * client initialised it (so destroy that client last). Accepts NULL. No
 * transfer may be running. */
HIPOBJ_S3_API void hipObjS3ClientDestroy(hipObjS3Client_t *client);

/*
 * hipObjS3ClientRdma: whether the client will try RDMA. When it will not,
 * and `why` is not NULL, a line saying why is written there (at most
 * whyLen bytes, NUL-terminated), and *err (if not NULL) gets hipObjInit's
 * error (hipObjSuccess when RDMA was disabled by a flag). MT-Safe.
 */
HIPOBJ_S3_API int hipObjS3ClientRdma(const hipObjS3Client_t *client, char *why,
                                     size_t whyLen, hipObjOpError_t *err);

/* hipObjS3GetCounters: a snapshot of the client's totals. MT-Safe. */
HIPOBJ_S3_API void hipObjS3GetCounters(const hipObjS3Client_t *client,
                                       hipObjS3Counters_t *out);

/*
 * hipObjS3HeadObject: the object's size (result->objectSize) and ETag.
 * Errors: NoSuchBucket, NoSuchKey, AccessDenied, ConnectFailed, HttpError.
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3HeadObject(hipObjS3Client_t *client,
                                                  const char *bucket,
                                                  const char *key,
                                                  hipObjS3Result_t *result);

/*
 * hipObjS3GetObject: read the whole object into buf (bufSize bytes of
 * memory of kind `mem`). The object's size is learnt first (HEAD); an
 * object larger than bufSize is BufferTooSmall, and nothing is read.
 * result->bytes is the object's size on success.
 * Errors: InvalidArgument, NoSuchBucket, NoSuchKey, AccessDenied,
 *   BufferTooSmall, ConnectFailed, HttpError, ProtocolError,
 *   RdmaUnavailable, RdmaDeclined, RdmaFailed, NoDeviceOps,
 *   DeviceCopyFailed, OutOfMemory. On failure the buffer's content is
 *   unspecified.
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3GetObject(hipObjS3Client_t *client,
                                                 const char *bucket,
                                                 const char *key, void *buf,
                                                 size_t bufSize,
                                                 hipObjS3MemKind_t mem,
                                                 hipObjS3Result_t *result);

/*
 * hipObjS3GetRange: read bytes [offset, offset+length) of the object into
 * buf (length > 0). A range that starts beyond the end is InvalidRange; one
 * that ends beyond it is InvalidRange too (nothing partial is returned).
 * Errors: as hipObjS3GetObject().
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3GetRange(hipObjS3Client_t *client,
                                                const char *bucket,
                                                const char *key,
                                                uint64_t offset, void *buf,
                                                size_t length,
                                                hipObjS3MemKind_t mem,
                                                hipObjS3Result_t *result);

/*
 * hipObjS3PutObject: write `size` bytes from buf as the object (size 0
 * writes an empty object over plain HTTP). Above the part size, a
 * multipart upload (aborted again if any part fails).
 * Errors: as hipObjS3GetObject(), BufferTooSmall excepted.
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3PutObject(hipObjS3Client_t *client,
                                                 const char *bucket,
                                                 const char *key,
                                                 const void *buf, size_t size,
                                                 hipObjS3MemKind_t mem,
                                                 hipObjS3Result_t *result);

/*
 * hipObjS3DeleteObject: delete the object (S3 answers success for a key
 * that does not exist). Errors: NoSuchBucket, AccessDenied, ConnectFailed,
 * HttpError.
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3DeleteObject(hipObjS3Client_t *client,
                                                    const char *bucket,
                                                    const char *key,
                                                    hipObjS3Result_t *result);

/* ---- one request as hipObjOps_t, for applications that call hipObjGet()
 * or hipObjPut() themselves ---------------------------------------------- */

typedef struct hipObjS3Call hipObjS3Call_t;

/* What one S3 request is. */
typedef struct {
  const char *bucket;
  const char *key;
  int op;             /* HIPOBJ_RDMA_OP_GET or HIPOBJ_RDMA_OP_PUT */
  uint64_t offset;    /* GET: first byte of the range */
  uint64_t length;    /* GET: the range's length; 0 = the whole object */
  unsigned partNumber; /* PUT: 1..10000 with uploadId for UploadPart */
  const char *uploadId; /* PUT: NULL for PutObject */
} hipObjS3CallSpec_t;

/*
 * hipObjS3CallCreate: a call for one S3 request with a token; pass
 * hipObjS3CallOps() and the call as ops and ctx to hipObjGet()/hipObjPut()
 * (the transfer's size must be the range's length), then read the outcome
 * with hipObjS3CallResult(). A call serves one transfer; hipObject may
 * send its request more than once (a retry after a fabric failure, with a
 * new token), which the callbacks allow.
 * Errors: InvalidArgument, OutOfMemory. Thread safety: MT-Safe; a call is
 * used by one thread at a time.
 */
HIPOBJ_S3_API hipObjS3Status_t
hipObjS3CallCreate(hipObjS3Client_t *client, const hipObjS3CallSpec_t *spec,
                   hipObjS3Call_t **out);

/* The callbacks: sendRequest signs and sends the request with the token,
 * Content-Length: 0 and x-amz-content-sha256: UNSIGNED-PAYLOAD, and fails
 * on any status but 2xx or 501; recvReply hands back x-amz-rdma-reply
 * (matched case-insensitively) and fails when it is missing or when
 * x-amz-rdma-bytes-transferred differs from the range's length. */
HIPOBJ_S3_API const hipObjOps_t *hipObjS3CallOps(void);

/*
 * hipObjS3CallResult: the call's outcome, given what hipObjGet()/hipObjPut()
 * returned: Ok, RdmaDeclined (the server answered 501: send the request
 * again without a token), or the error with its message.
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3CallResult(hipObjS3Call_t *call,
                                                  hipObjError_t transfer,
                                                  hipObjS3Result_t *result);

/* hipObjS3CallDestroy: accepts NULL. */
HIPOBJ_S3_API void hipObjS3CallDestroy(hipObjS3Call_t *call);

/* hipObjS3StatusString: a constant name; never NULL. Pure. */
HIPOBJ_S3_API const char *hipObjS3StatusString(hipObjS3Status_t status);

/*
 * hipObjS3ParseUrl: split "s3://BUCKET/KEY" into bucket and key (copied,
 * NUL-terminated). The key may be empty ("s3://bucket" or "s3://bucket/").
 * Errors: InvalidArgument (not s3://, empty bucket, a part too long).
 * Pure.
 */
HIPOBJ_S3_API hipObjS3Status_t hipObjS3ParseUrl(const char *url, char *bucket,
                                                size_t bucketLen, char *key,
                                                size_t keyLen);

#ifdef __cplusplus
}
#endif

#endif /* HIPOBJ_S3_H */
