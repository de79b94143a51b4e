/* SPDX-License-Identifier: MIT */
/* A deliberately small S3 request path on libcurl for the Soft-RoCE tests:
 * one request, a token header, the reply header captured. The product's
 * S3 glue is integrations/curl; this one stays minimal so that tests can
 * also send what a correct client never would. With S3MINI_KEY and
 * S3MINI_SECRET in the environment, requests are signed (SigV4, unsigned
 * payload, the token header among the signed ones). */
#ifndef HO_TESTS_VM_S3MINI_H
#define HO_TESTS_VM_S3MINI_H

#include <stddef.h>

#include "hipobj.h"

struct s3mini {
  const char *endpoint;      /* http://127.0.0.1:PORT */
  const char *method;        /* GET, PUT, POST, DELETE */
  char path[512];            /* /bucket/key?query */
  const void *body;          /* plain-HTTP body, or NULL */
  size_t body_len;
  long range_first, range_len; /* Range: bytes=first-(first+len-1) if len */
  void *handle;              /* a CURL easy handle to reuse (its TCP
                                connection kept), or NULL: a new one */
  /* Results. */
  long status;
  char reply[HIPOBJ_REPLY_BUF_LEN];
  size_t reply_len;          /* 0 when the header was absent */
  char etag[128];
  char *resp;                /* response body (malloc'd, NUL-terminated) */
  size_t resp_len;
};

/* Send it; token (NULL for none) goes in x-amz-rdma-token. 0 on transport
 * success (any HTTP status). */
int s3mini_send(struct s3mini *r, const char *token);
void s3mini_reset(struct s3mini *r);

/* The hipObjOps_t callbacks over s3mini; ctx is a struct s3mini. */
extern const hipObjOps_t s3mini_ops;

/* A number from the server's stats JSON: section "rdma" or "http", key. */
long long s3mini_stat(const char *endpoint, const char *section, const char *key);

#endif
