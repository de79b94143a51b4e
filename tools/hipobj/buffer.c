/* SPDX-License-Identifier: MIT */
/* Buffers for get and put: host memory (anonymous pages) or GPU memory
 * (--gpu), and files or stdin/stdout at the other end. GPU memory is only
 * ever touched through the runtime's copies. */
#include "buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK ((size_t)8 << 20)

bool tool_buf_alloc(struct tool_buf *b, struct tool_gpu *gpu, size_t size)
{
  memset(b, 0, sizeof *b);
  b->size = size;
  b->gpu = gpu;
  size_t n = size ? size : 1;
  if (gpu) {
    b->p = tool_gpu_alloc(gpu, n);
    return b->p != NULL;
  }
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED)
    return false;
  b->p = p;
  b->mapped = n;
  return true;
}

void tool_buf_free(struct tool_buf *b)
{
  if (b->gpu)
    tool_gpu_free(b->gpu, b->p);
  else if (b->mapped)
    munmap(b->p, b->mapped);
  memset(b, 0, sizeof *b);
}

static bool write_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

static bool read_all(int fd, char *p, size_t n)
{
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

/* Host memory straight out; GPU memory through a host chunk. */
static bool write_buf(int fd, const struct tool_buf *b, size_t n)
{
  if (!b->gpu)
    return write_all(fd, b->p, n);
  char *chunk = malloc(CHUNK);
  bool ok = chunk != NULL;
  for (size_t off = 0; ok && off < n; off += CHUNK) {
    size_t k = n - off < CHUNK ? n - off : CHUNK;
    ok = tool_gpu_to_host(b->gpu, chunk, (const char *)b->p + off, k) &&
         write_all(fd, chunk, k);
  }
  free(chunk);
  return ok;
}

bool tool_buf_save(const struct tool_buf *b, size_t n, const char *path,
                   char *why, size_t why_len)
{
  bool out = !strcmp(path, "-");
  int fd = out ? 1 : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    snprintf(why, why_len, "cannot create %s: %s", path, strerror(errno));
    return false;
  }
  bool ok = write_buf(fd, b, n);
  int err = errno;
  if (!out && close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok)
    snprintf(why, why_len, "cannot write %s: %s", path,
             b->gpu && err == 0 ? "copy from the GPU failed" : strerror(err));
  return ok;
}

/* stdin or a pipe: read into growing anonymous memory. */
static bool slurp(int fd, struct tool_buf *b, char *why, size_t why_len)
{
  size_t cap = (size_t)1 << 20, len = 0;
  char *p = malloc(cap);
  while (p) {
    ssize_t k = read(fd, p + len, cap - len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0) {
      snprintf(why, why_len, "cannot read: %s", strerror(errno));
      free(p);
      return false;
    }
    if (k == 0)
      break;
    len += (size_t)k;
    if (len == cap) {
      char *q = realloc(p, cap * 2);
      if (!q)
        free(p);
      p = q;
      cap *= 2;
    }
  }
  if (!p || !tool_buf_alloc(b, NULL, len)) {
    free(p);
    snprintf(why, why_len, "out of memory");
    return false;
  }
  memcpy(b->p, p, len);
  free(p);
  return true;
}

static bool load_chunks(int fd, struct tool_buf *b)
{
  if (!b->gpu)
    return read_all(fd, b->p, b->size);
  char *chunk = malloc(CHUNK);
  bool ok = chunk != NULL;
  for (size_t off = 0; ok && off < b->size; off += CHUNK) {
    size_t k = b->size - off < CHUNK ? b->size - off : CHUNK;
    ok = read_all(fd, chunk, k) &&
         tool_gpu_to_device(b->gpu, (char *)b->p + off, chunk, k);
  }
  free(chunk);
  return ok;
}

bool tool_buf_load(struct tool_buf *b, struct tool_gpu *gpu, const char *path,
                   char *why, size_t why_len)
{
  bool in = !strcmp(path, "-");
  int fd = in ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(why, why_len, "cannot open %s: %s", path, strerror(errno));
    return false;
  }
  bool ok;
  if (!S_ISREG(st.st_mode) && !gpu) {
    ok = slurp(fd, b, why, why_len);
  } else if (!S_ISREG(st.st_mode)) {
    snprintf(why, why_len, "%s is not a regular file (needed with --gpu)",
             path);
    ok = false;
  } else if (!tool_buf_alloc(b, gpu, (size_t)st.st_size)) {
    snprintf(why, why_len, "cannot allocate %lld bytes of %s memory",
             (long long)st.st_size, gpu ? "GPU" : "host");
    ok = false;
  } else if (!(ok = load_chunks(fd, b))) {
    snprintf(why, why_len, "cannot read %s%s", path,
             gpu ? " into the GPU" : "");
    tool_buf_free(b);
  }
  if (!in)
    close(fd);
  return ok;
}
