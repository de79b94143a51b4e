/* SPDX-License-Identifier: MIT */
/* The XML parser and the S3 request bodies built on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "s3_xml.h"
#include "xml.h"

static void tree(void **state)
{
  const char *s =
      "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!-- a comment -->\n"
      "<s3:Root xmlns:s3=\"http://s3.amazonaws.com/doc/2006-03-01/\" a='1'>\n"
      "  <A>x &amp; y &lt;&gt;&quot;&apos; &#65;&#x42;&#xe9;</A>\n"
      "  <B><![CDATA[<raw> & ]]>tail</B>\n"
      "  <C/>\n"
      "  <A>second</A>\n"
      "  <D><E>deep</E><!-- c --></D>\n"
      "</s3:Root>\n";
  struct hs_xml_doc d;
  assert_int_equal(hs_xml_parse(s, strlen(s), &d), HS_OK);
  assert_true(hs_xml_is(&d, 0, "Root"));
  int a = hs_xml_child(&d, 0, "A");
  assert_true(a > 0);
  assert_int_equal(d.nodes[a].text_len, strlen("x & y <>\"' AB\xc3\xa9"));
  assert_memory_equal(d.nodes[a].text, "x & y <>\"' AB\xc3\xa9",
                      d.nodes[a].text_len);
  int a2 = hs_xml_next(&d, a, "A");
  assert_memory_equal(d.nodes[a2].text, "second", 6);
  assert_int_equal(hs_xml_next(&d, a2, "A"), -1);
  int b = hs_xml_child(&d, 0, "B");
  assert_int_equal(d.nodes[b].text_len, 12);
  assert_memory_equal(d.nodes[b].text, "<raw> & tail", 12);
  int c = hs_xml_child(&d, 0, "C");
  assert_int_equal(d.nodes[c].text_len, 0);
  int dd = hs_xml_child(&d, 0, "D");
  int e = hs_xml_child(&d, dd, "E");
  assert_memory_equal(d.nodes[e].text, "deep", 4);
  assert_int_equal(d.nodes[dd].text_len, 0);
  assert_int_equal(hs_xml_child(&d, 0, "Z"), -1);
  hs_xml_free(&d);
}

static void malformed(void **state)
{
  static const char *const bad[] = {
      "", "   ", "<", "<a>", "<a></b>", "<a><b></a></b>", "<a/><b/>",
      "text<a/>", "<a/>text", "<a>&unknown;</a>", "<a>&#0;</a>",
      "<a>&#xD800;</a>", "<a>&#x110000;</a>", "<a>&amp</a>", "<a b></a>",
      "<a b=1></a>", "<a b=\"1></a>", "<a b=\"<\"></a>", "<a b='1'c='2'/>",
      "<!DOCTYPE a><a/>",
      ("<?xml version='1.0'?><!DOCTYPE a [<!ENTITY x 'y'>]>"
       "<a>&x;</a>"),
      "<a>mixed<b/>content</a>", "<a><b/>mixed</a>",
      "<a><![CDATA[open</a>", "<a><!-- open</a>", "<:a/>", "<a:/>",
      "</a>", "<a/ >"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct hs_xml_doc d;
    if (hs_xml_parse(bad[i], strlen(bad[i]), &d) == HS_OK)
      fail_msg("accepted #%zu: %s", i, bad[i]);
  }
  /* an embedded NUL */
  struct hs_xml_doc dn;
  assert_int_equal(hs_xml_parse("<a>\0</a>", 8, &dn), HS_ERR_MALFORMED_XML);
  /* depth and size limits */
  char deep[40 * 8];
  size_t n = 0;
  for (int i = 0; i < 40; i++)
    n += (size_t)sprintf(deep + n, "<a>");
  struct hs_xml_doc d;
  assert_int_equal(hs_xml_parse(deep, n, &d), HS_ERR_MALFORMED_XML);
}

static void complete_upload(void **state)
{
  const char *s =
      "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/"
      "2006-03-01/\"><Part><ETag>\"0CC175B9C0F1B6A831C399E269772661\"</ETag>"
      "<PartNumber>1</PartNumber></Part><Part><PartNumber> 3 </PartNumber>"
      "<ETag>&quot;92eb5ffee6ae2fec3ad71c777531578f-2&quot;</ETag>"
      "<ChecksumCRC32>x</ChecksumCRC32></Part></CompleteMultipartUpload>";
  struct hs_part_ref *p;
  size_t n;
  assert_int_equal(hs_parse_complete(s, strlen(s), &p, &n), HS_OK);
  assert_int_equal(n, 2);
  assert_int_equal(p[0].number, 1);
  assert_string_equal(p[0].etag, "0cc175b9c0f1b6a831c399e269772661");
  assert_int_equal(p[1].number, 3);
  assert_string_equal(p[1].etag, "92eb5ffee6ae2fec3ad71c777531578f-2");
  free(p);
  static const char *const bad[] = {
      "<CompleteMultipartUpload/>",
      "<Other><Part><PartNumber>1</PartNumber><ETag>"
      "0cc175b9c0f1b6a831c399e269772661</ETag></Part></Other>",
      "<CompleteMultipartUpload><Part><PartNumber>0</PartNumber><ETag>"
      "0cc175b9c0f1b6a831c399e269772661</ETag></Part></CompleteMultipartUpload>",
      "<CompleteMultipartUpload><Part><PartNumber>10001</PartNumber><ETag>"
      "0cc175b9c0f1b6a831c399e269772661</ETag></Part></CompleteMultipartUpload>",
      "<CompleteMultipartUpload><Part><PartNumber>-1</PartNumber><ETag>"
      "0cc175b9c0f1b6a831c399e269772661</ETag></Part></CompleteMultipartUpload>",
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
      "</Part></CompleteMultipartUpload>",
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>nothex"
      "</ETag></Part></CompleteMultipartUpload>",
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><PartNumber>2"
      "</PartNumber><ETag>0cc175b9c0f1b6a831c399e269772661</ETag></Part>"
      "</CompleteMultipartUpload>",
      "<CompleteMultipartUpload><Part><PartNumber><x/></PartNumber><ETag>"
      "0cc175b9c0f1b6a831c399e269772661</ETag></Part></CompleteMultipartUpload>",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (hs_parse_complete(bad[i], strlen(bad[i]), &p, &n) !=
        HS_ERR_MALFORMED_XML)
      fail_msg("accepted #%zu", i);
}

static void delete_objects(void **state)
{
  const char *s = "<Delete><Quiet>true</Quiet><Object><Key>a&amp;b</Key>"
                  "</Object><Object><Key>c/d</Key><VersionId>1</VersionId>"
                  "</Object></Delete>";
  struct hs_delete_list l;
  assert_int_equal(hs_parse_delete(s, strlen(s), &l), HS_OK);
  assert_true(l.quiet);
  assert_int_equal(l.n, 2);
  assert_string_equal(l.keys[0], "a&b");
  assert_string_equal(l.keys[1], "c/d");
  hs_delete_list_free(&l);
  static const char *const bad[] = {
      "<Delete/>",
      ("<Delete><Quiet>yes</Quiet><Object><Key>a</Key></Object>"
       "</Delete>"),
      "<Delete><Object><Key></Key></Object></Delete>",
      "<Delete><Object></Object></Delete>",
      "<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>",
      "<Remove><Object><Key>a</Key></Object></Remove>",
      "<Delete><Object><Key>&#xFFFF;\xff</Key></Object></Delete>"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (hs_parse_delete(bad[i], strlen(bad[i]), &l) == HS_OK)
      fail_msg("accepted #%zu", i);
  /* 1001 objects */
  struct hs_buf b;
  hs_buf_init(&b, 0);
  hs_buf_puts(&b, "<Delete>");
  for (int i = 0; i < 1001; i++)
    hs_buf_printf(&b, "<Object><Key>k%d</Key></Object>", i);
  hs_buf_puts(&b, "</Delete>");
  assert_int_equal(hs_parse_delete(b.data, b.len, &l), HS_ERR_MALFORMED_XML);
  hs_buf_free(&b);
}

static void create_bucket(void **state)
{
  assert_int_equal(hs_parse_create_bucket("", 0), HS_OK);
  assert_int_equal(hs_parse_create_bucket(" \n", 2), HS_OK);
  const char *s = "<CreateBucketConfiguration><LocationConstraint>eu-west-1"
                  "</LocationConstraint></CreateBucketConfiguration>";
  assert_int_equal(hs_parse_create_bucket(s, strlen(s)), HS_OK);
  assert_int_equal(hs_parse_create_bucket("<x/>", 4), HS_ERR_MALFORMED_XML);
  assert_int_equal(hs_parse_create_bucket("<x", 2), HS_ERR_MALFORMED_XML);
}

static void escape(void **state)
{
  struct hs_buf b;
  hs_buf_init(&b, 0);
  const char *in = "<a href=\"x\">'&'\x01\t</a>";
  hs_xml_escape(&b, in, strlen(in));
  assert_string_equal(hs_buf_cstr(&b),
                      "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&#x1;\t"
                      "&lt;/a&gt;");
  hs_buf_free(&b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tree),           cmocka_unit_test(malformed),
      cmocka_unit_test(complete_upload), cmocka_unit_test(delete_objects),
      cmocka_unit_test(create_bucket),  cmocka_unit_test(escape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
