/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --web.config.file: TLS and basic auth, in the format of Prometheus'
 * exporter-toolkit (tls_server_config, basic_auth_users), so that one file
 * serves node_exporter and kvmmmu-exporter alike. What kvmmmu-exporter does
 * not implement is refused, never ignored: a setting silently dropped
 * would be a weaker server than its operator asked for.
 */
#ifndef KVMMMU_WEB_CONFIG_H
#define KVMMMU_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define WEB_MAX_USERS 64

struct web_user {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$ */
};

struct web_config {
	char *cert_pem, *key_pem; /* the files' contents; NULL: no TLS */
	struct web_user users[WEB_MAX_USERS];
	size_t n_users; /* 0: no basic auth */
	/* what an unknown user is checked against: a bcrypt hash of the users' highest cost */
	char dummy_hash[61];
};

/*
 * Reads PATH (cert_file and key_file relative to its directory). 0, or
 * -errno with a one-line reason in WHY (WHY_SIZE bytes).
 */
int web_config_load(const char *path, struct web_config *cfg, char *why, size_t why_size);
/* The same from TEXT (LEN bytes); files relative to DIR. */
int web_config_parse(const char *text, size_t len, const char *dir, struct web_config *cfg,
		     char *why, size_t why_size);
/* Whether USER with PASSWORD is one of CFG's users (bcrypt, compared in constant time). */
bool web_config_check_user(const struct web_config *cfg, const char *user, const char *password);
void web_config_free(struct web_config *cfg);

#endif
