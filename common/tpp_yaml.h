/*
 * tpp_yaml.h - table-driven mapping of YAML documents onto C structs.
 *
 * Every YAML input of tpplan (cluster topologies, model descriptions,
 * calibration files) is read through this module: libyaml parses the file
 * into a document, and a table of {key, type, offset, limits} fills a struct
 * (after netplan / libcyaml).  Unknown keys, duplicate keys, wrong types and
 * out-of-range numbers are errors reported as file:line:col with the source
 * line and a caret.
 */
#ifndef TPP_YAML_H
#define TPP_YAML_H

#include <stddef.h>
#include <yaml.h>

#include "tpp_common.h"

enum tpp_yf_type {
	TPP_YF_INT,    /* int; limits min/max */
	TPP_YF_DOUBLE, /* double; limits min/max, scaled by `scale` */
	TPP_YF_STR,    /* char[size] */
	TPP_YF_BOOL,   /* int 0/1; accepts true/false/yes/no */
	TPP_YF_ENUM,   /* int index into names[] */
	TPP_YF_CUSTOM, /* handler(doc, node, base + offset, err) */
	TPP_YF__COUNT
};

struct tpp_ydoc;

typedef int (*tpp_yf_handler)(struct tpp_ydoc *d, yaml_node_t *node,
			      void *field, struct tpp_err *err);

struct tpp_yfield {
	const char *key;
	enum tpp_yf_type type;
	size_t offset;        /* offsetof(struct, field) */
	size_t size;          /* TPP_YF_STR: buffer size */
	double min, max;      /* numeric limits (inclusive), after scale */
	double scale;         /* TPP_YF_DOUBLE: multiply the YAML value (0 = 1) */
	const char *const *names; /* TPP_YF_ENUM */
	int nnames;
	int required;
	tpp_yf_handler handler; /* TPP_YF_CUSTOM */
	int *seen;            /* optional: set to 1 when the key is present */
};

struct tpp_ydoc {
	yaml_document_t doc;
	int loaded;
	char path[512];
};

/* Parse `path`; syntax errors are reported with their location.
 * On failure nothing needs freeing; on success call tpp_ydoc_free. */
int tpp_ydoc_load(struct tpp_ydoc *d, const char *path, struct tpp_err *err);
/* Parse YAML held in memory; `name` is used in messages. */
int tpp_ydoc_load_string(struct tpp_ydoc *d, const char *name,
			 const char *text, struct tpp_err *err);
/* The same for JSON (YAML 1.2 is a superset of JSON and libyaml reads
 * it as flow syntax): nodes keep their line:column, messages say JSON. */
int tpp_ydoc_load_json(struct tpp_ydoc *d, const char *path, struct tpp_err *err);
int tpp_ydoc_load_json_string(struct tpp_ydoc *d, const char *name,
			      const char *text, struct tpp_err *err);
void tpp_ydoc_free(struct tpp_ydoc *d);
/* Root node, or NULL for an empty document. */
yaml_node_t *tpp_ydoc_root(struct tpp_ydoc *d);

/* Record an error located at `node` (1-based line and column). */
int tpp_y_err(struct tpp_ydoc *d, const yaml_node_t *node, struct tpp_err *err,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Fill `base` from mapping `map` using fields[0..n).  `what` names the
 * mapping in messages ("cluster", "tier", ...).  Fails on a non-mapping
 * node, an unknown or duplicate key, a bad value or a missing required key.
 */
int tpp_ymap_parse(struct tpp_ydoc *d, yaml_node_t *map,
		   const struct tpp_yfield *fields, size_t n, void *base,
		   const char *what, struct tpp_err *err);

/* Scalar accessors; each reports a located error on a bad value. */
int tpp_y_double(struct tpp_ydoc *d, yaml_node_t *node, double *out,
		 struct tpp_err *err);
int tpp_y_int(struct tpp_ydoc *d, yaml_node_t *node, long long *out,
	      struct tpp_err *err);
int tpp_y_str(struct tpp_ydoc *d, yaml_node_t *node, char *buf, size_t size,
	      struct tpp_err *err);

/* Text of a scalar node, "" for anything else (never NULL). */
const char *tpp_y_text(const yaml_node_t *n);
/* Value node of `key` in mapping `map`, or NULL (also for a non-mapping). */
yaml_node_t *tpp_y_map_get(struct tpp_ydoc *d, yaml_node_t *map,
			   const char *key);
/* TPP_YF_CUSTOM handler that stores the node (yaml_node_t *) for a
 * second pass. */
int tpp_y_keep_node(struct tpp_ydoc *d, yaml_node_t *node, void *field,
		    struct tpp_err *err);
/*
 * Check the document's `schema:` key before anything else, so that another
 * tpplan file given in the wrong place says so instead of listing unknown
 * keys.  `what` names the kind of file ("cluster", "calibration").
 * An empty document, a missing or a different schema are errors.
 */
int tpp_y_check_schema(struct tpp_ydoc *d, const char *schema,
		       const char *what, struct tpp_err *err);

/* Whether n is YAML's null written out: a plain ~, null, Null or NULL. */
int tpp_y_is_null(const yaml_node_t *n);

/* JSON values read through libyaml, told by the scalar style: a string
 * is double-quoted; a number, true, false or null plain. */
/* Absent (NULL) or null. */
int tpp_yj_null(const yaml_node_t *n);
/* 1 and *x if n is a finite JSON number, else 0 ("nan" as a string is not). */
int tpp_yj_num(const yaml_node_t *n, double *x);
/* The text of a JSON string, or NULL for anything else. */
const char *tpp_yj_str(const yaml_node_t *n);

/* Number of items of a sequence node (error if not a sequence). */
int tpp_y_seq(struct tpp_ydoc *d, yaml_node_t *node, const char *what,
	      int *count, struct tpp_err *err);
/* i-th item of a sequence node already checked with tpp_y_seq. */
yaml_node_t *tpp_y_seq_item(struct tpp_ydoc *d, yaml_node_t *seq, int i);

#endif
