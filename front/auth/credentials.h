/* SPDX-License-Identifier: MIT */
/* Several users' key pairs, from a credentials file (--credentials FILE of
 * hipobj-test-server and hipobj-gateway): one user per line,
 *     ACCESS_KEY SECRET_KEY [STORE_ACCESS_KEY STORE_SECRET_KEY]
 * separated by blanks; the optional pair is the store identity the user
 * acts as behind hipobj-gateway (each user its own: the store's users and
 * policies keep them apart); blank lines and lines starting with '#' are
 * skipped. Access keys are at most 128 characters of letters, digits and
 * -_.~+= (what a signature's Credential can carry) and appear once; no
 * field may contain a blank. The file must be a regular file (a FIFO is
 * refused, never waited on), owned by this user or root and not readable
 * by others (as ssh's keys). Secrets are never logged. */
#ifndef HS_CREDENTIALS_H
#define HS_CREDENTIALS_H

#include <stdbool.h>
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
/* The store identity of access_key's line: true and both keys if it has
 * one, false otherwise (the caller's default applies). */
bool hs_credentials_store(const struct hs_credentials *c,
                          const char *access_key, const char **store_key,
                          const char **store_secret);
/* Whether any line has a store identity. */
bool hs_credentials_has_store(const struct hs_credentials *c);
/* Whether two users would act as one store identity (the same store key,
 * or none and so `fallback`, the default store key, NULL: anonymous); why
 * names the first two. */
bool hs_credentials_shared(const struct hs_credentials *c,
                           const char *fallback, struct hs_buf *why);
/* Wipes the secrets. Accepts NULL. */
void hs_credentials_free(struct hs_credentials *c);

#endif
