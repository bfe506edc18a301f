// SPDX-License-Identifier: GPL-2.0
#include <crypt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "web_config.h"

/*
 * A hash of nothing anyone knows, for unknown users: its cost (the "10") is
 * made the highest of the users' (web_config.h), so that a name nobody has
 * takes as long to refuse as a known one with a wrong password (a fixed
 * cost 10 against users' 12 told which names exist: 0.05 s against 0.19 s).
 */
#define DUMMY_HASH "$2b$10$Kau7ayt5KpCQTOPO2asYjuAGc8OE6Fi/u7BZlC0B6hTnmQV1HCgvC"
#define COST_AT 4 /* where a bcrypt hash's two cost digits are: "$2b$NN$" */

struct parse {
	yaml_document_t doc;
	const char *dir;
	struct web_config *cfg;
	char *why;
	size_t why_size;
};

static int fail(struct parse *p, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(p->why, p->why_size, "line %zu: %s", n->start_mark.line + 1, msg);
	else
		snprintf(p->why, p->why_size, "%s", msg);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/*
 * The key before PAIR in MAP that is PAIR's again, or NULL. libyaml keeps
 * both; read in turn, the second would replace the first (its certificate
 * leaked) or add to it: neither is what the file says, so it is refused.
 */
static const yaml_node_t *key_before(struct parse *p, const yaml_node_t *map,
				     const yaml_node_pair_t *pair)
{
	const char *name = scalar(yaml_document_get_node(&p->doc, pair->key));

	for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
		const yaml_node_t *k = yaml_document_get_node(&p->doc, q->key);

		if (name && scalar(k) && !strcmp(scalar(k), name))
			return k;
	}
	return NULL;
}

/* The whole of file NAME (relative to the config's directory) into *OUT. */
static int read_file(struct parse *p, const yaml_node_t *n, const char *name, char **out)
{
	char path[4096];
	size_t len = 0, cap = 0;
	char *buf = NULL;
	FILE *f;

	if (name[0] == '/' || !p->dir)
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	f = fopen(path, "re");
	if (!f)
		return fail(p, n, "cannot read '%s': %s", path, strerror(errno));
	for (;;) {
		if (cap - len < 4096) {
			char *b = cap > (1 << 20) ? NULL : realloc(buf, cap + 8192);

			if (!b) {
				free(buf);
				fclose(f);
				return fail(p, n, "'%s': too large for a certificate or key", path);
			}
			buf = b;
			cap += 8192;
		}
		size_t got = fread(buf + len, 1, cap - len - 1, f);

		len += got;
		if (!got)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	if (!len || !strstr(buf, "-----BEGIN ")) {
		free(buf);
		return fail(p, n, "'%s': not a PEM file", path);
	}
	*out = buf;
	return 0;
}

static int parse_tls(struct parse *p, const yaml_node_t *map)
{
	const char *cert = NULL, *key = NULL;
	const yaml_node_t *cert_node = map, *key_node = map, *first;
	int err;

	if (map->type != YAML_MAPPING_NODE)
		return fail(p, map, "tls_server_config: expected a mapping");
	for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *v = yaml_document_get_node(&p->doc, pair->value);
		const char *name = scalar(k), *value = scalar(v);

		if (!name || !value)
			return fail(p, k, "tls_server_config: expected NAME: VALUE");
		if ((first = key_before(p, map, pair)))
			return fail(p, k, "tls_server_config: '%s' twice (first on line %zu)", name,
				    first->start_mark.line + 1);
		if (!strcmp(name, "cert_file")) {
			cert = value;
			cert_node = v;
		} else if (!strcmp(name, "key_file")) {
			key = value;
			key_node = v;
		} else if (!strcmp(name, "client_auth_type") && !strcmp(value, "NoClientCert")) {
			continue; /* the default */
		} else {
			return fail(p, k,
				    "tls_server_config: '%s' is not supported by kvmmmu-exporter "
				    "(cert_file and key_file are)",
				    name);
		}
	}
	if (!cert || !key)
		return fail(p, map, "tls_server_config: needs both cert_file and key_file");
	err = read_file(p, cert_node, cert, &p->cfg->cert_pem);
	if (!err)
		err = read_file(p, key_node, key, &p->cfg->key_pem);
	return err;
}

/*
 * "$2y$NN$" and 53 characters of bcrypt's base64: its salt and its hash.
 * A cost outside 04..31 or another byte passes no check ever (crypt_r()
 * says "*0"): a user who could never log in is a file not honoured.
 */
static bool bcrypt_hash(const char *h)
{
	static const char b64[] =
		"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int cost;

	if (strlen(h) != 60 ||
	    (strncmp(h, "$2a$", 4) && strncmp(h, "$2b$", 4) && strncmp(h, "$2y$", 4)))
		return false;
	if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	return cost >= 4 && cost <= 31 && strspn(h + 7, b64) == 53;
}

static int parse_users(struct parse *p, const yaml_node_t *map)
{
	struct web_config *cfg = p->cfg;
	const yaml_node_t *first;

	if (map->type == YAML_SCALAR_NODE && !*scalar(map))
		return 0; /* "basic_auth_users:" with nothing under it */
	if (map->type != YAML_MAPPING_NODE)
		return fail(p, map,
			    "basic_auth_users: expected a mapping of users to bcrypt hashes");
	for (yaml_node_pair_t *pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *v = yaml_document_get_node(&p->doc, pair->value);
		const char *name = scalar(k), *hash = scalar(v);

		if (!name || !*name || !hash)
			return fail(p, k, "basic_auth_users: expected USER: BCRYPT-HASH");
		if (strchr(name, ':'))
			return fail(p, k, "basic_auth_users: a user name cannot contain ':'");
		if (!bcrypt_hash(hash))
			return fail(p, v, "basic_auth_users: '%s': not a bcrypt hash ($2y$...)",
				    name);
		if ((first = key_before(p, map, pair)))
			return fail(p, k, "basic_auth_users: '%s' twice (first on line %zu)", name,
				    first->start_mark.line + 1);
		if (cfg->n_users == WEB_MAX_USERS)
			return fail(p, k, "basic_auth_users: more than %d users", WEB_MAX_USERS);
		cfg->users[cfg->n_users].name = strdup(name);
		cfg->users[cfg->n_users].hash = strdup(hash);
		if (!cfg->users[cfg->n_users].name || !cfg->users[cfg->n_users].hash)
			return -ENOMEM;
		/* bcrypt_hash() checked: two digits, compared as text */
		if (!cfg->n_users || memcmp(hash + COST_AT, cfg->dummy_hash + COST_AT, 2) > 0)
			memcpy(cfg->dummy_hash + COST_AT, hash + COST_AT, 2);
		cfg->n_users++;
	}
	return 0;
}

static int parse_root(struct parse *p)
{
	const yaml_node_t *root = yaml_document_get_root_node(&p->doc);

	if (!root || (root->type == YAML_SCALAR_NODE && !*scalar(root)))
		return 0; /* an empty file: no TLS, no auth */
	if (root->type != YAML_MAPPING_NODE)
		return fail(p, root, "expected a mapping (tls_server_config, basic_auth_users)");
	for (yaml_node_pair_t *pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = yaml_document_get_node(&p->doc, pair->key);
		const yaml_node_t *v = yaml_document_get_node(&p->doc, pair->value);
		const yaml_node_t *first = key_before(p, root, pair);
		const char *name = scalar(k);
		int err;

		if (!name)
			return fail(p, k, "expected a field name");
		if (first)
			return fail(p, k, "'%s' twice (first on line %zu)", name,
				    first->start_mark.line + 1);
		if (!strcmp(name, "tls_server_config"))
			err = parse_tls(p, v);
		else if (!strcmp(name, "basic_auth_users"))
			err = parse_users(p, v);
		else if (!strcmp(name, "http_server_config"))
			err = fail(p, k, "http_server_config is not supported by kvmmmu-exporter");
		else
			err = fail(p, k, "unknown field '%s'", name);
		if (err)
			return err;
	}
	return 0;
}

int web_config_parse(const char *text, size_t len, const char *dir, struct web_config *cfg,
		     char *why, size_t why_size)
{
	struct parse p = {.dir = dir, .cfg = cfg, .why = why, .why_size = why_size};
	yaml_parser_t parser;
	int err;

	memset(cfg, 0, sizeof(*cfg));
	memcpy(cfg->dummy_hash, DUMMY_HASH, sizeof(DUMMY_HASH));
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &p.doc)) {
		snprintf(why, why_size, "line %zu: %s", parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	err = parse_root(&p);
	yaml_document_delete(&p.doc);
	/*
	 * yaml_parser_load() reads one document: what follows a '---' would
	 * be left unread, its users and TLS with it (an empty first document
	 * would serve without either). One document, as exporter-toolkit's
	 * files are.
	 */
	if (!err) {
		if (!yaml_parser_load(&parser, &p.doc)) {
			err = fail(&p, NULL, "line %zu: %s", parser.problem_mark.line + 1,
				   parser.problem ? parser.problem : "not YAML");
		} else {
			const yaml_node_t *more = yaml_document_get_root_node(&p.doc);

			if (more)
				err = fail(&p, more,
					   "a second YAML document ('---'): the file "
					   "holds one");
			yaml_document_delete(&p.doc);
		}
	}
	yaml_parser_delete(&parser);
	if (err)
		web_config_free(cfg);
	return err;
}

int web_config_load(const char *path, struct web_config *cfg, char *why, size_t why_size)
{
	char *text = NULL, *dir = strdup(path), *slash;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int err;

	if (!dir)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		snprintf(why, why_size, "%s", strerror(errno));
		free(dir);
		return err;
	}
	errno = 0;
	len = getdelim(&text, &cap, '\0', f); /* the whole file: YAML has no NUL */
	/*
	 * A file that cannot be read whole (a directory: EISDIR) is no
	 * configuration: starting without its TLS and users would fail open.
	 */
	if (len < 0 && (ferror(f) || errno)) {
		err = errno ? -errno : -EIO;
		snprintf(why, why_size, "%s", strerror(-err));
		fclose(f);
		free(text);
		free(dir);
		return err;
	}
	fclose(f);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	err = web_config_parse(len > 0 ? text : "", len > 0 ? (size_t)len : 0, slash ? dir : NULL,
			       cfg, why, why_size);
	free(text);
	free(dir);
	return err;
}

/* Equal strings, in a time that depends on their lengths only. */
static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return !diff;
}

bool web_config_check_user(const struct web_config *cfg, const char *user, const char *password)
{
	const struct web_user *u = NULL;
	struct crypt_data data;
	const char *out;

	for (size_t i = 0; i < cfg->n_users; i++)
		if (same(cfg->users[i].name, user))
			u = &cfg->users[i];
	memset(&data, 0, sizeof(data));
	out = crypt_r(password, u ? u->hash : cfg->dummy_hash, &data);
	return u && out && out[0] != '*' && same(out, u->hash);
}

void web_config_free(struct web_config *cfg)
{
	free(cfg->cert_pem);
	free(cfg->key_pem);
	for (size_t i = 0; i < cfg->n_users; i++) {
		free(cfg->users[i].name);
		free(cfg->users[i].hash);
	}
	memset(cfg, 0, sizeof(*cfg));
}
