/* SPDX-License-Identifier: MIT */
/* The XML parser and the request bodies built on it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3_xml.h"
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
  return 0;
}
