/* SPDX-License-Identifier: MIT */
#include "rdma/token.h"

#include <stdio.h>
#include <string.h>

#include "common/hex.h"
#include "common/le.h"
#include "common/size.h"

/* Field offsets of the 44-byte token. Changing any of these changes the
 * wire format: the asserts below keep them honest. */
enum {
  OFF_TRANSPORT = 0,
  OFF_QPN = 1,
  OFF_GID = 5,
  OFF_RKEY = 21,
  OFF_ADDR = 25,
  OFF_LEN = 33,
  OFF_PORT = 41,
  OFF_LID = 42,
  OFF_END = 44
};
_Static_assert(OFF_END == HO_TOKEN_BYTES, "token is 44 bytes");
_Static_assert(OFF_RKEY - OFF_GID == 16, "GID is 16 bytes");
_Static_assert(HO_TOKEN_HEX == 2 * HO_TOKEN_BYTES, "two digits a byte");

void ho_token_encode(const struct ho_token *t, char out[HO_TOKEN_HEX + 1])
{
  uint8_t b[HO_TOKEN_BYTES];
  b[OFF_TRANSPORT] = t->transport;
  ho_put_le(b + OFF_QPN, t->qpn, 4);
  memcpy(b + OFF_GID, t->gid, 16);
  ho_put_le(b + OFF_RKEY, t->rkey, 4);
  ho_put_le(b + OFF_ADDR, t->addr, 8);
  ho_put_le(b + OFF_LEN, t->len, 8);
  b[OFF_PORT] = t->port;
  ho_put_le(b + OFF_LID, t->lid, 2);
  ho_hex_encode(b, HO_TOKEN_BYTES, out);
}

bool ho_token_decode(const char *hex, size_t len, struct ho_token *out)
{
  uint8_t b[HO_TOKEN_BYTES];
  if (!out || !ho_hex_decode(hex, len, b, HO_TOKEN_BYTES))
    return false;
  if (b[OFF_TRANSPORT] != HO_TRANSPORT_DC && b[OFF_TRANSPORT] != HO_TRANSPORT_RC)
    return false;
  struct ho_token t;
  t.transport = b[OFF_TRANSPORT];
  t.qpn = (uint32_t)ho_get_le(b + OFF_QPN, 4);
  memcpy(t.gid, b + OFF_GID, 16);
  t.rkey = (uint32_t)ho_get_le(b + OFF_RKEY, 4);
  t.addr = ho_get_le(b + OFF_ADDR, 8);
  t.len = ho_get_le(b + OFF_LEN, 8);
  t.port = b[OFF_PORT];
  t.lid = (uint16_t)ho_get_le(b + OFF_LID, 2);
  *out = t;
  return true;
}

bool ho_gid_ipv4(const uint8_t gid[16], char *buf, size_t len)
{
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (!buf || len == 0)
    return false;
  if (memcmp(gid, prefix, sizeof prefix) != 0) {
    buf[0] = '\0';
    return true;
  }
  char tmp[16];
  snprintf(tmp, sizeof tmp, "%u.%u.%u.%u", gid[12], gid[13], gid[14], gid[15]);
  if (strlen(tmp) >= len)
    return false;
  memcpy(buf, tmp, strlen(tmp) + 1);
  return true;
}

bool ho_status_is_success(int status)
{
  return status == 200 || status == 204 || status == 206;
}

static bool parse_status3(const char *s, int *status)
{
  for (int i = 0; i < 3; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  int v = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
  if (v < 100 || v > 599)
    return false;
  *status = v;
  return true;
}

/* 1 to 20 decimal digits, no leading zero, at most UINT64_MAX. */
static bool parse_count(const char *s, size_t len, uint64_t *out)
{
  return !(len > 1 && s[0] == '0') && ho_parse_uint_n(s, len, out);
}

bool ho_reply_parse(const char *s, size_t len, struct ho_reply *out)
{
  if (!s || !out)
    return false;
  while (len > 0 && (s[len - 1] == '\0' || s[len - 1] == '\r' || s[len - 1] == '\n'))
    len--;
  struct ho_reply r = {0};
  if (len == 2 && memcmp(s, "ok", 2) == 0) {
    r.status = 200;
  } else if (len == 3 && memcmp(s, "err", 3) == 0) {
    r.status = 500;
  } else if (len == 3) {
    if (!parse_status3(s, &r.status))
      return false;
  } else if (len == sizeof HO_REPLY_RDMA_FAILED - 1 &&
             memcmp(s, HO_REPLY_RDMA_FAILED, len) == 0) {
    r.status = 500;
    r.rdma_failed = true;
  } else if (len > 5 && memcmp(s, HO_REPLY_DONE, 5) == 0) {
    if (!parse_count(s + 5, len - 5, &r.bytes))
      return false;
    r.status = 200;
    r.done = true;
  } else if (len == 4 + HO_TOKEN_HEX && memcmp(s, "200:", 4) == 0) {
    if (!ho_token_decode(s + 4, HO_TOKEN_HEX, &r.peer))
      return false;
    r.status = 200;
    r.has_peer = true;
  } else {
    return false;
  }
  *out = r;
  return true;
}

bool ho_server_token_ok(const struct ho_token *t, bool roce)
{
  if (t->transport != HO_TRANSPORT_RC || ho_token_tag(t) != 0 || t->port == 0)
    return false;
  return roce ? t->lid == 0 : t->lid != 0 && t->lid < 0xc000;
}

bool ho_offer_decode(const struct ho_token *server, struct ho_conn_offer *out)
{
  struct ho_conn_offer o = {0};
  if (server->rkey == 0 && server->len == 0) {
    o.version = 1;
  } else {
    uint8_t reuse = (uint8_t)(server->rkey >> 8);
    uint32_t flags = server->rkey >> 16;
    if ((server->rkey & 0xff) != 2 || reuse > 1 ||
        (flags & ~HO_OFFER_PROBES) != 0 || ho_conn_tag(server->len) == 0)
      return false;
    o.version = 2;
    o.reuse = reuse == 1;
    o.probes = (flags & HO_OFFER_PROBES) != 0;
    o.conn_id = server->len;
  }
  *out = o;
  return true;
}

void ho_offer_encode(const struct ho_conn_offer *o, struct ho_token *server)
{
  if (o->version < 2) {
    server->rkey = 0;
    server->len = 0;
    return;
  }
  server->rkey = 2u | (o->reuse ? 1u : 0u) << 8 |
                 (o->probes ? (uint32_t)HO_OFFER_PROBES : 0u) << 16;
  server->len = o->conn_id;
}
