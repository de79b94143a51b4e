/* SPDX-License-Identifier: MIT */
/* put-object: write a file as an S3 object with hipObject, by RDMA when the
 * host and the server can, by plain HTTP otherwise, and say which.
 *
 *   AWS_ENDPOINT_URL=http://127.0.0.1:9000 ./put-object FILE BUCKET KEY */
#include <stdio.h>
#include <stdlib.h>

#include <hipobj_s3.h>

/* The whole file in memory; NULL on failure. */
static char *slurp(const char *path, size_t *size)
{
  FILE *f = fopen(path, "rb");
  char *p = NULL;
  long n;
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n + 1)) &&
      fread(p, 1, (size_t)n, f) == (size_t)n)
    *size = (size_t)n;
  else if (p)
    free(p), p = NULL;
  if (f)
    fclose(f);
  return p;
}

int main(int argc, char **argv)
{
  hipObjS3Client_t *s3;
  hipObjS3Result_t r;
  size_t size = 0;
  char *data;
  if (argc != 4) {
    fprintf(stderr, "usage: %s FILE BUCKET KEY\n", argv[0]);
    return 2;
  }
  if (!(data = slurp(argv[1], &size)))
    return perror(argv[1]), 1;
  if (hipObjS3ClientCreate(NULL, &s3, &r) == hipObjS3Ok) { /* AWS_* env */
    hipObjS3PutObject(s3, argv[2], argv[3], data, size, hipObjS3MemHost, &r);
    hipObjS3ClientDestroy(s3);
  }
  if (r.status == hipObjS3Ok)
    printf("%zu bytes %s\n", size,
           r.fellBack ? "via HTTP fallback" : "via RDMA");
  else
    fprintf(stderr, "%s\n", r.message);
  free(data);
  return r.status == hipObjS3Ok ? 0 : 1;
}
