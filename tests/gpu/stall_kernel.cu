// SPDX-License-Identifier: MIT
// A kernel that holds the calling thread's per-thread default stream until
// the host writes a flag in mapped host memory, so that a copy queued behind
// it stalls for as long as a test wants. It gives up after max_cycles GPU
// clock cycles, so a broken test cannot hang the GPU.
#include <cuda_runtime.h>

static __global__ void spin_until_flag(const volatile int *flag,
                                       long long max_cycles, int *timed_out)
{
  long long start = clock64();
  while (*flag == 0) {
    if (clock64() - start > max_cycles) {
      *timed_out = 1;
      return;
    }
  }
}

// flag and timed_out: host memory from cudaHostAlloc(..., cudaHostAllocMapped)
// (with unified addressing their host pointers are valid on the device).
extern "C" int ho_test_launch_spin(const volatile int *flag,
                                   long long max_cycles, int *timed_out)
{
  spin_until_flag<<<1, 1, 0, cudaStreamPerThread>>>(flag, max_cycles,
                                                     timed_out);
  return (int)cudaGetLastError();
}
