/* SPDX-License-Identifier: MIT */
/* The token codec and the reply grammar against wire-format.md's vectors,
 * and hostile input for both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hipobj.h"
#include "rdma/protocol.h"
#include "rdma/token.h"

static const char V1[] =
    "01ab12000000000000000000000000ffffc0a8012aefbeadde00100000007f0000001000"
    "0000000000010000";
static const char V2[] =
    "01efcdab00fe800000000000000202c9fffe00000134120000f0debc9a78563412000000"
    "000100000001efbe";

static void v1_encodes(void **state)
{
  (void)state;
  struct ho_token t = {.transport = HO_TRANSPORT_RC,
                       .qpn = 0x12ab,
                       .gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 42},
                       .rkey = 0xdeadbeef,
                       .addr = 0x00007f0000001000ull,
                       .len = 4096,
                       .port = 1,
                       .lid = 0};
  char out[HO_TOKEN_HEX + 1];
  ho_token_encode(&t, out);
  assert_string_equal(out, V1);
}

static void v2_roundtrip(void **state)
{
  (void)state;
  struct ho_token t;
  assert_true(ho_token_decode(V2, strlen(V2), &t));
  assert_int_equal(t.transport, HO_TRANSPORT_RC);
  assert_int_equal(t.qpn, 0xabcdef);
  assert_int_equal(t.rkey, 0x1234);
  assert_true(t.addr == 0x123456789abcdef0ull);
  assert_true(t.len == 0x100000000ull);
  assert_int_equal(t.port, 1);
  assert_int_equal(t.lid, 0xbeef);
  static const uint8_t gid[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                  0x02, 0x02, 0xc9, 0xff, 0xfe, 0, 0, 0x01};
  assert_memory_equal(t.gid, gid, 16);
  char out[HO_TOKEN_HEX + 1];
  ho_token_encode(&t, out);
  assert_string_equal(out, V2);
}

static void upper_case_accepted(void **state)
{
  (void)state;
  char up[HO_TOKEN_HEX + 1];
  for (size_t i = 0; i <= HO_TOKEN_HEX; i++)
    up[i] = (char)((V1[i] >= 'a' && V1[i] <= 'f') ? V1[i] - 32 : V1[i]);
  struct ho_token t;
  assert_true(ho_token_decode(up, HO_TOKEN_HEX, &t));
  assert_int_equal(t.qpn, 0x12ab);
}

static void hostile_tokens_rejected(void **state)
{
  (void)state;
  struct ho_token t, canary;
  memset(&canary, 0x5a, sizeof canary);
  t = canary;
  char buf[200];
  assert_false(ho_token_decode(V1, 87, &t));
  memcpy(buf, V1, 88);
  buf[88] = '0';
  assert_false(ho_token_decode(buf, 89, &t));
  memcpy(buf, V1, 89);
  buf[40] = 'g';
  assert_false(ho_token_decode(buf, 88, &t));
  memcpy(buf, V1, 89);
  buf[1] = '2'; /* transport 0x02 */
  assert_false(ho_token_decode(buf, 88, &t));
  memcpy(buf, V1, 89);
  buf[10] = '\0'; /* an embedded NUL */
  assert_false(ho_token_decode(buf, 88, &t));
  memcpy(buf, V1, 89);
  buf[0] = ' ';
  assert_false(ho_token_decode(buf, 88, &t));
  assert_false(ho_token_decode(NULL, 88, &t));
  assert_false(ho_token_decode(V1, 88, NULL));
  memcpy(buf, V1, 89);
  buf[1] = '0'; /* DC is a valid transport */
  assert_true(ho_token_decode(buf, 88, &t));
  assert_int_equal(t.transport, HO_TRANSPORT_DC);
  t = canary;
  assert_false(ho_token_decode("zz", 2, &t));
  assert_memory_equal(&t, &canary, sizeof t); /* outputs only on success */
}

static void client_nic(void **state)
{
  (void)state;
  char ip[16] = "junk";
  hipObjError_t e = hipObjTokenClientNic(V1, ip, sizeof ip);
  assert_int_equal(e.opError, hipObjSuccess);
  assert_string_equal(ip, "192.168.1.42");
  e = hipObjTokenClientNic(V2, ip, sizeof ip);
  assert_int_equal(e.opError, hipObjSuccess);
  assert_string_equal(ip, "");
  assert_int_equal(hipObjTokenClientNic(V1, ip, 5).opError, hipObjInvalidValue);
  assert_int_equal(hipObjTokenClientNic("01", ip, sizeof ip).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjTokenClientNic(NULL, ip, sizeof ip).opError,
                   hipObjInvalidValue);
  assert_int_equal(hipObjTokenClientNic(V1, NULL, 16).opError, hipObjInvalidValue);
}

static int parse(const char *s, size_t n)
{
  int code = -12345;
  hipObjError_t e = hipObjParseRdmaReply(s, n, &code);
  return e.opError == hipObjSuccess ? code : -1;
}
#define P(s) parse(s, sizeof(s) - 1)

static void reply_grammar(void **state)
{
  (void)state;
  assert_int_equal(P("ok"), 200);
  assert_int_equal(P("err"), 500);
  assert_int_equal(P("200"), 200);
  assert_int_equal(P("204"), 204);
  assert_int_equal(P("206"), 206);
  assert_int_equal(P("501"), 501);
  assert_int_equal(P("100"), 100);
  assert_int_equal(P("599"), 599);
  assert_int_equal(P("ok\r\n"), 200);
  assert_int_equal(parse("206\0\0", 5), 206);
  assert_int_equal(P("501\n"), 501);
  char tok[4 + 88 + 3] = "200:";
  memcpy(tok + 4, V1, 88);
  memcpy(tok + 92, "\r\n", 3);
  assert_int_equal(parse(tok, 94), 200);
  struct ho_reply r;
  assert_true(ho_reply_parse(tok, 92, &r));
  assert_true(r.has_peer);
  assert_int_equal(r.peer.qpn, 0x12ab);
}

static void reply_hostile(void **state)
{
  (void)state;
  const char *bad[] = {"okay", "+200", " 200", "2000", "099", "600", "20",
                       "", "OK", "ERR", "200 ", "\t200", "-1", "2x0", "ok ok",
                       "200:", "err\r\nx"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(parse(bad[i], strlen(bad[i])), -1);
  char tok[4 + 89] = "204:";
  memcpy(tok + 4, V1, 88);
  assert_int_equal(parse(tok, 92), -1); /* only 200 carries a token */
  memcpy(tok, "200:", 4);
  assert_int_equal(parse(tok, 91), -1); /* 87 digits */
  tok[4 + 1] = '2';
  assert_int_equal(parse(tok, 92), -1); /* transport 0x02 */
  int code = 7;
  assert_int_equal(hipObjParseRdmaReply(NULL, 2, &code).opError, hipObjInvalidValue);
  assert_int_equal(hipObjParseRdmaReply("ok", 2, NULL).opError, hipObjInvalidValue);
  assert_int_equal(hipObjParseRdmaReply("okay", 4, &code).opError, hipObjInvalidValue);
  assert_int_equal(code, 7); /* written only on success */
}

/* Version 3 (docs/protocol.md, sections 2, 3 and 5): the data-first reply
 * forms, strictly; the token's data-first bit in its port byte. */
static void reply_data_first(void **state)
{
  (void)state;
  struct ho_reply r;
  assert_true(ho_reply_parse("done:4096", 9, &r));
  assert_true(r.done && !r.rdma_failed && !r.has_peer);
  assert_int_equal(r.status, 200);
  assert_int_equal(r.bytes, 4096);
  assert_true(ho_reply_parse("done:18446744073709551615\r\n", 27, &r));
  assert_true(r.bytes == UINT64_MAX);
  assert_true(ho_reply_parse("done:0", 6, &r)); /* the caller checks the count */
  assert_true(ho_reply_parse("rdma-failed", 11, &r));
  assert_true(r.rdma_failed && !r.done);
  assert_int_equal(r.status, 500);
  assert_int_equal(P("done:1"), 200);
  assert_int_equal(P("rdma-failed"), 500);
  const char *bad[] = {"done:", "done:01", "done:-1", "done:+1", "done: 1",
                       "done:1 ", "done:18446744073709551616",
                       "done:123456789012345678901", "done:1x", "DONE:1",
                       "done1", "rdma-failed ", "rdma-fail", "RDMA-FAILED",
                       "rdma-failed:1", "done:1:2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(ho_reply_parse(bad[i], strlen(bad[i]), &r));
  assert_false(ho_reply_parse("done:1\0002", 8, &r)); /* a NUL inside */
  struct ho_token t = {.transport = HO_TRANSPORT_RC, .port = 1};
  assert_false(ho_token_data_first(&t));
  t.port |= HO_TOKEN_DATA_FIRST;
  assert_true(ho_token_data_first(&t));
  char hex[HO_TOKEN_HEX + 1];
  struct ho_token back;
  ho_token_encode(&t, hex);
  assert_true(ho_token_decode(hex, HO_TOKEN_HEX, &back));
  assert_int_equal(back.port, 0x81); /* byte 41 */
  assert_true(ho_token_data_first(&back));
}

/* Version 1 (docs/protocol.md, section 4): bytes 24..31 reserved. */
static void messages_v1(void **state)
{
  (void)state;
  struct ho_msg m = {.type = HO_MSG_FINAL, .version = HO_PROTO_V1,
                     .status = HO_FINAL_OK, .cookie = 0x0102030405060708ull,
                     .bytes = 4096};
  uint8_t b[HO_MSG_SIZE];
  ho_msg_encode(&m, b);
  static const uint8_t expect[HO_MSG_SIZE] = {
      'H', 'O', 'B', 'J', 2, 1, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1,
      0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  assert_memory_equal(b, expect, HO_MSG_SIZE);
  struct ho_msg d;
  assert_true(ho_msg_decode(b, HO_MSG_SIZE, &d));
  assert_true(d.cookie == m.cookie && d.bytes == 4096 && d.type == HO_MSG_FINAL);
  assert_true(d.version == 1 && d.op == 0 && d.next_qpn == 0);
  assert_false(ho_msg_decode(b, HO_MSG_SIZE - 1, &d));
  for (int i = 24; i < HO_MSG_SIZE; i++) { /* every reserved byte */
    b[i] = 1;
    assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d));
    b[i] = 0;
  }
  b[4] = 3;
  assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d)); /* type */
  b[4] = 2;
  b[5] = 3;
  assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d)); /* version */
  b[5] = 1;
  b[0] = 'X';
  assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d)); /* magic */
}

/* Version 2: next_qpn in bytes 24..26, op in 27, 28..31 reserved. */
static void messages_v2(void **state)
{
  (void)state;
  struct ho_msg m = {.type = HO_MSG_READY, .version = HO_PROTO_V2,
                     .cookie = 0x0102030405060708ull, .bytes = 4096,
                     .next_qpn = 0x123456, .op = HO_WIRE_PUT};
  uint8_t b[HO_MSG_SIZE];
  ho_msg_encode(&m, b);
  static const uint8_t expect[HO_MSG_SIZE] = {
      'H', 'O', 'B', 'J', 1, 2, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1,
      0, 0x10, 0, 0, 0, 0, 0, 0, 0x56, 0x34, 0x12, 2, 0, 0, 0, 0};
  assert_memory_equal(b, expect, HO_MSG_SIZE);
  struct ho_msg d;
  assert_true(ho_msg_decode(b, HO_MSG_SIZE, &d));
  assert_true(d.next_qpn == 0x123456 && d.op == HO_WIRE_PUT && d.version == 2);
  for (int i = 28; i < HO_MSG_SIZE; i++) {
    b[i] = 1;
    assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d));
    b[i] = 0;
  }
  b[27] = 0;
  assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d)); /* no op */
  b[27] = 3;
  assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d)); /* unknown op */
  b[27] = HO_WIRE_GET;
  assert_true(ho_msg_decode(b, HO_MSG_SIZE, &d));
  b[4] = HO_MSG_FINAL; /* a final announces no QP */
  assert_false(ho_msg_decode(b, HO_MSG_SIZE, &d));
  b[24] = b[25] = b[26] = 0;
  assert_true(ho_msg_decode(b, HO_MSG_SIZE, &d));
  assert_int_equal(ho_wire_op(HIPOBJ_RDMA_OP_GET), HO_WIRE_GET);
  assert_int_equal(ho_wire_op(HIPOBJ_RDMA_OP_PUT), HO_WIRE_PUT);
}

/* The server's offer in the reserved fields of its token, and the tag in
 * the top byte of a client token's QP number. */
static void offers_and_tags(void **state)
{
  (void)state;
  struct ho_token t = {.transport = HO_TRANSPORT_RC, .qpn = 0x11};
  struct ho_conn_offer o;
  assert_true(ho_offer_decode(&t, &o)); /* a version-1 server: zeros */
  assert_true(o.version == 1 && !o.reuse && o.conn_id == 0);
  struct ho_conn_offer v2 = {
      .version = HO_PROTO_V2, .reuse = true, .conn_id = 0xa1b2c3d4e5f60718ull};
  ho_offer_encode(&v2, &t);
  char hex[HO_TOKEN_HEX + 1];
  ho_token_encode(&t, hex);
  /* rkey bytes 21..24 = 02 01 00 00; length bytes 33..40 = the ID, LE */
  assert_memory_equal(hex + 42, "02010000", 8);
  assert_memory_equal(hex + 66, "1807f6e5d4c3b2a1", 16);
  assert_true(ho_offer_decode(&t, &o));
  assert_true(o.version == 2 && o.reuse && !o.probes &&
              o.conn_id == v2.conn_id);
  /* Version 3's flags byte: probes answered, rkey bytes 02 01 01 00 */
  v2.probes = true;
  ho_offer_encode(&v2, &t);
  ho_token_encode(&t, hex);
  assert_memory_equal(hex + 42, "02010100", 8);
  assert_true(ho_offer_decode(&t, &o));
  assert_true(o.version == 2 && o.reuse && o.probes);
  t.rkey = 0x0201; /* reuse 2 */
  assert_false(ho_offer_decode(&t, &o));
  t.rkey = 0x20002; /* an unknown flag */
  assert_false(ho_offer_decode(&t, &o));
  t.rkey = 0x1000002; /* a reserved byte */
  assert_false(ho_offer_decode(&t, &o));
  t.rkey = 3; /* version 3 */
  assert_false(ho_offer_decode(&t, &o));
  t.rkey = 2;
  t.len = 0x00ffffffffffffffull; /* tag 0 */
  assert_false(ho_offer_decode(&t, &o));
  t.rkey = 0;
  t.len = 5; /* version 1 with a length */
  assert_false(ho_offer_decode(&t, &o));
  struct ho_token c = {.qpn = 0xa1000011};
  assert_int_equal(ho_token_qpn(&c), 0x11);
  assert_int_equal(ho_token_tag(&c), 0xa1);
  assert_int_equal(ho_conn_tag(v2.conn_id), 0xa1);
}

/* The server token's fixed fields: RC, no tag, a port, the LID of the
 * link layer. */
static void server_token_fields(void **state)
{
  (void)state;
  struct ho_token t = {.transport = HO_TRANSPORT_RC, .qpn = 0x000123, .port = 1};
  assert_true(ho_server_token_ok(&t, true));
  t.qpn = 0x01000123;
  assert_false(ho_server_token_ok(&t, true));
  t.qpn = 0x123;
  t.port = 0;
  assert_false(ho_server_token_ok(&t, true));
  t.port = 2;
  t.lid = 7;
  assert_false(ho_server_token_ok(&t, true)); /* RoCE: LID 0 */
  assert_true(ho_server_token_ok(&t, false)); /* InfiniBand: unicast LID */
  t.lid = 0;
  assert_false(ho_server_token_ok(&t, false));
  t.lid = 0xc000; /* multicast */
  assert_false(ho_server_token_ok(&t, false));
  t.lid = 0;
  t.transport = HO_TRANSPORT_DC;
  assert_false(ho_server_token_ok(&t, true));
}

static void psns_from_cookie(void **state)
{
  (void)state;
  /* The vectors of docs/protocol.md. */
  assert_int_equal(ho_psn_from_cookie(0x0123456789abcdefull, HO_PSN_CLIENT_TO_SERVER),
                   0x8faa9d);
  assert_int_equal(ho_psn_from_cookie(0x0123456789abcdefull, HO_PSN_SERVER_TO_CLIENT),
                   0xa1d093);
  for (uint64_t c = 1; c < 1000; c++)
    assert_true(ho_psn_from_cookie(c * 0x1000193, HO_PSN_CLIENT_TO_SERVER) <= 0xffffff);
}

static void pure_helpers(void **state)
{
  (void)state;
  unsigned a = 9, b = 9, c = 9;
  assert_int_equal(hipObjGetVersion(&a, &b, &c).opError, hipObjSuccess);
  assert_int_equal(a, HIPOBJ_VERSION_MAJOR);
  assert_int_equal(hipObjGetVersion(NULL, NULL, NULL).opError, hipObjSuccess);
  assert_string_equal(hipObjGetVersionString(), "0.1.0");
  assert_ptr_equal(hipObjGetVersionString(), hipObjGetVersionString());
  for (int i = 0; i <= 13; i++)
    assert_string_not_equal(hipObjGetErrorString((hipObjOpError_t)i), "unknown error");
  assert_string_equal(hipObjGetErrorString((hipObjOpError_t)14), "unknown error");
  assert_string_equal(hipObjGetErrorString((hipObjOpError_t)-1), "unknown error");
  /* The ABI values of the error codes. */
  assert_int_equal(hipObjBusy, 13);
  assert_int_equal(hipObjNotSupported, 12);
  assert_int_equal(hipObjS3Error, 5);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(v1_encodes),        cmocka_unit_test(v2_roundtrip),
      cmocka_unit_test(upper_case_accepted), cmocka_unit_test(hostile_tokens_rejected),
      cmocka_unit_test(client_nic),        cmocka_unit_test(reply_grammar),
      cmocka_unit_test(reply_hostile),     cmocka_unit_test(reply_data_first),
      cmocka_unit_test(messages_v1),
      cmocka_unit_test(messages_v2),
      cmocka_unit_test(offers_and_tags),   cmocka_unit_test(server_token_fields),
      cmocka_unit_test(psns_from_cookie),  cmocka_unit_test(pure_helpers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
