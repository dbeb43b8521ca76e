/* Reads the two strings Azure puts in an error body, <Error><Code> and
 * <Error><Message>, with expat. Anything with a DOCTYPE is refused outright,
 * so entity expansion (billion laughs, external entities) never happens. */
#include "xmlerr.h"

#include <expat.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define XMLERR_MAX_INPUT (1024u * 1024u)

enum { FIELD_NONE = 0, FIELD_CODE, FIELD_MESSAGE };

typedef struct {
  XML_Parser parser;
  ll_xml_error *out;
  int depth;      /* 1 is the root element */
  int root_error; /* the root element is <Error> */
  int field;      /* which field the current depth-2 element fills */
  int seen_code, seen_message;
  int refused;               /* a DOCTYPE or entity declaration was met */
  int code_cut, message_cut; /* the field is full: no more is taken */
} xml_state;

/* A byte of a token a message may quote: a lease ID's hex digits and
 * hyphens, a SAS signature's base64 (any encoding of it) or a word. */
static int tokenish(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '/' ||
         c == '_' || c == '%' || c == '=';
}

/* Appends without overflowing; a truncation never leaves half a UTF-8
 * sequence at the end, and once cut (*cut) the field takes no more. A
 * cut inside a token (tokenish) also drops the part of it
 * that was kept: a lease ID or a signature the body quotes is never left
 * as its first bytes, which no later step could tell from other text. */
static void append_text(char *dst, size_t cap, const char *s, int len,
                        int *cut) {
  size_t used = strlen(dst);
  if (*cut || len <= 0)
    return;
  size_t room = used + 1 < cap ? cap - 1 - used : 0;
  size_t n = (size_t)len;
  if (n > room) {
    n = room;
    *cut = 1;
    /* Back off continuation bytes, then the lead byte they belong to. */
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
      n--;
  }
  memcpy(dst + used, s, n);
  dst[used + n] = '\0';
  if (*cut && tokenish(s[n])) {
    size_t end = used + n;
    while (end > 0 && tokenish(dst[end - 1]))
      end--;
    dst[end] = '\0';
  }
}

static void XMLCALL on_start(void *ud, const XML_Char *name,
                             const XML_Char **atts) {
  xml_state *st = ud;
  (void)atts;
  st->depth++;
  if (st->depth == 1) {
    st->root_error = strcmp(name, "Error") == 0;
  } else if (st->depth == 2 && st->root_error) {
    /* First occurrence wins; a repeated element is ignored. */
    if (strcmp(name, "Code") == 0 && !st->seen_code) {
      st->field = FIELD_CODE;
      st->seen_code = 1;
    } else if (strcmp(name, "Message") == 0 && !st->seen_message) {
      st->field = FIELD_MESSAGE;
      st->seen_message = 1;
    }
  }
}

static void XMLCALL on_end(void *ud, const XML_Char *name) {
  xml_state *st = ud;
  (void)name;
  if (st->depth == 2)
    st->field = FIELD_NONE;
  st->depth--;
}

/* Only text directly inside Error/Code or Error/Message is taken, verbatim
 * (expat has already resolved the predefined entities and CRLF). */
static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
  xml_state *st = ud;
  if (st->depth != 2 || st->field == FIELD_NONE)
    return;
  if (st->field == FIELD_CODE)
    append_text(st->out->code, sizeof st->out->code, s, len, &st->code_cut);
  else /* a hostile server may quote a secret in either */
    append_text(st->out->message, sizeof st->out->message, s, len,
                &st->message_cut);
}

static void refuse(xml_state *st) {
  st->refused = 1;
  XML_StopParser(st->parser, XML_FALSE);
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name,
                               const XML_Char *sysid, const XML_Char *pubid,
                               int has_internal_subset) {
  (void)name;
  (void)sysid;
  (void)pubid;
  (void)has_internal_subset;
  refuse(ud);
}

static void XMLCALL on_entity_decl(void *ud, const XML_Char *name, int is_param,
                                   const XML_Char *value, int value_len,
                                   const XML_Char *base, const XML_Char *sysid,
                                   const XML_Char *pubid,
                                   const XML_Char *notation) {
  (void)name;
  (void)is_param;
  (void)value;
  (void)value_len;
  (void)base;
  (void)sysid;
  (void)pubid;
  (void)notation;
  refuse(ud);
}

static int only_space(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
      return 0;
  return 1;
}

ll_status ll_xmlerr_parse(const char *body, size_t len, ll_xml_error *out) {
  if (!out)
    return LL_E_USAGE;
  memset(out, 0, sizeof *out);
  if (!body && len > 0)
    return LL_E_USAGE;
  if (len > XMLERR_MAX_INPUT)
    return LL_E_TOO_LARGE;
  /* Azure prefixes a UTF-8 BOM; drop it so the declaration comes first. */
  if (len >= 3 && (unsigned char)body[0] == 0xEF &&
      (unsigned char)body[1] == 0xBB && (unsigned char)body[2] == 0xBF) {
    body += 3;
    len -= 3;
  }
  if (len == 0 || only_space(body, len))
    return LL_OK;

  /* expat allocates through the counted allocator, so a failure inside it
   * is seen by whoever builds the row from this parse (alloc.h). */
  static const XML_Memory_Handling_Suite mem = {ll_malloc, ll_realloc, free};
  XML_Parser p = XML_ParserCreate_MM("UTF-8", &mem, NULL);
  if (!p)
    return LL_E_NOMEM;
  xml_state st = {.parser = p, .out = out};
  XML_SetUserData(p, &st);
  XML_SetElementHandler(p, on_start, on_end);
  XML_SetCharacterDataHandler(p, on_text);
  XML_SetStartDoctypeDeclHandler(p, on_doctype);
  XML_SetEntityDeclHandler(p, on_entity_decl);
  XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_NEVER);

  ll_status rc = LL_OK;
  if (XML_Parse(p, body, (int)len, XML_TRUE) != XML_STATUS_OK || st.refused)
    rc = XML_GetErrorCode(p) == XML_ERROR_NO_MEMORY ? LL_E_NOMEM : LL_E_PARSE;
  XML_ParserFree(p);
  if (rc != LL_OK)
    memset(out, 0, sizeof *out); /* never half a result */
  return rc;
}
