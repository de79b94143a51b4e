/* SPDX-License-Identifier: MIT */
/* The sonames of the libraries hipObject opens with dlopen, newest first:
 * the one list that the library's loaders (gpu_hip.c, gpu_cuda.c,
 * verbs_dl.c) and the hipobj command (tools/hipobj: its own GPU loader for
 * --gpu, and what info displays) both use, so that the command finds a
 * runtime wherever the library does. Self-contained and header-only: the
 * command, which uses only the public API otherwise, includes this file
 * alone. tests/install/sonames.sh fails if another source names one. */
#ifndef HO_PLATFORM_SONAMES_H
#define HO_PLATFORM_SONAMES_H

/* ROCm 7, 6, 5.2+: `static const char *const x[] = HO_HIP_SONAMES;` */
#define HO_HIP_SONAMES                                                       \
  {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}
#define HO_HSA_SONAME "libhsa-runtime64.so.1" /* dma-buf export (ROCm) */
#define HO_CUDA_SONAME "libcuda.so.1"         /* the CUDA driver API */
#define HO_VERBS_SONAME "libibverbs.so.1"

#endif
