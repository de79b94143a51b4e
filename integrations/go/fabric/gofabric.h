/* SPDX-License-Identifier: MIT */
/* Test only: the functions libhipobj_gofabric adds to the client and server
 * libraries (fabric/gofabric.c). */
#ifndef HO_GOFABRIC_H
#define HO_GOFABRIC_H

#include <stddef.h>
#include <stdint.h>

#include <hipobj_server.h>

#define GOFABRIC_API __attribute__((visibility("default")))

GOFABRIC_API int hipObjGoFabricStart(char *out, size_t outLen);
GOFABRIC_API void hipObjGoFabricSetMode(int mode);
GOFABRIC_API void hipObjGoFabricCounts(uint64_t out[11]);
GOFABRIC_API hipObjServerStatus_t
hipObjGoFabricServerOpen(const hipObjServerConfig_t *cfg, hipObjServer_t **out);

#endif
