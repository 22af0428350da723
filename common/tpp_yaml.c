/*
 * tpp_yaml.c - libyaml document loading and table-driven struct filling
 * (see tpp_yaml.h).  libyaml marks are 0-based; messages are 1-based.
 */
#include "tpp_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int tpp_y_err(struct tpp_ydoc *d, const yaml_node_t *node, struct tpp_err *err,
	      const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (node)
		return tpp_err_set(err, TPP_E_INPUT, d->path,
				   (int)node->start_mark.line + 1,
				   (int)node->start_mark.column + 1, "%s", msg);
	return tpp_err_set(err, TPP_E_INPUT, d->path, 0, 0, "%s", msg);
}

/* Largest YAML file read, and the deepest flow nesting ([ and {) allowed:
 * libyaml's loader takes time quadratic in the flow nesting depth (a
 * 150000-deep "[[[..." runs for minutes), and no tpplan file nests
 * deeper than a few levels.  Block nesting ("- - - x", indentation) is
 * linear in libyaml and not limited here. */
#define TPP_YAML_MAX_BYTES (64L << 20)
#define TPP_YAML_MAX_DEPTH 64

/*
 * Deepest flow nesting of text[0..n), taken from libyaml's own event
 * stream before the document is loaded, so that quotes, apostrophes in
 * plain scalars ("Megatron's"), comments and brackets inside scalars
 * are told apart exactly as the loader tells them.  The scanner looks
 * ahead at most one line or 1024 characters for a simple key, so the
 * check stops after a bounded amount of work at the collection that
 * goes past TPP_YAML_MAX_DEPTH and errors there (line and character
 * column of its '[' or '{').  A syntax error ends the check quietly:
 * the load that follows reports it, with its context.  A flow
 * collection holds only flow collections (their start events say the
 * flow style), so while inside one every end event closes a flow
 * collection.
 */
static int check_nesting(const char *path, const char *text, size_t n,
			 struct tpp_err *err)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int depth = 0, rc = TPP_OK, done = 0;
	if (!yaml_parser_initialize(&p))
		return tpp_err_set(err, TPP_E_SYSTEM, path, 0, 0,
				   "out of memory initialising YAML parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, n);
	while (!done && yaml_parser_parse(&p, &ev)) {
		int flow = 0;
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
			flow = ev.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
			break;
		case YAML_MAPPING_START_EVENT:
			flow = ev.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		if (flow && ++depth > TPP_YAML_MAX_DEPTH) {
			rc = tpp_err_set(err, TPP_E_INPUT, path,
					 (int)ev.start_mark.line + 1,
					 (int)ev.start_mark.column + 1,
					 "nesting deeper than %d levels", TPP_YAML_MAX_DEPTH);
			done = 1;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/* Line and column (1-based) of byte `off` of text[0..n). */
static void offset_line_col(const char *text, size_t n, size_t off, int *line, int *col)
{
	size_t i;
	*line = 1;
	*col = 1;
	for (i = 0; i < off && i < n; i++) {
		if (text[i] == '\n') {
			++*line;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
			++*col; /* count characters, not UTF-8 continuation bytes */
		}
	}
}

/* qsort order of a mapping's keys: by text, then by place in the file */
struct key_at {
	const char *text;
	const yaml_node_t *node;
};

static int cmp_key_at(const void *a, const void *b)
{
	const struct key_at *x = a, *y = b;
	int c = strcmp(x->text, y->text);
	if (c)
		return c;
	return (x->node > y->node) - (x->node < y->node);
}

/*
 * JSON readers look members up by name (tpp_y_map_get), which takes the
 * first of a repeated key where other JSON tools take the last: a repeated
 * key is an error, at its second occurrence (the first in the file when
 * there are several).  Sorted, so a huge object stays n log n.
 */
static int check_json_keys(struct tpp_ydoc *d, struct tpp_err *err)
{
	const yaml_node_t *nd, *dup = NULL;
	struct key_at *keys = NULL;
	size_t cap = 0;
	int rc = TPP_OK;

	for (nd = d->doc.nodes.start; nd < d->doc.nodes.top; nd++) {
		const yaml_node_pair_t *pr;
		size_t n = 0, i;
		if (nd->type != YAML_MAPPING_NODE)
			continue;
		for (pr = nd->data.mapping.pairs.start; pr < nd->data.mapping.pairs.top; pr++) {
			const yaml_node_t *k = yaml_document_get_node(&d->doc, pr->key);
			if (!k || k->type != YAML_SCALAR_NODE)
				continue;
			if (n == cap) {
				size_t nc = cap ? 2 * cap : 16;
				struct key_at *nk = realloc(keys, nc * sizeof(*keys));
				if (!nk) {
					free(keys);
					return tpp_err_set(err, TPP_E_SYSTEM, d->path, 0, 0,
							   "out of memory");
				}
				keys = nk;
				cap = nc;
			}
			keys[n].text = (const char *)k->data.scalar.value;
			keys[n++].node = k;
		}
		if (n < 2)
			continue;
		qsort(keys, n, sizeof(*keys), cmp_key_at);
		for (i = 1; i < n; i++)
			if (!strcmp(keys[i].text, keys[i - 1].text) &&
			    (!dup || keys[i].node < dup))
				dup = keys[i].node;
	}
	if (dup)
		rc = tpp_y_err(d, dup, err, "duplicate key '%s'",
			       (const char *)dup->data.scalar.value);
	free(keys);
	return rc;
}

/*
 * Explicit YAML tags.  libyaml's document API gives an untagged plain
 * scalar the default tag !!str, so a node no longer tells "5" written
 * `!!str 5` from a plain 5.  The event API does: a second pass over the
 * same text, whose scalar, sequence and mapping events come in the
 * order the loader made the nodes (aliases make none), finds the tagged
 * ones.  `!!str` on a scalar makes it a string, as quotes do: its style
 * becomes YAML_ANY_SCALAR_STYLE, which the parser never gives, so every
 * reader that wants a plain scalar (a number, a boolean, null) refuses
 * it.  Any other tag is refused: tpplan's schemas type every value.  JSON
 * has no tags, anchors or aliases: there each is refused.
 */
/* Where each alias stands, in the order of the text (YAML files). */
struct alias_marks {
	yaml_mark_t *m;
	size_t n, cap;
};

static int check_tags(struct tpp_ydoc *d, const char *text, size_t n,
		      const char *syntax, struct alias_marks *am, struct tpp_err *err)
{
	static const char core[] = "tag:yaml.org,2002:";
	yaml_parser_t p;
	yaml_event_t ev;
	yaml_node_t *node = d->doc.nodes.start;
	int rc = TPP_OK, done = 0;

	if (!yaml_parser_initialize(&p))
		return tpp_err_set(err, TPP_E_SYSTEM, d->path, 0, 0,
				   "out of memory initialising YAML parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)text, n);
	while (!done && !rc) {
		const yaml_char_t *tag = NULL, *anchor = NULL;
		if (!yaml_parser_parse(&p, &ev))
			break; /* the loader read this text: cannot happen */
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
			tag = ev.data.scalar.tag;
			anchor = ev.data.scalar.anchor;
			break;
		case YAML_SEQUENCE_START_EVENT:
			tag = ev.data.sequence_start.tag;
			anchor = ev.data.sequence_start.anchor;
			break;
		case YAML_MAPPING_START_EVENT:
			tag = ev.data.mapping_start.tag;
			anchor = ev.data.mapping_start.anchor;
			break;
		case YAML_ALIAS_EVENT:
			/* an alias makes no node: the error names its place */
			if (!strcmp(syntax, "JSON"))
				rc = tpp_err_set(err, TPP_E_INPUT, d->path,
						 (int)ev.start_mark.line + 1,
						 (int)ev.start_mark.column + 1,
						 "a YAML alias in a JSON file: JSON has none");
			else if (am->n == am->cap) {
				size_t cap = am->cap ? 2 * am->cap : 16;
				yaml_mark_t *m = realloc(am->m, cap * sizeof(*m));
				if (!m)
					rc = tpp_err_set(err, TPP_E_SYSTEM, d->path, 0, 0, "out of memory");
				else {
					am->m = m;
					am->cap = cap;
				}
			}
			if (!rc && strcmp(syntax, "JSON"))
				am->m[am->n++] = ev.start_mark;
			break;
		case YAML_DOCUMENT_END_EVENT:
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT) {
			if (node >= d->doc.nodes.top) {
				done = 1;
			} else {
				if ((tag || anchor) && !strcmp(syntax, "JSON")) {
					rc = tpp_y_err(d, node, err, "a YAML %s in a JSON file: JSON has none",
						       tag ? "tag" : "anchor");
				} else if (tag && ev.type == YAML_SCALAR_EVENT &&
					   !strcmp((const char *)tag, YAML_STR_TAG)) {
					node->data.scalar.style = YAML_ANY_SCALAR_STYLE;
				} else if (tag) {
					char shown[128];
					const char *t = (const char *)tag;
					if (!strncmp(t, core, sizeof(core) - 1))
						snprintf(shown, sizeof(shown), "!!%s",
							 t + sizeof(core) - 1);
					else
						snprintf(shown, sizeof(shown), "%s", t);
					tpp_printable(shown, 0);
					rc = tpp_y_err(d, node, err,
						       "YAML tag '%s' is not read: tpplan types each value "
						       "itself; remove the tag (quote a value, or tag it !!str, "
						       "to make it a string)",
						       shown);
				}
				node++;
			}
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/*
 * An alias makes no node: the pair or item that uses it points at the
 * anchored node, so an error in its value named the anchor's place, not
 * the key that took it (`kv_heads: *v` reported on the line of
 * `vocab: &v 10`).  Walk the tree in the order the loader built it (the
 * order of the events): the k-th reference to a node already met is the
 * k-th alias.  A scalar gets a copy of its own placed at the alias;
 * a mapping or sequence stays shared (its members keep their places).
 */
static int *member_ref(yaml_document_t *doc, int id, size_t i)
{
	yaml_node_t *nd = doc->nodes.start + id - 1;
	if (nd->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *pr = nd->data.mapping.pairs.start + i / 2;
		if (pr >= nd->data.mapping.pairs.top)
			return NULL;
		return i % 2 ? &pr->value : &pr->key;
	}
	if (nd->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *it = nd->data.sequence.items.start + i;
		return it < nd->data.sequence.items.top ? it : NULL;
	}
	return NULL;
}

static int place_aliases(struct tpp_ydoc *d, const struct alias_marks *am,
			 struct tpp_err *err)
{
	size_t nn = (size_t)(d->doc.nodes.top - d->doc.nodes.start), k = 0, sp = 0;
	struct frame {
		int id;
		size_t next;
	} *stack;
	unsigned char *seen;
	int rc = TPP_OK;
	if (!am->n || !nn)
		return TPP_OK;
	seen = calloc(nn + 1, 1);
	stack = malloc((nn + 1) * sizeof(*stack));
	if (!seen || !stack) {
		free(seen);
		free(stack);
		return tpp_err_set(err, TPP_E_SYSTEM, d->path, 0, 0, "out of memory");
	}
	/* depth first, members in order: the order of the events (the nodes
	 * added here come after nn and are never walked) */
	stack[sp].id = 1; /* the root */
	stack[sp++].next = 0;
	seen[1] = 1;
	while (sp && k < am->n) {
		struct frame *f = &stack[sp - 1];
		int *ref = member_ref(&d->doc, f->id, f->next++), c;
		if (!ref) {
			sp--;
			continue;
		}
		c = *ref;
		if (c < 1 || (size_t)c > nn)
			continue;
		if (!seen[c]) {
			seen[c] = 1;
			stack[sp].id = c;
			stack[sp++].next = 0;
			continue;
		}
		/* met before: the next alias */
		if (d->doc.nodes.start[c - 1].type == YAML_SCALAR_NODE) {
			yaml_node_t *src = d->doc.nodes.start + c - 1;
			int copy = yaml_document_add_scalar(&d->doc, src->tag, src->data.scalar.value,
							    (int)src->data.scalar.length,
							    src->data.scalar.style);
			if (!copy) {
				rc = tpp_err_set(err, TPP_E_SYSTEM, d->path, 0, 0, "out of memory");
				break;
			}
			d->doc.nodes.start[copy - 1].start_mark = am->m[k];
			d->doc.nodes.start[copy - 1].end_mark = am->m[k];
			*ref = copy;
		}
		k++;
	}
	free(seen);
	free(stack);
	return rc;
}

static int finish_load(struct tpp_ydoc *d, yaml_parser_t *p, const char *text,
		       size_t n, const char *syntax, struct tpp_err *err)
{
	yaml_document_t extra;
	if (!yaml_parser_load(p, &d->doc)) {
		int line = (int)p->problem_mark.line + 1;
		int col = (int)p->problem_mark.column + 1;
		/* the reader (bad bytes, encoding) reports a byte offset only */
		if (p->error == YAML_READER_ERROR)
			offset_line_col(text, n, p->problem_offset, &line, &col);
		char fallback[24];
		const char *what = p->problem ? p->problem : fallback;
		snprintf(fallback, sizeof(fallback), "malformed %s", syntax);
		if (p->context)
			tpp_err_set(err, TPP_E_INPUT, d->path, line, col,
				    "%s syntax error: %s %s", syntax, p->context, what);
		else
			tpp_err_set(err, TPP_E_INPUT, d->path, line, col,
				    "%s syntax error: %s", syntax, what);
		yaml_parser_delete(p);
		return TPP_E_INPUT;
	}
	d->loaded = 1;
	/* one document per file: a second one would be silently ignored */
	if (!yaml_parser_load(p, &extra)) {
		int line = (int)p->problem_mark.line + 1;
		int col = (int)p->problem_mark.column + 1;
		tpp_err_set(err, TPP_E_INPUT, d->path, line, col,
			    "%s syntax error after the document: %s", syntax,
			    p->problem ? p->problem : "malformed document");
		yaml_parser_delete(p);
		tpp_ydoc_free(d);
		return TPP_E_INPUT;
	} else {
		yaml_node_t *root = yaml_document_get_root_node(&extra);
		int line = root ? (int)root->start_mark.line + 1 : 0;
		int col = root ? (int)root->start_mark.column + 1 : 0;
		yaml_document_delete(&extra);
		if (root) {
			yaml_parser_delete(p);
			tpp_ydoc_free(d);
			return tpp_err_set(err, TPP_E_INPUT, d->path, line, col,
					   "a second %s document: one per file", syntax);
		}
	}
	yaml_parser_delete(p);
	/* a "\0" escape would cut every C string short silently */
	{
		yaml_node_t *nd;
		for (nd = d->doc.nodes.start; nd < d->doc.nodes.top; nd++)
			if (nd->type == YAML_SCALAR_NODE &&
			    strlen((const char *)nd->data.scalar.value) != nd->data.scalar.length) {
				int rc = tpp_err_set(err, TPP_E_INPUT, d->path,
						     (int)nd->start_mark.line + 1,
						     (int)nd->start_mark.column + 1,
						     "a value contains a NUL character (\\0)");
				tpp_ydoc_free(d);
				return rc;
			}
	}
	{
		struct alias_marks am = {0};
		int rc = check_tags(d, text, n, syntax, &am, err);
		if (!rc)
			rc = place_aliases(d, &am, err);
		free(am.m);
		if (rc) {
			tpp_ydoc_free(d);
			return rc;
		}
	}
	if (!strcmp(syntax, "JSON")) {
		int rc = check_json_keys(d, err);
		if (rc) {
			tpp_ydoc_free(d);
			return rc;
		}
	}
	return TPP_OK;
}

/*
 * Line ends as libyaml and an editor both count them.  CR LF is one break
 * to both; but CR CR LF (a CR LF file saved again as CR LF) is two to
 * libyaml and one to an editor, grep -n and the error excerpt, and a CR
 * alone (classic Mac) is a break to libyaml and none to them: the error
 * locations were wrong and came without their line.  A CR alone is an
 * error at its line and column (tpp_find_lone_cr); the CRs before a line
 * feed, or at the end of the file, are dropped (*n shrinks).
 */
static int line_ends(const char *path, char *text, size_t *n, struct tpp_err *err)
{
	size_t i, o = 0;
	int line, col;
	if (tpp_find_lone_cr(text, *n, &line, &col))
		return tpp_err_set(err, TPP_E_INPUT, path, line, col, TPP_LONE_CR_MSG);
	for (i = 0; i < *n; i++)
		if (text[i] != '\r')
			text[o++] = text[i];
	*n = o;
	return TPP_OK;
}

/* Parse the file `path` as `syntax` ("YAML" or "JSON", for messages). */
static int load_file(struct tpp_ydoc *d, const char *path, const char *syntax,
		     struct tpp_err *err)
{
	yaml_parser_t p;
	FILE *f;
	char *text;
	size_t n = 0, cap = 1 << 16;
	int rc;

	memset(d, 0, sizeof(*d));
	tpp_strlcpy(d->path, path, sizeof(d->path));
	if (tpp_not_regular(path))
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				   "not a regular file (a FIFO or device)");
	f = fopen(path, "rb");
	if (!f)
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				   "cannot open: %s", strerror(errno));
	/* read it whole (bounded), to check its nesting before libyaml */
	text = malloc(cap);
	while (text) {
		size_t got = fread(text + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		if ((long)cap >= TPP_YAML_MAX_BYTES) {
			free(text);
			fclose(f);
			return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
					   "larger than %ld MiB: not a tpplan file",
					   TPP_YAML_MAX_BYTES >> 20);
		}
		{
			char *t2 = realloc(text, cap * 2);
			if (!t2) {
				free(text);
				text = NULL;
				break;
			}
			text = t2;
			cap *= 2;
		}
	}
	if (!text) {
		fclose(f);
		return tpp_err_set(err, TPP_E_SYSTEM, path, 0, 0, "out of memory");
	}
	if (ferror(f)) {
		rc = tpp_err_set(err, TPP_E_INPUT, path, 0, 0, "read error: %s", strerror(errno));
		free(text);
		fclose(f);
		return rc;
	}
	fclose(f);
	if ((rc = line_ends(path, text, &n, err)) || (rc = check_nesting(path, text, n, err))) {
		free(text);
		return rc;
	}
	if (!yaml_parser_initialize(&p)) {
		free(text);
		return tpp_err_set(err, TPP_E_SYSTEM, path, 0, 0,
				   "out of memory initialising YAML parser");
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, n);
	rc = finish_load(d, &p, text, n, syntax, err);
	free(text);
	return rc;
}

/* Parse `text` as `syntax`; `name` is used in messages. */
static int load_text(struct tpp_ydoc *d, const char *name, const char *text,
		     const char *syntax, struct tpp_err *err)
{
	yaml_parser_t p;
	memset(d, 0, sizeof(*d));
	tpp_strlcpy(d->path, name, sizeof(d->path));
	if (!yaml_parser_initialize(&p))
		return tpp_err_set(err, TPP_E_SYSTEM, name, 0, 0,
				   "out of memory initialising YAML parser");
	if (check_nesting(name, text, strlen(text), err)) {
		yaml_parser_delete(&p);
		return TPP_E_INPUT;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text,
				     strlen(text));
	return finish_load(d, &p, text, strlen(text), syntax, err);
}

int tpp_ydoc_load(struct tpp_ydoc *d, const char *path, struct tpp_err *err)
{
	return load_file(d, path, "YAML", err);
}

int tpp_ydoc_load_string(struct tpp_ydoc *d, const char *name,
			 const char *text, struct tpp_err *err)
{
	return load_text(d, name, text, "YAML", err);
}

int tpp_ydoc_load_json(struct tpp_ydoc *d, const char *path, struct tpp_err *err)
{
	return load_file(d, path, "JSON", err);
}

int tpp_ydoc_load_json_string(struct tpp_ydoc *d, const char *name,
			      const char *text, struct tpp_err *err)
{
	return load_text(d, name, text, "JSON", err);
}

void tpp_ydoc_free(struct tpp_ydoc *d)
{
	if (d && d->loaded) {
		yaml_document_delete(&d->doc);
		d->loaded = 0;
	}
}

yaml_node_t *tpp_ydoc_root(struct tpp_ydoc *d)
{
	return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

static const char *scalar(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* A scalar's text for a one-line message: control characters (the line
 * breaks of a block scalar) shown as '?', cut at 200 bytes. */
static const char *shown(const yaml_node_t *n, char *buf, size_t size)
{
	snprintf(buf, size, "%s", (const char *)n->data.scalar.value);
	tpp_printable(buf, 0);
	return buf;
}


/* A scalar that is a string by its writing (quoted, tagged !!str by
 * check_tags, or a block scalar), for messages: "the quoted string '80'
 * (drop the quotes)", with what to drop to make it plain. */
static const char *got_string(const yaml_node_t *n, char *buf, size_t size)
{
	char sb[208];
	const char *kind = "quoted string", *mark = "quotes";
	switch (n->data.scalar.style) {
	case YAML_ANY_SCALAR_STYLE:
		kind = "!!str-tagged string";
		mark = "tag";
		break;
	case YAML_LITERAL_SCALAR_STYLE:
	case YAML_FOLDED_SCALAR_STYLE:
		kind = "block string";
		mark = "| or >";
		break;
	default:
		break;
	}
	snprintf(buf, size, "the %s '%s' (drop the %s)", kind, shown(n, sb, sizeof(sb)), mark);
	return buf;
}

/* A leading zero before another digit ("016", "-007.5"): YAML 1.1
 * reads 016 as octal 14, strtod as 16; neither is meant, so refused. */
static int leading_zero(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	return s[0] == '0' && isdigit((unsigned char)s[1]);
}

int tpp_y_double(struct tpp_ydoc *d, yaml_node_t *node, double *out,
		 struct tpp_err *err)
{
	char *end;
	double v;
	char sb[300];
	if (!node || node->type != YAML_SCALAR_NODE)
		return tpp_y_err(d, node, err, "expected a number");
	/* "80" is a string in YAML, as in JSON: not read as a number */
	if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return tpp_y_err(d, node, err, "expected a number, got %s",
				 got_string(node, sb, sizeof(sb)));
	/* decimal only: strtod would take hex (0x55) and hex floats */
	if (strpbrk(scalar(node), "xXpP") || leading_zero(scalar(node)))
		return tpp_y_err(d, node, err,
				 "expected a decimal number (no hex, no leading zeros), got '%s'",
				 shown(node, sb, sizeof(sb)));
	errno = 0;
	v = strtod(scalar(node), &end);
	if (end == scalar(node) || *end != '\0' || errno == ERANGE ||
	    !isfinite(v))
		return tpp_y_err(d, node, err, "expected a number, got '%s'",
				 shown(node, sb, sizeof(sb)));
	*out = v;
	return TPP_OK;
}

int tpp_y_int(struct tpp_ydoc *d, yaml_node_t *node, long long *out,
	      struct tpp_err *err)
{
	char *end;
	long long v;
	char sb[300];
	if (!node || node->type != YAML_SCALAR_NODE)
		return tpp_y_err(d, node, err, "expected an integer");
	if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return tpp_y_err(d, node, err, "expected an integer, got %s",
				 got_string(node, sb, sizeof(sb)));
	if (leading_zero(scalar(node)))
		return tpp_y_err(d, node, err,
				 "expected a decimal integer (no leading zeros: YAML reads 016 as octal), got '%s'",
				 shown(node, sb, sizeof(sb)));
	errno = 0;
	v = strtoll(scalar(node), &end, 10);
	if (end == scalar(node) || *end != '\0' || errno == ERANGE)
		return tpp_y_err(d, node, err, "expected an integer, got '%s'",
				 shown(node, sb, sizeof(sb)));
	*out = v;
	return TPP_OK;
}

int tpp_y_str(struct tpp_ydoc *d, yaml_node_t *node, char *buf, size_t size,
	      struct tpp_err *err)
{
	if (!node || node->type != YAML_SCALAR_NODE)
		return tpp_y_err(d, node, err, "expected a string");
	if (strlen(scalar(node)) >= size)
		return tpp_y_err(d, node, err,
				 "string too long (at most %zu bytes of UTF-8)",
				 size - 1);
	tpp_strlcpy(buf, scalar(node), size);
	return TPP_OK;
}

int tpp_y_seq(struct tpp_ydoc *d, yaml_node_t *node, const char *what,
	      int *count, struct tpp_err *err)
{
	if (!node || node->type != YAML_SEQUENCE_NODE)
		return tpp_y_err(d, node, err, "%s: expected a list", what);
	*count = (int)(node->data.sequence.items.top -
		       node->data.sequence.items.start);
	return TPP_OK;
}

yaml_node_t *tpp_y_seq_item(struct tpp_ydoc *d, yaml_node_t *seq, int i)
{
	return yaml_document_get_node(&d->doc,
				      seq->data.sequence.items.start[i]);
}

static int parse_bool(const char *s, int *out)
{
	static const char *const t[] = {"true", "yes", "on", "1"};
	static const char *const f[] = {"false", "no", "off", "0"};
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(t); i++) {
		if (!strcasecmp(s, t[i])) {
			*out = 1;
			return 1;
		}
		if (!strcasecmp(s, f[i])) {
			*out = 0;
			return 1;
		}
	}
	return 0;
}

static void list_keys(const struct tpp_yfield *fields, size_t n, char *buf,
		      size_t size)
{
	size_t i, used = 0;
	buf[0] = '\0';
	for (i = 0; i < n && used + 1 < size; i++) {
		int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
				 fields[i].key);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static int check_range(struct tpp_ydoc *d, yaml_node_t *v,
		       const struct tpp_yfield *f, double x, const char *what,
		       struct tpp_err *err)
{
	char sb[300];
	if (f->min == 0 && f->max == 0)
		return TPP_OK;
	if (x < f->min || x > f->max)
		return tpp_y_err(d, v, err,
				 "%s.%s = %s is out of range [%.15g, %.15g]", what,
				 f->key, shown(v, sb, sizeof(sb)),
				 f->scale ? f->min / f->scale : f->min,
				 f->scale ? f->max / f->scale : f->max);
	return TPP_OK;
}

static int fill_field(struct tpp_ydoc *d, yaml_node_t *v,
		      const struct tpp_yfield *f, void *base, const char *what,
		      struct tpp_err *err)
{
	char *p = (char *)base + f->offset;
	char sb[300];
	int rc, i;

	if (f->type != TPP_YF_CUSTOM && v->type != YAML_SCALAR_NODE)
		return tpp_y_err(d, v, err, "%s.%s: expected a single value",
				 what, f->key);
	switch (f->type) {
	case TPP_YF_INT: {
		long long x;
		char why[sizeof(err->msg)];
		if ((rc = tpp_y_int(d, v, &x, err))) {
			tpp_strlcpy(why, err ? err->msg : "", sizeof(why));
			return tpp_y_err(d, v, err, "%s.%s: %s", what, f->key, why);
		}
		if ((rc = check_range(d, v, f, (double)x, what, err)))
			return rc;
		if (x < -2147483647LL || x > 2147483647LL)
			return tpp_y_err(d, v, err, "%s.%s: too large", what,
					 f->key);
		*(int *)p = (int)x;
		return TPP_OK;
	}
	case TPP_YF_DOUBLE: {
		double x;
		char why[sizeof(err->msg)];
		if ((rc = tpp_y_double(d, v, &x, err))) {
			tpp_strlcpy(why, err ? err->msg : "", sizeof(why));
			return tpp_y_err(d, v, err, "%s.%s: %s", what, f->key, why);
		}
		if (f->scale)
			x *= f->scale;
		if ((rc = check_range(d, v, f, x, what, err)))
			return rc;
		*(double *)p = x;
		return TPP_OK;
	}
	case TPP_YF_STR:
		/* a string that YAML reads as null: for a required one (a
		 * name) a slip, not the word (it printed as "~"); an optional
		 * one is not given (`calibration: ~` opened a file "~") */
		if (tpp_y_is_null(v)) {
			if (f->required)
				return tpp_y_err(d, v, err, "%s.%s: expected a string, got null (quote it to mean the word)",
						 what, f->key);
			if (f->size)
				((char *)p)[0] = '\0';
			return TPP_OK;
		}
		return tpp_y_str(d, v, p, f->size, err);
	case TPP_YF_BOOL:
		/* "true" quoted is a string, as a quoted number is */
		if (v->type == YAML_SCALAR_NODE && v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
			return tpp_y_err(d, v, err,
					 "%s.%s: expected true or false, got %s",
					 what, f->key, got_string(v, sb, sizeof(sb)));
		if (!parse_bool(scalar(v), (int *)p))
			return tpp_y_err(d, v, err,
					 "%s.%s: expected true or false, got '%s'",
					 what, f->key, shown(v, sb, sizeof(sb)));
		return TPP_OK;
	case TPP_YF_ENUM: {
		char buf[512];
		size_t used = 0;
		for (i = 0; i < f->nnames; i++)
			if (f->names[i] && !strcmp(scalar(v), f->names[i])) {
				*(int *)p = i;
				return TPP_OK;
			}
		buf[0] = '\0';
		for (i = 0; i < f->nnames && used + 1 < sizeof(buf); i++) {
			int w;
			if (!f->names[i])
				continue;
			w = snprintf(buf + used, sizeof(buf) - used, "%s%s",
				     used ? ", " : "", f->names[i]);
			if (w < 0)
				break;
			used += (size_t)w;
		}
		return tpp_y_err(d, v, err, "%s.%s: unknown value '%s' (expected one of: %s)",
				 what, f->key, shown(v, sb, sizeof(sb)), buf);
	}
	case TPP_YF_CUSTOM:
		TPP_ASSERT(f->handler);
		return f->handler(d, v, p, err);
	default:
		TPP_ASSERT(0);
	}
	return TPP_E_INPUT;
}

int tpp_ymap_parse(struct tpp_ydoc *d, yaml_node_t *map,
		   const struct tpp_yfield *fields, size_t n, void *base,
		   const char *what, struct tpp_err *err)
{
	yaml_node_pair_t *pair;
	unsigned char seen[64];
	size_t i;
	int rc;

	TPP_ASSERT(n <= sizeof(seen));
	memset(seen, 0, sizeof(seen));
	if (!map || map->type != YAML_MAPPING_NODE)
		return tpp_y_err(d, map, err, "%s: expected a mapping of key: value",
				 what);
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(&d->doc, pair->value);
		const char *key;
		if (!k || k->type != YAML_SCALAR_NODE)
			return tpp_y_err(d, k, err, "%s: keys must be plain words",
					 what);
		key = scalar(k);
		for (i = 0; i < n; i++)
			if (!strcmp(key, fields[i].key))
				break;
		if (i == n) {
			char keys[700];
			list_keys(fields, n, keys, sizeof(keys));
			return tpp_y_err(d, k, err,
					 "%s: unknown key '%s' (known keys: %s)",
					 what, key, keys);
		}
		if (seen[i])
			return tpp_y_err(d, k, err, "%s: duplicate key '%s'",
					 what, key);
		seen[i] = 1;
		if ((rc = fill_field(d, v, &fields[i], base, what, err)))
			return rc;
		if (fields[i].seen)
			*fields[i].seen = 1;
	}
	for (i = 0; i < n; i++)
		if (fields[i].required && !seen[i])
			return tpp_y_err(d, map, err,
					 "%s: missing required key '%s'", what,
					 fields[i].key);
	return TPP_OK;
}

const char *tpp_y_text(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
						 : "";
}

yaml_node_t *tpp_y_map_get(struct tpp_ydoc *d, yaml_node_t *map,
			   const char *key)
{
	yaml_node_pair_t *p;
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, p->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp(tpp_y_text(k), key))
			return yaml_document_get_node(&d->doc, p->value);
	}
	return NULL;
}

int tpp_y_keep_node(struct tpp_ydoc *d, yaml_node_t *node, void *field,
		    struct tpp_err *err)
{
	(void)d;
	(void)err;
	*(yaml_node_t **)field = node;
	return TPP_OK;
}

int tpp_y_check_schema(struct tpp_ydoc *d, const char *schema,
		       const char *what, struct tpp_err *err)
{
	yaml_node_t *root = tpp_ydoc_root(d), *node;
	char sb[300];
	if (!root)
		return tpp_err_set(err, TPP_E_INPUT, d->path, 0, 0,
				   "empty %s file (expected 'schema: %s')", what,
				   schema);
	node = tpp_y_map_get(d, root, "schema");
	if (root->type == YAML_MAPPING_NODE && !node)
		return tpp_y_err(d, root, err,
				 "not a tpplan %s file: missing 'schema: %s'", what,
				 schema);
	if (node && (node->type != YAML_SCALAR_NODE ||
		     strcmp(tpp_y_text(node), schema)))
		return tpp_y_err(d, node, err, "schema: expected '%s', got '%s'",
				 schema, node->type == YAML_SCALAR_NODE ? shown(node, sb, sizeof(sb)) : "a collection");
	return TPP_OK;
}

/* ---- JSON values ---- */

int tpp_y_is_null(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!strcmp(scalar(n), "~") || !strcmp(scalar(n), "null") ||
		!strcmp(scalar(n), "Null") || !strcmp(scalar(n), "NULL"));
}

int tpp_yj_null(const yaml_node_t *n)
{
	return !n || (n->type == YAML_SCALAR_NODE &&
		      n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		      !strcmp(scalar(n), "null"));
}

int tpp_yj_num(const yaml_node_t *n, double *x)
{
	const char *t;
	char *end;
	double v;
	if (!n || n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	t = scalar(n);
	if (!t[0] || !strcmp(t, "true") || !strcmp(t, "false") || !strcmp(t, "null"))
		return 0;
	/* decimal only, as tpp_y_double: strtod would take 0x10 as 16 */
	if (strpbrk(t, "xXpP") || leading_zero(t))
		return 0;
	errno = 0;
	v = strtod(t, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return 0;
	*x = v;
	return 1;
}

const char *tpp_yj_str(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		return NULL;
	return scalar(n);
}
