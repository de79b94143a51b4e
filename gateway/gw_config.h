/* SPDX-License-Identifier: MIT */
/* hipobj-gateway's command line, a pure function of argv and four
 * environment variables (the keys), tested without starting anything. */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <stdio.h>

#include "buf.h"
#include "config.h"
#include "gateway.h"

/* Defaults, then argv. On HS_CONFIG_ERROR, err holds one line saying why.
 * Strings point into argv or the environment. */
enum hs_config_result gw_config_parse(int argc, char **argv,
                                      struct gw_config *out,
                                      struct hs_buf *err);
void gw_config_usage(FILE *f);

#endif
