/* SPDX-License-Identifier: MIT */
/* Several users' key pairs, from a credentials file (--credentials FILE of
 * hipobj-test-server and hipobj-gateway): one user per line,
 *     ACCESS_KEY SECRET_KEY
 * separated by blanks; blank lines and lines starting with '#' are
 * skipped. Access keys are at most 128 characters and appear once; neither
 * field may contain a blank. The file must not be readable by others (as
 * ssh's keys). Secrets are never logged. */
#ifndef HS_CREDENTIALS_H
#define HS_CREDENTIALS_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

struct hs_credentials;

/* Errors: HS_ERR_IO (cannot read, or readable by others), HS_ERR_INVALID_
 * ARGUMENT (a malformed line, a duplicate, no user), HS_ERR_NOMEM; why
 * says which line and what. */
enum hs_err hs_credentials_load(const char *path, struct hs_credentials **out,
                                struct hs_buf *why);
/* The same from text (tests). */
enum hs_err hs_credentials_parse(const char *text, size_t len,
                                 struct hs_credentials **out,
                                 struct hs_buf *why);
/* The secret of access_key, or NULL if it is not a user's. */
const char *hs_credentials_secret(const struct hs_credentials *c,
                                  const char *access_key);
size_t hs_credentials_count(const struct hs_credentials *c);
/* Wipes the secrets. Accepts NULL. */
void hs_credentials_free(struct hs_credentials *c);

#endif
