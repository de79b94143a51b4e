/* SPDX-License-Identifier: MIT */
/* get-object: read an S3 object into memory with hipObject, by RDMA when the
 * host and the server can, by plain HTTP otherwise, and say which.
 *
 *   AWS_ENDPOINT_URL=http://127.0.0.1:9000 ./get-object BUCKET KEY
 *
 * For GPU memory, pass a hipMalloc()ed (or cudaMalloc()ed) buffer and
 * hipObjS3MemDevice; give the client hipObjS3DeviceOps_t for the HTTP
 * fallback (docs/reference/hipobj-s3.md). */
#include <stdio.h>
#include <stdlib.h>

#include <hipobj_s3.h>

int main(int argc, char **argv)
{
  hipObjS3Client_t *s3;
  hipObjS3Result_t r;
  if (argc != 3) {
    fprintf(stderr, "usage: %s BUCKET KEY\n", argv[0]);
    return 2;
  }
  if (hipObjS3ClientCreate(NULL, &s3, &r) != hipObjS3Ok) /* AWS_* env */
    return fprintf(stderr, "%s\n", r.message), 1;
  if (hipObjS3HeadObject(s3, argv[1], argv[2], &r) == hipObjS3Ok) {
    void *buf = malloc(r.objectSize + 1);
    hipObjS3GetObject(s3, argv[1], argv[2], buf, r.objectSize,
                      hipObjS3MemHost, &r);
    free(buf);
  }
  if (r.status == hipObjS3Ok)
    printf("%llu bytes %s\n", (unsigned long long)r.bytes,
           r.fellBack ? "via HTTP fallback" : "via RDMA");
  else
    fprintf(stderr, "%s\n", r.message);
  hipObjS3ClientDestroy(s3);
  return r.status == hipObjS3Ok ? 0 : 1;
}
