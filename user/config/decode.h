/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Internal to the configuration loader (config.c and config_*.c): the
 * decode context, field tables and the shared decode helpers.  Nothing
 * outside the loader includes this header.
 *
 * Conventions (unchanged from the single-file loader):
 *  - every helper that looks at operator input reports its own problems
 *    through cd_err()/cd_warn() at the node's position, with the object
 *    ("Kind/name") and field path held in struct ctx;
 *  - decoding never stops at an error: the caller keeps going so that every
 *    problem of a file is reported, and the configuration is handed out only
 *    when there is none;
 *  - YAML aliases may make the node tree a DAG or even a cycle: recursive
 *    decoders bound their depth, and list items charge cd_budget() so that
 *    an alias bomb is refused instead of expanded.
 */
#ifndef SLUICE_CONFIG_DECODE_H
#define SLUICE_CONFIG_DECODE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "config/diag.h"
#include "config/duration.h"
#include "lib/labels.h"
#include "config/yaml_doc.h"


#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))


/* List items, CIDRs, ports, matcher terms and expressions one load may
 * decode (aliases can multiply a small file into a huge tree). */
#define CD_BUDGET (1u << 20)
/* Nesting of label-matcher expressions (all/any/not). */
#define CD_MAX_EXPR_DEPTH 32
/* Labels one ConnectionLabels rule may set. */
#define CD_MAX_RULE_LABELS 256
/* Distinct matcher label keys remembered for the "nothing sets it" warning. */
#define CD_MAX_LABEL_REFS 4096

/* ---- decode context and reporting --------------------------------------- */

struct ctx {
	struct sl_diags *diags;
	const char *file;
	char object[2 * SL_YQUOTE_MAX + 32]; /* "Kind/name" */
	char path[512];   /* "spec.limited.lendablePercent" */
	size_t plen;
	bool oom;
	size_t budget;    /* units charged so far (cd_budget) */
	bool over_budget; /* reported once */
	unsigned mute_warnings; /* > 0: decoding a block only to report its
				 * errors (it is wrong as a whole): no advice */
};

void cd_err(struct ctx *c, const struct sl_ynode *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cd_warn(struct ctx *c, const struct sl_ynode *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cd_err_at(struct ctx *c, enum sl_severity sev, unsigned line,
	       unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void cd_oom(struct ctx *c);
/* Charges n units; false (reported once) when the load is over CD_BUDGET. */
bool cd_budget(struct ctx *c, const struct sl_ynode *at, size_t n);

/* Field path: push returns the old length for cd_path_pop(). */
size_t cd_path_push(struct ctx *c, const char *name);
size_t cd_path_push_index(struct ctx *c, size_t i);
void cd_path_pop(struct ctx *c, size_t old);
void cd_path_set(struct ctx *c, const char *path);

/* Quoted text of a scalar for messages. */
#define QBUF char q_[SL_YQUOTE_MAX]
#define Q(n) sl_yquote((n)->str, (n)->len, q_, sizeof(q_))

/* "string 'abc'", "a mapping", ... */
struct cd_desc { char s[SL_YQUOTE_MAX + 32]; };
struct cd_desc cd_describe(const struct sl_ynode *n);


/* ---- suggestions --------------------------------------------------------- */

char cd_lower(char ch);
/* Closest candidate ("did you mean"), or NULL. */
const char *cd_closest(const char *word, const char *const *cands, size_t n);
/* "a, b, c" */
void cd_join(char *buf, size_t size, const char *const *words, size_t n);

/* ---- field tables ------------------------------------------------------- */

enum fkind {
	FK_INT,      /* integer, stored in a 1/2/4/8-byte integer */
	FK_DURATION, /* duration string, stored in uint64_t nanoseconds */
	FK_ENUM,     /* string from enums[], stored as int */
	FK_STRING,   /* string, stored as malloc'ed char * */
	FK_BOOL,     /* true/false, stored in a bool */
	FK_NUMBER,   /* integer or float, finite, stored in a double */
	FK_CUSTOM,   /* decoded by the caller from the returned hit */
};

struct enumval {
	const char *name;
	int value;
};

struct fdesc {
	const char *name;
	enum fkind kind;
	size_t off, size;
	int64_t min, max;            /* FK_INT, FK_DURATION (ns) */
	double dmin, dmax;           /* FK_NUMBER */
	bool dmin_open;              /* FK_NUMBER: value must be > dmin */
	const struct enumval *enums; /* FK_ENUM, NULL-name terminated */
	const char *hint_low;        /* appended to "too small" errors */
	bool required;
	/* For sluice.yaml(5) and `sluicectl schema` (config/schema.c): what
	 * a FK_CUSTOM field holds, and a default the defaults function cannot
	 * say (a sentinel such as -1 for "no limit"). */
	const char *type;
	const char *dflt;
};

struct fhit {
	const struct sl_ynode *key;   /* NULL if absent */
	const struct sl_ynode *value; /* NULL if absent or null (optional) */
	bool ok;                      /* absent, or present and valid */
};

#define MAX_FIELDS 24
#define FLD(T, m) .off = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define F_INT(n, T, m, lo, hi, ...) \
	{ .name = n, .kind = FK_INT, FLD(T, m), .min = lo, .max = hi, __VA_ARGS__ }
#define F_DUR(n, T, m, lo, hi, ...) \
	{ .name = n, .kind = FK_DURATION, FLD(T, m), .min = lo, .max = hi, __VA_ARGS__ }
#define F_ENUM(n, T, m, ev, ...) \
	{ .name = n, .kind = FK_ENUM, FLD(T, m), .enums = ev, __VA_ARGS__ }
#define F_STR(n, T, m, ...) \
	{ .name = n, .kind = FK_STRING, FLD(T, m), __VA_ARGS__ }
#define F_BOOL(n, T, m, ...) \
	{ .name = n, .kind = FK_BOOL, FLD(T, m), __VA_ARGS__ }
#define F_NUM(n, T, m, lo, hi, ...) \
	{ .name = n, .kind = FK_NUMBER, FLD(T, m), .dmin = lo, .dmax = hi, __VA_ARGS__ }
#define F_CUSTOM(n, ...) { .name = n, .kind = FK_CUSTOM, __VA_ARGS__ }

/* The schema: where each table sits in its object, and the function that
 * fills the struct its offsets point into with the defaults (NULL: none
 * to show).  One list per object file, ending with { NULL }; schema.c
 * walks them. */
struct cd_schema {
	const char *kind; /* "Server"; "*" for the fields every object has */
	const char *path; /* "spec.heldSyns"; "[]" marks a list's items */
	const struct fdesc *fields;
	size_t n;
	void (*defaults)(void *obj);
	size_t obj_size;
};
extern const struct cd_schema cd_schema_object[], cd_schema_server[], cd_schema_level[],
	cd_schema_flow_schema[], cd_schema_labels[], cd_schema_policy[], cd_schema_fleet[];

/* Scalar getters: report on failure and return false. */
bool cd_get_int(struct ctx *c, const struct sl_ynode *v, int64_t min,
		int64_t max, const char *hint_low, int64_t *out);
bool cd_get_duration(struct ctx *c, const struct sl_ynode *v, int64_t min,
		     int64_t max, const char *hint_low, uint64_t *out);
bool cd_get_enum(struct ctx *c, const struct sl_ynode *v,
		 const struct enumval *ev, int *out);
bool cd_get_string(struct ctx *c, const struct sl_ynode *v, const char **out);
bool cd_get_bool(struct ctx *c, const struct sl_ynode *v, bool *out);
bool cd_get_number(struct ctx *c, const struct sl_ynode *v, double *out);
/* A string, or a decimal integer taken as its text (label values). */
bool cd_get_label_value(struct ctx *c, const struct sl_ynode *v,
			const char **out);

bool cd_expect_map(struct ctx *c, const struct sl_ynode *n);
/* A list; `what` completes "expected a list of ..." */
bool cd_expect_seq(struct ctx *c, const struct sl_ynode *n, const char *what);

/*
 * Decodes `map` against the table f[0..nf).  Simple fields are stored into
 * obj; hits[i] tells where every field was and whether it was valid.  An
 * optional field set to null counts as absent.  Returns false if `map` is
 * not a mapping.
 */
bool cd_decode_fields(struct ctx *c, const struct sl_ynode *map,
		      const struct fdesc *f, size_t nf, void *obj,
		      struct fhit *hits);

/* A free-form string map (metadata.labels/annotations). */
void cd_decode_string_map(struct ctx *c, const struct sl_ynode *map);
/* Reports every pair of `map` whose string key repeats an earlier one
 * ("duplicate key"); returns a calloc'ed flag per pair (true: a repeat),
 * or NULL when out of memory (reported).  O(n log n). */
bool *cd_dup_keys(struct ctx *c, const struct sl_ynode *map);

/* Object names: DNS-1123 subdomain, 1..47 characters. */
bool cd_check_name(struct ctx *c, const struct sl_ynode *n, const char *name);

/* ---- load state ----------------------------------------------------------- */

/* Per-object side data kept while loading (for diagnostics after all
 * documents are read). */
struct obj_src {
	char *object;                 /* "FlowSchema/web" */
	unsigned name_line, name_col; /* metadata.name value, 0 if none */
	const struct sl_ynode *root;      /* the document (valid while loading) */
	const struct sl_ynode *level_ref; /* FlowSchema: priorityLevelConfiguration.name */
	bool dropped;                 /* FlowSchema: dangling or invalid */
};

/* A label key a matcher refers to (for the "never present" warning). */
struct label_ref {
	char *key;
	char *object, *path;
	unsigned line, column;
};

enum { KIND_SERVER, KIND_LEVEL, KIND_SCHEMA, KIND_LABELS, KIND_POLICY, KIND_N };

struct name_ent {
	int kind;
	size_t seq;
	char *name;
	unsigned line, column;
};

struct load {
	struct ctx *c;
	struct sl_config *cfg;
	size_t levels_cap, schemas_cap, labels_cap, policies_cap;
	struct obj_src *level_src;  /* parallel to cfg->levels */
	struct obj_src *schema_src; /* parallel to cfg->schemas (until sorted) */
	size_t level_src_cap, schema_src_cap;
	bool server_seen;
	unsigned server_line, server_col;
	bool mandatory_level_in_file[2];  /* exempt, catch-all */
	bool mandatory_schema_in_file[2];
	struct name_ent *names;
	size_t n_names, names_cap;
	struct label_ref *refs;
	size_t n_refs, refs_cap;
};

/* The apiVersion an object was written under (config.c's api_versions[]):
 * Kubernetes' flow-control objects are read with their own version's
 * meaning where it differs from sluice/v1's. */
enum cd_api {
	CD_API_SLUICE = 0,      /* sluice/v1 */
	CD_API_K8S_V1,          /* flowcontrol.apiserver.k8s.io/v1: sluice/v1's names and meaning */
	CD_API_K8S_V1BETA3,     /* ...v1beta3: nominalConcurrencyShares 0 means the default */
	CD_API_K8S_V1BETA12,    /* ...v1beta2 and v1beta1: assuredConcurrencyShares, no lending */
	CD_API_ASM,             /* istio.alibabacloud.com/v1: a policy runs Aperture's AIMD by default */
};

/* What the document decoder found at the top of an object. */
struct object {
	const struct sl_ydoc *doc;
	const struct sl_ynode *root, *kind, *name_node, *spec;
	const char *name; /* NULL unless metadata.name is a valid name */
	enum cd_api api;
};

/* ---- shared value decoders (net.c) ---------------------------------- */

/* One CIDR (or a bare address: a host) into *out.  Reports and returns
 * false on error. */
bool cd_decode_cidr(struct ctx *c, const struct sl_ynode *v,
		    struct sl_cidr *out);
/* A non-empty list of CIDRs.  `empty_hint` completes "must not be empty; "
 * (NULL: empty is allowed and gives 0). */
void cd_decode_cidr_list(struct ctx *c, const struct sl_ynode *v,
			 struct sl_cidr **out, size_t *n,
			 const char *empty_hint);
/* Ports: single ports, "lo-hi" ranges or "*" (alone): *n = 0 for any. */
void cd_decode_port_list(struct ctx *c, const struct sl_ynode *v,
			 struct sl_port_range **out, size_t *n);
/* "80", "9000-9100", "9000 - 9100": 0; -EINVAL not that shape; -ERANGE
 * outside 1..65535 (lo and hi set). */
int cd_parse_port_range(const char *s, long *lo, long *hi);

/* ---- label matchers (connection_labels.c) -------------------------------------- */

/* Label key syntax: [prefix/]name, name 1..63 of [A-Za-z0-9._-] starting
 * and ending alphanumeric, prefix a DNS subdomain of at most 253.  NULL
 * when valid, else the reason. */
const char *cd_label_key_problem(const char *key);
bool cd_is_builtin_label(const char *key);

/* Kubernetes LabelSelector {matchLabels, matchExpressions} into m. */
void cd_decode_label_selector(struct load *L, const struct sl_ynode *v,
			      struct sl_label_matcher *m);
/* Aperture LabelMatcher {match_labels, match_list, match_expressions,
 * expression} into m. */
void cd_decode_label_matcher(struct load *L, const struct sl_ynode *v,
			     struct sl_label_matcher *m);
/* Remembers a label key a matcher uses, at node k (for the warning about
 * labels nothing sets). */
void cd_note_label_ref(struct load *L, const char *key, const struct sl_ynode *k);
/* After all documents: warns about matcher labels that are neither
 * built-in nor set by any ConnectionLabels object. */
void cd_check_label_refs(struct load *L);

/* ---- kinds ------------------------------------------------------------------ */

void cd_decode_server(struct load *L, const struct object *o);
/* The fleet (fleet.c): Server spec.fleet and a level's limited.fleet, their
 * defaults, and the checks between them once every object is read. */
void cd_fleet_defaults(struct sl_fleet_cfg *f);
void cd_level_fleet_defaults(struct sl_level_cfg *l);
void cd_fleet_release(struct sl_fleet_cfg *f);
void cd_decode_fleet(struct ctx *c, const struct sl_ynode *map, struct sl_server_cfg *s);
void cd_decode_level_fleet(struct ctx *c, const struct sl_ynode *map, struct sl_level_cfg *l);
void cd_check_fleet(struct load *L);
int cd_server_defaults(struct sl_server_cfg *s);  /* 0 or -ENOMEM */
void cd_server_release(struct sl_server_cfg *s);
void cd_decode_level(struct load *L, const struct object *o);
/* The mandatory level `which` (0 exempt, 1 catch-all) as Kubernetes
 * defines it.  0 or -ENOMEM. */
int cd_mandatory_level(struct sl_level_cfg *l, int which);
void cd_decode_flow_schema(struct load *L, const struct object *o);
/* fs_mandatory.c, the mandatory FlowSchemas: 0 exempt, 1 catch-all, -1 any
 * other name; the schema `which` as Kubernetes defines it (0 or -ENOMEM;
 * release it either way); and the check of a restated one (an error at
 * each field that differs: kube-apiserver would restore it). */
#define CD_MAX_PRECEDENCE 10000
int cd_mandatory_schema_index(const char *name);
int cd_mandatory_schema(struct sl_flow_schema *fs, int which);
void cd_check_mandatory_schema(struct load *L, const struct sl_flow_schema *fs, int which,
			       const struct sl_ynode *root);
void cd_finish_flow_schemas(struct load *L);   /* after all documents */
void cd_decode_label_object(struct load *L, const struct object *o);
void cd_decode_policy(struct load *L, const struct object *o);

void cd_flow_schema_release(struct sl_flow_schema *fs);
void cd_label_object_release(struct sl_label_object *lo);
void cd_policy_release(struct sl_policy_cfg *p);

/* Registers (kind, metadata.name) for the duplicate check. */
void cd_register_name(struct load *L, int kind, const struct object *o);
/* After all documents: one error per name used twice within a kind. */
void cd_check_duplicate_names(struct load *L);

#endif /* SLUICE_CONFIG_DECODE_H */
