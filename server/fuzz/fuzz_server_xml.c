/* SPDX-License-Identifier: MIT */
/* The XML parser and the request bodies built on it (Complete, Delete with
 * its conditions, CreateBucketConfiguration, Tagging), the x-amz-tagging
 * header and ISO 8601 dates. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3_xml.h"
#include "timefmt.h"
#include "xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *s = (const char *)data;
  struct hs_xml_doc d;
  if (hs_xml_parse(s, size, &d) == HS_OK) {
    for (size_t i = 0; i < d.n; i++) {
      const struct hs_xml_node *n = &d.nodes[i];
      if (n->name_len == 0 || (n->text_len && !n->text))
        abort();
      if (n->text && (n->text < d.arena || n->text + n->text_len >
                                               d.arena + size + 1))
        abort();
    }
    hs_xml_free(&d);
  }
  struct hs_part_ref *parts;
  size_t n;
  if (hs_parse_complete(s, size, &parts, &n) == HS_OK) {
    for (size_t i = 0; i < n; i++)
      if (parts[i].number < 1 || parts[i].number > 10000)
        abort();
    free(parts);
  }
  struct hs_delete_list l;
  if (hs_parse_delete(s, size, &l) == HS_OK)
    hs_delete_list_free(&l);
  hs_parse_create_bucket(s, size);
  /* tag sets: from XML, and (NUL-terminated) from x-amz-tagging; a set
   * is "key\tvalue\n" lines, at most HS_MAX_TAGS, keys unique */
  char *tags = NULL;
  const char *msg;
  if (hs_parse_tagging(s, size, &tags, &msg) == HS_OK) {
    size_t lines = 0;
    for (const char *p = tags; *p; p++)
      lines += *p == '\n';
    if (lines > HS_MAX_TAGS)
      abort();
    free(tags);
  }
  char *z = malloc(size + 1);
  if (z) {
    memcpy(z, s, size);
    z[size] = '\0';
    if (hs_parse_tagging_header(z, &tags, &msg) == HS_OK)
      free(tags);
    int64_t t;
    hs_time_parse_iso8601(z, strlen(z), &t);
    free(z);
  }
  return 0;
}
