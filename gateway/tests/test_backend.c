/* SPDX-License-Identifier: MIT */
/* gateway/backend.c against a scripted backend on 127.0.0.1 (a thread on a
 * plain socket): what a call sees of the store's answers. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"

struct fake {
  int lfd;
  unsigned port;
  size_t body_len;   /* bytes to read after the 100 */
  unsigned delay_ms; /* before the final answer */
  size_t got;        /* body bytes read */
  pthread_t t;
};

/* Reads the request's head, answers 100 Continue, reads the body, waits,
 * answers 200. */
static void *serve(void *arg)
{
  struct fake *f = arg;
  int fd = accept(f->lfd, NULL, NULL);
  if (fd < 0)
    return NULL;
  char buf[8192];
  size_t n = 0;
  while (n < sizeof buf - 1) {
    ssize_t k = read(fd, buf + n, 1);
    if (k <= 0)
      goto out;
    n++;
    buf[n] = '\0';
    if (n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
      break;
  }
  const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
  if (write(fd, cont, sizeof cont - 1) < 0)
    goto out;
  while (f->got < f->body_len) {
    ssize_t k = read(fd, buf, sizeof buf);
    if (k <= 0)
      goto out;
    f->got += (size_t)k;
  }
  usleep(f->delay_ms * 1000);
  const char ok[] = "HTTP/1.1 200 OK\r\nETag: \"e\"\r\nContent-Length: 0\r\n\r\n";
  if (write(fd, ok, sizeof ok - 1) < 0)
    goto out;
  usleep(100 * 1000);
out:
  close(fd);
  return NULL;
}

static void fake_start(struct fake *f)
{
  f->lfd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(f->lfd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(f->lfd, 1), 0);
  socklen_t l = sizeof a;
  assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &l), 0);
  f->port = ntohs(a.sin_port);
  assert_int_equal(pthread_create(&f->t, NULL, serve, f), 0);
}

static void fake_stop(struct fake *f)
{
  pthread_join(f->t, NULL);
  close(f->lfd);
}

/* A PUT with Expect: 100-continue: gw_call_head answers CONTINUE at the
 * backend's 100, and once the body is sent, it waits for the backend's
 * answer, however late, instead of reporting the 100 again (the RDMA PUT's
 * commit took that for a failure after the backend had stored the
 * object). */
static void expect_then_response(void **state)
{
  (void)state;
  struct fake f = {.body_len = 4096, .delay_ms = 300};
  fake_start(&f);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u", f.port);
  struct gw_backend_config cfg = {.url = url};
  struct hs_buf why;
  hs_buf_init(&why, 4096);
  struct gw_backend *be = NULL;
  assert_int_equal(gw_backend_open(&cfg, &be, &why), HS_OK);
  static struct hs_query q;
  struct gw_call_req r = {.method = "PUT",
                          .path = {"/b/k", 4},
                          .query = &q,
                          .payload_hash = "UNSIGNED-PAYLOAD",
                          .body = true,
                          .length = 4096,
                          .expect = true};
  struct gw_call *c = NULL;
  assert_int_equal(gw_call_start(be, &r, &c), HS_OK);
  assert_int_equal(gw_call_head(c), GW_HEAD_CONTINUE);
  static char body[4096];
  memset(body, 'x', sizeof body);
  assert_true(gw_call_send(c, body, 4095));
  assert_true(gw_call_send(c, body + 4095, 1));
  assert_int_equal(gw_call_head(c), GW_HEAD_RESPONSE);
  assert_int_equal(gw_call_status(c), 200);
  char sink[16];
  assert_int_equal(gw_call_read(c, sink, sizeof sink), 0);
  assert_true(gw_call_complete(c));
  gw_call_close(c);
  fake_stop(&f);
  assert_int_equal(f.got, 4096);
  gw_backend_close(be);
  hs_buf_free(&why);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(expect_then_response)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
