/* SPDX-License-Identifier: MIT */
/* What authentication reads of a server's configuration (auth.h). */
#ifndef HS_AUTH_CONFIG_H
#define HS_AUTH_CONFIG_H

struct hs_credentials;

struct hs_auth_config {
  const char *access_key; /* NULL: anonymous, unless credentials is set */
  const char *secret_key;
  /* several users (credentials.h); keys are looked up there when set */
  const struct hs_credentials *credentials;
  const char *region;        /* NULL: us-east-1 */
  unsigned max_clock_skew_s; /* 0: not checked */
};

#endif
