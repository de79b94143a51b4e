/* SPDX-License-Identifier: MIT */
#include "credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define KEY_MAX 128
#define FILE_MAX (1u << 20)

struct user {
  char *key;
  char *secret;
  char *store_key;    /* the store identity it acts as (gateway); NULL: */
  char *store_secret; /* the gateway's --backend keys */
};

struct hs_credentials {
  struct user *v;
  size_t n;
  char *text; /* owns the strings */
  size_t text_len;
};

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The next blank-separated field of [*p, end), NUL-terminated in place. */
static char *field(char **p, char *end)
{
  while (*p < end && blank(**p))
    (*p)++;
  if (*p == end)
    return NULL;
  char *f = *p;
  while (*p < end && !blank(**p))
    (*p)++;
  if (*p < end)
    *(*p)++ = '\0';
  return f;
}

/* An access key an Authorization header can carry: "Credential=KEY/date/
 * region/s3/aws4_request" splits at '/', the header at ',' and ';'. AWS's
 * keys are letters and digits; a few more are allowed, nothing else. */
static bool key_ok(const char *k)
{
  for (const char *p = k; *p; p++) {
    char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || strchr("-_.~+=", c)))
      return false;
  }
  return true;
}

static enum hs_err parse_line(struct hs_credentials *c, char *s, char *end,
                              unsigned line, struct hs_buf *why)
{
  char *key = field(&s, end);
  if (!key || key[0] == '#')
    return HS_OK;
  char *secret = field(&s, end);
  char *store_key = secret ? field(&s, end) : NULL;
  char *store_secret = store_key ? field(&s, end) : NULL;
  const char *bad = NULL;
  if (!secret)
    bad = "a user needs an access key and a secret key";
  else if (store_key && !store_secret)
    bad = "a store identity needs an access key and a secret key";
  else if (field(&s, end))
    bad = "more than four fields (a key cannot contain a blank)";
  else if (strlen(key) > KEY_MAX ||
           (store_key && strlen(store_key) > KEY_MAX))
    bad = "an access key is longer than 128 characters";
  else if (!key_ok(key) || (store_key && !key_ok(store_key)))
    bad = "an access key has a character no signature can carry (letters, "
          "digits and -_.~+= are allowed)";
  else if (hs_credentials_secret(c, key))
    bad = "this access key appears twice";
  if (bad) {
    hs_buf_printf(why, "line %u: %s", line, bad);
    return HS_ERR_INVALID_ARGUMENT;
  }
  c->v[c->n++] = (struct user){key, secret, store_key, store_secret};
  return HS_OK;
}

enum hs_err hs_credentials_parse(const char *text, size_t len,
                                 struct hs_credentials **out,
                                 struct hs_buf *why)
{
  struct hs_credentials *c = calloc(1, sizeof *c);
  size_t lines = 1;
  for (size_t i = 0; i < len; i++)
    lines += text[i] == '\n';
  if (!c || !(c->text = malloc(len + 1)) ||
      !(c->v = calloc(lines, sizeof *c->v))) {
    hs_credentials_free(c);
    return HS_ERR_NOMEM;
  }
  memcpy(c->text, text, len);
  c->text[len] = '\0';
  c->text_len = len;
  if (memchr(text, '\0', len)) {
    hs_buf_puts(why, "the file contains a NUL byte");
    hs_credentials_free(c);
    return HS_ERR_INVALID_ARGUMENT;
  }
  char *s = c->text, *end = c->text + len;
  unsigned line = 1;
  while (s < end) {
    char *nl = memchr(s, '\n', (size_t)(end - s));
    char *e = nl ? nl : end;
    *e = '\0';
    enum hs_err err = parse_line(c, s, e, line++, why);
    if (err) {
      hs_credentials_free(c);
      return err;
    }
    s = e + 1;
  }
  if (c->n == 0) {
    hs_buf_puts(why, "no user in it");
    hs_credentials_free(c);
    return HS_ERR_INVALID_ARGUMENT;
  }
  *out = c;
  return HS_OK;
}

static enum hs_err read_all(int fd, struct hs_buf *b, struct hs_buf *why)
{
  char chunk[4096];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      hs_buf_printf(why, "cannot read it: %s", strerror(errno));
      return HS_ERR_IO;
    }
    if (n == 0)
      return b->failed ? HS_ERR_NOMEM : HS_OK;
    hs_buf_append(b, chunk, (size_t)n);
    if (b->failed) {
      hs_buf_puts(why, "it is larger than 1 MiB");
      return HS_ERR_INVALID_ARGUMENT;
    }
  }
}

enum hs_err hs_credentials_load(const char *path, struct hs_credentials **out,
                                struct hs_buf *why)
{
  /* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of
   * waiting for a writer; a regular file ignores it. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    hs_buf_printf(why, "cannot open it: %s", strerror(errno));
    return HS_ERR_IO;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    hs_buf_puts(why, "it is not a regular file");
    close(fd);
    return HS_ERR_IO;
  }
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    hs_buf_printf(why, "it holds secrets but is owned by user %u, neither "
                       "this one (%u) nor root: chown it",
                  (unsigned)st.st_uid, (unsigned)geteuid());
    close(fd);
    return HS_ERR_IO;
  }
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    hs_buf_printf(why, "it holds secrets but others may read or write it "
                       "(mode %03o): chmod 600 it",
                  (unsigned)(st.st_mode & 0777));
    close(fd);
    return HS_ERR_IO;
  }
  struct hs_buf b;
  hs_buf_init(&b, FILE_MAX);
  enum hs_err err = read_all(fd, &b, why);
  close(fd);
  if (!err)
    err = hs_credentials_parse(b.data ? b.data : "", b.len, out, why);
  if (b.data)
    OPENSSL_cleanse(b.data, b.len);
  hs_buf_free(&b);
  return err;
}

const char *hs_credentials_secret(const struct hs_credentials *c,
                                  const char *access_key)
{
  for (size_t i = 0; c && i < c->n; i++)
    if (strcmp(c->v[i].key, access_key) == 0)
      return c->v[i].secret;
  return NULL;
}

bool hs_credentials_store(const struct hs_credentials *c,
                          const char *access_key, const char **store_key,
                          const char **store_secret)
{
  for (size_t i = 0; c && i < c->n; i++)
    if (strcmp(c->v[i].key, access_key) == 0 && c->v[i].store_key) {
      *store_key = c->v[i].store_key;
      *store_secret = c->v[i].store_secret;
      return true;
    }
  return false;
}

bool hs_credentials_has_store(const struct hs_credentials *c)
{
  for (size_t i = 0; c && i < c->n; i++)
    if (c->v[i].store_key)
      return true;
  return false;
}

/* Users i and j act as the same store identity. */
static bool same_identity(const struct user *a, const struct user *b,
                          const char *fallback)
{
  const char *x = a->store_key ? a->store_key : fallback;
  const char *y = b->store_key ? b->store_key : fallback;
  if (!x || !y)
    return !x && !y; /* both anonymous */
  return strcmp(x, y) == 0;
}

bool hs_credentials_shared(const struct hs_credentials *c,
                           const char *fallback, struct hs_buf *why)
{
  for (size_t i = 0; c && i < c->n; i++)
    for (size_t j = i + 1; j < c->n; j++)
      if (same_identity(&c->v[i], &c->v[j], fallback)) {
        hs_buf_printf(why, "users %s and %s would act as one store identity",
                      c->v[i].key, c->v[j].key);
        return true;
      }
  return false;
}

size_t hs_credentials_count(const struct hs_credentials *c)
{
  return c ? c->n : 0;
}

void hs_credentials_free(struct hs_credentials *c)
{
  if (!c)
    return;
  if (c->text)
    OPENSSL_cleanse(c->text, c->text_len);
  free(c->text);
  free(c->v);
  free(c);
}
