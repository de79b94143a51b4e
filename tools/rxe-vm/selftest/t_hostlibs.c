/* t_hostlibs.c - built on the host by selftest.sh, run in the VM.
 *
 * Proves that run.sh's ldd closure brings the host's libcurl, libmicrohttpd
 * and libssl (and everything they need) into the guest, that loopback TCP
 * works there, and that dlopen("libibverbs.so.1") finds the guest's verbs
 * library with rxe0 in it (the project loads libibverbs at run time).
 * Serves one page with microhttpd on 127.0.0.1 and fetches it with libcurl. */
#include <curl/curl.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>

#define PORT 18081
static const char page[] = "hello from microhttpd";

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *data_size, void **con_cls) {
  struct MHD_Response *r = MHD_create_response_from_buffer(
      strlen(page), (void *)page, MHD_RESPMEM_PERSISTENT);
  enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ret;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud) {
  char *buf = ud;
  size_t have = strlen(buf), len = sz * n;
  if (have + len < 256) { memcpy(buf + have, p, len); buf[have + len] = 0; }
  return len;
}

struct ibv_device;
int main(void) {
  printf("curl %s\nmicrohttpd %s\n%s\n", curl_version(), MHD_get_version(),
         OpenSSL_version(OPENSSL_VERSION));

  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) { puts("SSL_CTX_new failed"); return 1; }
  SSL_CTX_free(ctx);

  struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG,
                                          PORT, NULL, NULL, answer, NULL, MHD_OPTION_END);
  if (!d) { puts("MHD_start_daemon failed"); return 1; }
  char body[256] = "";
  long code = 0;
  CURL *h = curl_easy_init();
  curl_easy_setopt(h, CURLOPT_URL, "http://127.0.0.1:18081/x");
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  CURLcode cc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(h);
  MHD_stop_daemon(d);
  printf("GET: curl=%d http=%ld body='%s'\n", (int)cc, code, body);
  if (cc != CURLE_OK || code != 200 || strcmp(body, page) != 0) return 1;

  void *v = dlopen("libibverbs.so.1", RTLD_NOW);
  if (!v) { printf("dlopen: %s\n", dlerror()); return 1; }
  struct ibv_device **(*get_list)(int *) = (struct ibv_device **(*)(int *))dlsym(v, "ibv_get_device_list");
  const char *(*get_name)(struct ibv_device *) = (const char *(*)(struct ibv_device *))dlsym(v, "ibv_get_device_name");
  void (*free_list)(struct ibv_device **) = (void (*)(struct ibv_device **))dlsym(v, "ibv_free_device_list");
  if (!get_list || !get_name || !free_list) { puts("dlsym failed"); return 1; }
  int n = 0, found = 0;
  struct ibv_device **list = get_list(&n);
  for (int i = 0; list && i < n; i++) {
    printf("verbs device: %s\n", get_name(list[i]));
    if (strcmp(get_name(list[i]), "rxe0") == 0) found = 1;
  }
  if (list) free_list(list);
  return found ? 0 : 1;
}
