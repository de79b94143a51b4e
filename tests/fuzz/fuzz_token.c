/* SPDX-License-Identifier: MIT */
/* Token decoding, reply parsing, the server's offer and protocol messages
 * on arbitrary bytes: no crash, and whatever decodes re-encodes to the same
 * bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj.h"
#include "rdma/protocol.h"
#include "rdma/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_token(const char *s, size_t n)
{
  struct ho_token t;
  if (!ho_token_decode(s, n, &t))
    return;
  char out[HO_TOKEN_HEX + 1];
  ho_token_encode(&t, out);
  for (size_t i = 0; i < HO_TOKEN_HEX; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'F')
      c = (char)(c + 32);
    if (c != out[i])
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *s = (const char *)data;
  check_token(s, size);
  struct ho_reply r;
  if (ho_reply_parse(s, size, &r) && (r.status < 100 || r.status > 599))
    abort();
  struct ho_conn_offer o;
  if (ho_reply_parse(s, size, &r) && r.has_peer && ho_offer_decode(&r.peer, &o)) {
    struct ho_token again = r.peer;
    ho_offer_encode(&o, &again);
    if (again.rkey != r.peer.rkey || again.len != r.peer.len ||
        (o.version == 2 && ho_conn_tag(o.conn_id) == 0))
      abort();
  }
  int code;
  hipObjParseRdmaReply(s, size, &code);
  struct ho_msg m;
  if (ho_msg_decode(data, size, &m)) {
    uint8_t back[HO_MSG_SIZE];
    ho_msg_encode(&m, back);
    if (memcmp(back, data, HO_MSG_SIZE) != 0)
      abort();
  }
  char *z = malloc(size + 1);
  if (z) {
    memcpy(z, data, size);
    z[size] = '\0';
    char ip[16];
    hipObjTokenClientNic(z, ip, sizeof ip);
    free(z);
  }
  return 0;
}
