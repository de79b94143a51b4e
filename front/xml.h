/* SPDX-License-Identifier: MIT */
/* Just enough XML for S3 request bodies: a strict, bounded, non-validating
 * parser into a small tree, and escaping for the documents the server
 * writes. No DTDs (so no entity expansion), no mixed content, depth and
 * node count bounded. Pure functions. */
#ifndef HS_XML_H
#define HS_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "err.h"

#define HS_XML_MAX_DEPTH 32
#define HS_XML_MAX_NODES 65536

struct hs_xml_node {
  const char *name; /* local name (namespace prefix dropped), in the input */
  size_t name_len;
  const char *text; /* decoded text of a leaf element, in the doc's arena */
  size_t text_len;
  int parent, first_child, next; /* node indices, -1 for none */
};

struct hs_xml_doc {
  struct hs_xml_node *nodes; /* nodes[0] is the root element */
  size_t n;
  char *arena;
};

/* Parses one document. The input must outlive the doc (names point into
 * it). Errors: HS_ERR_MALFORMED_XML, HS_ERR_NOMEM. */
enum hs_err hs_xml_parse(const char *in, size_t len, struct hs_xml_doc *doc);
void hs_xml_free(struct hs_xml_doc *doc);

/* Whether node i is named `name` (local name, exact). */
bool hs_xml_is(const struct hs_xml_doc *d, int i, const char *name);
/* The first child of `parent` named `name` (any name if NULL); -1 if none.
 * hs_xml_next: the next sibling of `node` named `name`; -1 if none. */
int hs_xml_child(const struct hs_xml_doc *d, int parent, const char *name);
int hs_xml_next(const struct hs_xml_doc *d, int node, const char *name);

/* Appends s with & < > " ' escaped; control characters other than tab, LF
 * and CR become character references. */
bool hs_xml_escape(struct hs_buf *out, const char *s, size_t len);

#endif
