/* SPDX-License-Identifier: MIT */
/* What `hipobj info` prints of hipObjGetInfo(): the library's choice of
 * GPU, NIC, port and GID and why, and what registration will try. Apart
 * from the command so that a test can print a query of the fake world and
 * compare (tools/hipobj/tests/test_info_print.c). */
#ifndef HIPOBJ_TOOL_INFO_PRINT_H
#define HIPOBJ_TOOL_INFO_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hipobj.h"

/* "::ffff:10.0.0.1" for an IPv4-mapped GID, else the eight groups. */
void tool_gid_text(const uint8_t raw[16], char *out, size_t cap);
/* Why the NIC was chosen, in words. */
const char *tool_nic_reason(const hipObjInfo_t *info);
/* A hipObjPathClass_t in words. */
const char *tool_path_class_name(int32_t c);
/* The lines of the Selection section, each indented by two spaces. */
void tool_info_print(FILE *out, const hipObjInfo_t *info);

#endif
