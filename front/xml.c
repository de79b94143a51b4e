/* SPDX-License-Identifier: MIT */
#include "xml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"

struct parser {
  const char *s;
  size_t len;
  size_t i;
  struct hs_xml_doc doc;
  size_t cap;
  size_t arena_used;
  int stack[HS_XML_MAX_DEPTH];
  const char *qname[HS_XML_MAX_DEPTH]; /* qualified names, to match end tags */
  size_t qlen[HS_XML_MAX_DEPTH];
  int depth;
  bool has_root;
  bool text_blocked; /* current element had a child: text must be blank */
  enum hs_err err;
};

static bool is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_name_char(char c)
{
  return !is_space(c) && c != '<' && c != '>' && c != '/' && c != '=' &&
         c != '"' && c != '\'' && c != '&' && c != '\0' && c != '?' &&
         c != '!';
}

static bool starts(const struct parser *p, const char *lit)
{
  size_t n = strlen(lit);
  return p->len - p->i >= n && memcmp(p->s + p->i, lit, n) == 0;
}

static void skip_space(struct parser *p)
{
  while (p->i < p->len && is_space(p->s[p->i]))
    p->i++;
}

/* Skips to just past `end`; false if it never comes. */
static bool skip_past(struct parser *p, const char *end)
{
  size_t n = strlen(end);
  while (p->len - p->i >= n) {
    if (memcmp(p->s + p->i, end, n) == 0) {
      p->i += n;
      return true;
    }
    p->i++;
  }
  return false;
}

static bool fail(struct parser *p)
{
  if (p->err == HS_OK)
    p->err = HS_ERR_MALFORMED_XML;
  return false;
}

static bool parse_name(struct parser *p, const char **name, size_t *len)
{
  size_t start = p->i;
  while (p->i < p->len && is_name_char(p->s[p->i]))
    p->i++;
  if (p->i == start)
    return fail(p);
  *name = p->s + start;
  *len = p->i - start;
  return true;
}

static bool parse_attributes(struct parser *p)
{
  for (;;) {
    size_t before = p->i;
    skip_space(p);
    if (p->i >= p->len)
      return fail(p);
    char c = p->s[p->i];
    if (c == '>' || c == '/')
      return true;
    if (p->i == before)
      return fail(p); /* attributes must be separated by blanks */
    const char *n;
    size_t nl;
    if (!parse_name(p, &n, &nl))
      return false;
    skip_space(p);
    if (p->i >= p->len || p->s[p->i] != '=')
      return fail(p);
    p->i++;
    skip_space(p);
    if (p->i >= p->len || (p->s[p->i] != '"' && p->s[p->i] != '\''))
      return fail(p);
    char q = p->s[p->i++];
    const char *end = memchr(p->s + p->i, q, p->len - p->i);
    if (!end || memchr(p->s + p->i, '<', (size_t)(end - (p->s + p->i))))
      return fail(p);
    p->i = (size_t)(end - p->s) + 1;
  }
}

static bool add_node(struct parser *p, const char *qn, size_t ql)
{
  if (p->depth == HS_XML_MAX_DEPTH || p->doc.n == HS_XML_MAX_NODES)
    return fail(p);
  if (p->depth == 0 && p->has_root)
    return fail(p); /* a second root */
  if (p->doc.n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 16;
    struct hs_xml_node *nn = realloc(p->doc.nodes, cap * sizeof *nn);
    if (!nn) {
      p->err = HS_ERR_NOMEM;
      return false;
    }
    p->doc.nodes = nn;
    p->cap = cap;
  }
  int idx = (int)p->doc.n++;
  struct hs_xml_node *nd = &p->doc.nodes[idx];
  const char *colon = memchr(qn, ':', ql);
  if (colon == qn)
    return fail(p); /* an empty prefix */
  nd->name = colon ? colon + 1 : qn;
  nd->name_len = colon ? ql - (size_t)(colon + 1 - qn) : ql;
  if (nd->name_len == 0)
    return fail(p);
  nd->text = NULL;
  nd->text_len = 0;
  nd->first_child = -1;
  nd->next = -1;
  nd->parent = p->depth ? p->stack[p->depth - 1] : -1;
  if (nd->parent >= 0) {
    struct hs_xml_node *par = &p->doc.nodes[nd->parent];
    for (size_t k = 0; k < par->text_len; k++)
      if (!is_space(par->text[k]))
        return fail(p); /* mixed content */
    par->text = NULL;
    par->text_len = 0;
    if (par->first_child < 0) {
      par->first_child = idx;
    } else {
      int c = par->first_child;
      while (p->doc.nodes[c].next >= 0)
        c = p->doc.nodes[c].next;
      p->doc.nodes[c].next = idx;
    }
  }
  p->has_root = true;
  return true;
}

static bool open_tag(struct parser *p)
{
  p->i++; /* '<' */
  const char *qn;
  size_t ql;
  if (!parse_name(p, &qn, &ql) || !parse_attributes(p) || !add_node(p, qn, ql))
    return false;
  int idx = (int)p->doc.n - 1;
  if (p->s[p->i] == '/') {
    if (p->i + 1 >= p->len || p->s[p->i + 1] != '>')
      return fail(p);
    p->i += 2;
    p->text_blocked = p->depth > 0;
    return true;
  }
  p->i++; /* '>' */
  p->stack[p->depth] = idx;
  p->qname[p->depth] = qn;
  p->qlen[p->depth] = ql;
  p->depth++;
  p->text_blocked = false;
  return true;
}

static bool close_tag(struct parser *p)
{
  p->i += 2; /* "</" */
  const char *qn;
  size_t ql;
  if (!parse_name(p, &qn, &ql))
    return false;
  skip_space(p);
  if (p->i >= p->len || p->s[p->i] != '>' || p->depth == 0)
    return fail(p);
  p->i++;
  p->depth--;
  if (ql != p->qlen[p->depth] || memcmp(qn, p->qname[p->depth], ql) != 0)
    return fail(p);
  p->text_blocked = p->depth > 0;
  return true;
}

/* Appends code point cp as UTF-8 to the arena. */
static bool put_cp(struct parser *p, uint32_t cp)
{
  char *o = p->doc.arena + p->arena_used;
  if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return fail(p);
  if (cp < 0x80) {
    o[0] = (char)cp;
    p->arena_used += 1;
  } else if (cp < 0x800) {
    o[0] = (char)(0xc0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3f));
    p->arena_used += 2;
  } else if (cp < 0x10000) {
    o[0] = (char)(0xe0 | cp >> 12);
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    p->arena_used += 3;
  } else {
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    p->arena_used += 4;
  }
  return true;
}

/* An entity reference at p->i ('&'); never longer decoded than encoded. */
static bool entity(struct parser *p)
{
  const char *semi = memchr(p->s + p->i, ';', p->len - p->i);
  if (!semi || semi - (p->s + p->i) > 12)
    return fail(p);
  const char *e = p->s + p->i + 1;
  size_t n = (size_t)(semi - e);
  p->i = (size_t)(semi - p->s) + 1;
  static const struct {
    const char *name;
    char c;
  } named[] = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'},
               {"apos", '\''}};
  for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
    if (strlen(named[k].name) == n && memcmp(e, named[k].name, n) == 0)
      return put_cp(p, (uint32_t)named[k].c);
  if (n < 2 || e[0] != '#')
    return fail(p);
  bool hex = e[1] == 'x';
  size_t k = hex ? 2 : 1;
  if (k == n)
    return fail(p);
  uint32_t cp = 0;
  for (; k < n; k++) {
    char c = e[k];
    int d = hex ? ho_hex_digit(c) : c >= '0' && c <= '9' ? c - '0' : -1;
    if (d < 0)
      return fail(p);
    cp = cp * (hex ? 16 : 10) + (uint32_t)d;
    if (cp > 0x10ffff)
      return fail(p);
  }
  return put_cp(p, cp);
}

static bool text(struct parser *p)
{
  if (p->depth == 0) {
    /* outside the root only blanks */
    if (!is_space(p->s[p->i]))
      return fail(p);
    p->i++;
    return true;
  }
  struct hs_xml_node *nd = &p->doc.nodes[p->stack[p->depth - 1]];
  size_t before = p->arena_used;
  if (starts(p, "<![CDATA[")) {
    p->i += 9;
    size_t start = p->i;
    if (!skip_past(p, "]]>"))
      return fail(p);
    size_t n = p->i - 3 - start;
    memcpy(p->doc.arena + p->arena_used, p->s + start, n);
    p->arena_used += n;
  } else if (p->s[p->i] == '&') {
    if (!entity(p))
      return false;
  } else {
    char c = p->s[p->i++];
    if (c == '\0')
      return fail(p);
    p->doc.arena[p->arena_used++] = c;
  }
  bool blank = true;
  for (size_t k = before; k < p->arena_used; k++)
    blank = blank && is_space(p->doc.arena[k]);
  if (nd->first_child >= 0 || p->text_blocked) {
    p->arena_used = before; /* blanks between children are dropped */
    return blank ? true : fail(p);
  }
  if (!nd->text)
    nd->text = p->doc.arena + before;
  nd->text_len += p->arena_used - before;
  return true;
}

static bool step(struct parser *p)
{
  if (starts(p, "<?"))
    return skip_past(p, "?>") ? true : fail(p);
  if (starts(p, "<!--"))
    return skip_past(p, "-->") ? true : fail(p);
  if (starts(p, "<![CDATA["))
    return text(p);
  if (starts(p, "<!"))
    return fail(p); /* DOCTYPE and friends: never */
  if (starts(p, "</"))
    return close_tag(p);
  if (p->s[p->i] == '<')
    return open_tag(p);
  return text(p);
}

enum hs_err hs_xml_parse(const char *in, size_t len, struct hs_xml_doc *doc)
{
  struct parser p = {.s = in, .len = len, .err = HS_OK};
  p.doc.arena = malloc(len + 1);
  if (!p.doc.arena)
    return HS_ERR_NOMEM;
  if (starts(&p, "\xef\xbb\xbf"))
    p.i = 3;
  while (p.i < p.len)
    if (!step(&p))
      goto fail;
  if (!p.has_root || p.depth != 0) {
    fail(&p);
    goto fail;
  }
  /* Text pointers were set while the arena could still move: it never
   * moves (allocated once), so they are final. Terminate nothing: lengths
   * are explicit. */
  *doc = p.doc;
  return HS_OK;
fail:
  free(p.doc.nodes);
  free(p.doc.arena);
  return p.err == HS_OK ? HS_ERR_MALFORMED_XML : p.err;
}

void hs_xml_free(struct hs_xml_doc *doc)
{
  if (!doc)
    return;
  free(doc->nodes);
  free(doc->arena);
  doc->nodes = NULL;
  doc->arena = NULL;
  doc->n = 0;
}

bool hs_xml_is(const struct hs_xml_doc *d, int i, const char *name)
{
  size_t n = strlen(name);
  return i >= 0 && (size_t)i < d->n && d->nodes[i].name_len == n &&
         memcmp(d->nodes[i].name, name, n) == 0;
}

int hs_xml_next(const struct hs_xml_doc *d, int node, const char *name)
{
  for (int c = node >= 0 ? d->nodes[node].next : -1; c >= 0;
       c = d->nodes[c].next)
    if (!name || hs_xml_is(d, c, name))
      return c;
  return -1;
}

int hs_xml_child(const struct hs_xml_doc *d, int parent, const char *name)
{
  int c = parent >= 0 ? d->nodes[parent].first_child : -1;
  if (c < 0 || !name || hs_xml_is(d, c, name))
    return c;
  return hs_xml_next(d, c, name);
}

bool hs_xml_escape(struct hs_buf *out, const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '&': hs_buf_puts(out, "&amp;"); break;
    case '<': hs_buf_puts(out, "&lt;"); break;
    case '>': hs_buf_puts(out, "&gt;"); break;
    case '"': hs_buf_puts(out, "&quot;"); break;
    case '\'': hs_buf_puts(out, "&apos;"); break;
    default:
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
        hs_buf_printf(out, "&#x%X;", c);
      else
        hs_buf_putc(out, (char)c);
    }
  }
  return !out->failed;
}
