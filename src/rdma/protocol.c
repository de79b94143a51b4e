/* SPDX-License-Identifier: MIT */
#include "rdma/protocol.h"

#include <string.h>

#include "common/le.h"
#include "hipobj.h"

/* Layout: magic "HOBJ" [0,4), type 4, version 5, status [6,8), cookie
 * [8,16), bytes [16,24); version 1: reserved zero [24,32); version 2:
 * next_qpn [24,27), op 27, reserved zero [28,32). */
static const uint8_t magic[4] = {'H', 'O', 'B', 'J'};

void ho_msg_encode(const struct ho_msg *m, uint8_t out[HO_MSG_SIZE])
{
  memset(out, 0, HO_MSG_SIZE);
  memcpy(out, magic, 4);
  out[4] = m->type;
  out[5] = m->version;
  ho_put_le(out + 6, m->status, 2);
  ho_put_le(out + 8, m->cookie, 8);
  ho_put_le(out + 16, m->bytes, 8);
  if (m->version == HO_PROTO_V2) {
    ho_put_le(out + 24, m->next_qpn & 0xffffff, 3);
    out[27] = m->op;
  }
}

static bool v2_fields_ok(const uint8_t *buf)
{
  if (buf[27] != HO_WIRE_GET && buf[27] != HO_WIRE_PUT)
    return false;
  if (buf[4] == HO_MSG_FINAL && ho_get_le(buf + 24, 3) != 0)
    return false;
  return true;
}

bool ho_msg_decode(const uint8_t *buf, size_t len, struct ho_msg *out)
{
  if (!buf || !out || len != HO_MSG_SIZE || memcmp(buf, magic, 4) != 0)
    return false;
  if (buf[4] != HO_MSG_READY && buf[4] != HO_MSG_FINAL)
    return false;
  if (buf[5] != HO_PROTO_V1 && buf[5] != HO_PROTO_V2)
    return false;
  const int reserved_from = buf[5] == HO_PROTO_V1 ? 24 : 28;
  for (int i = reserved_from; i < HO_MSG_SIZE; i++)
    if (buf[i] != 0)
      return false;
  if (buf[5] == HO_PROTO_V2 && !v2_fields_ok(buf))
    return false;
  struct ho_msg m = {
      .type = buf[4],
      .version = buf[5],
      .status = (uint16_t)ho_get_le(buf + 6, 2),
      .cookie = ho_get_le(buf + 8, 8),
      .bytes = ho_get_le(buf + 16, 8),
  };
  if (m.version == HO_PROTO_V2) {
    m.next_qpn = (uint32_t)ho_get_le(buf + 24, 3);
    m.op = buf[27];
  }
  *out = m;
  return true;
}

/* splitmix64's finaliser: every cookie bit reaches every PSN bit. */
uint32_t ho_psn_from_cookie(uint64_t cookie, enum ho_psn_dir dir)
{
  uint64_t z = cookie + 0x9e3779b97f4a7c15ull * (uint64_t)(dir + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (uint32_t)(z & 0xffffff);
}

uint8_t ho_wire_op(int op)
{
  return op == HIPOBJ_RDMA_OP_GET ? HO_WIRE_GET : HO_WIRE_PUT;
}
