// SPDX-License-Identifier: GPL-2.0
/*
 * --web.config.file: exporter-toolkit's format read, what is not
 * implemented refused (never ignored), bcrypt users checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "web_config.h"

/* bcrypt of "s3cret", cost 4 (the cheapest: these tests hash a lot) */
#define ALICE "$2b$04$C9ia4cpyIB4Exb.7DTZ.0OLQWtl753grS07e2KBLpLGiA7d5N7bIC"

/* bcrypt of "s3cret", cost 8: bcrypt's time dwarfs the clock's noise */
#define CAROL "$2b$08$ymU2RUbZe69WeRuw/C31fO1wV10LD.B6MHPfs0pyg4uxzBDfRLZym"

static int parse(const char *text, struct web_config *cfg, char *why)
{
	return web_config_parse(text, strlen(text), "/nonexistent", cfg, why, 200);
}

static void users(void **state)
{
	struct web_config cfg;
	char why[200] = "";

	(void)state;
	assert_int_equal(parse("basic_auth_users:\n  alice: " ALICE "\n", &cfg, why), 0);
	assert_int_equal(cfg.n_users, 1);
	assert_null(cfg.cert_pem);
	assert_true(web_config_check_user(&cfg, "alice", "s3cret"));
	assert_false(web_config_check_user(&cfg, "alice", "s3cret "));
	assert_false(web_config_check_user(&cfg, "alice", ""));
	assert_false(web_config_check_user(&cfg, "bob", "s3cret"));
	assert_false(web_config_check_user(&cfg, "alic", "s3cret"));
	web_config_free(&cfg);
	/* one document, with its markers */
	assert_int_equal(parse("---\nbasic_auth_users:\n  alice: " ALICE "\n...\n", &cfg, why), 0);
	assert_int_equal(cfg.n_users, 1);
	web_config_free(&cfg);
	/* an empty file: no TLS, no users */
	assert_int_equal(parse("", &cfg, why), 0);
	assert_int_equal(cfg.n_users, 0);
	web_config_free(&cfg);
}

/* The fastest of 5 checks of USER's PASSWORD, in seconds. */
static double check_time(const struct web_config *cfg, const char *user, const char *password)
{
	double best = 1e9;

	for (int i = 0; i < 5; i++) {
		struct timespec a, b;
		double t;

		clock_gettime(CLOCK_MONOTONIC, &a);
		assert_false(web_config_check_user(cfg, user, password));
		clock_gettime(CLOCK_MONOTONIC, &b);
		t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		best = t < best ? t : best;
	}
	return best;
}

/*
 * An unknown user takes as long to refuse as a known one with a wrong
 * password: the dummy hash has the users' highest cost (it had cost 10
 * whatever theirs: against cost 12, 0.05 s for an unknown name, 0.19 s for a
 * known one).
 */
static void unknown_user_same_time(void **state)
{
	struct web_config cfg;
	char why[200] = "";
	double unknown, known;

	(void)state;
	assert_int_equal(
		parse("basic_auth_users:\n  alice: " ALICE "\n  carol: " CAROL "\n", &cfg, why), 0);
	assert_memory_equal(cfg.dummy_hash, "$2b$08$", 7);
	unknown = check_time(&cfg, "mallory", "s3cret");
	known = check_time(&cfg, "carol", "wrong");
	if (unknown < known / 2 || unknown > known * 2)
		fail_msg("unknown user refused in %.4f s, a known one's wrong password in %.4f s",
			 unknown, known);
	web_config_free(&cfg);
	/* cheap users, a cheap dummy: an unknown name no slower than theirs */
	assert_int_equal(parse("basic_auth_users:\n  alice: " ALICE "\n", &cfg, why), 0);
	assert_memory_equal(cfg.dummy_hash, "$2b$04$", 7);
	web_config_free(&cfg);
}

static void refused(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"basic_auth_users:\n  alice: s3cret\n", "not a bcrypt hash"},
		{"basic_auth_users:\n  alice: " ALICE "\n  alice: " ALICE "\n",
		 "line 3: basic_auth_users: 'alice' twice (first on line 2)"},
		/* a key given twice: read in turn, the second replaced or added to the first */
		{"basic_auth_users:\n  alice: " ALICE "\nbasic_auth_users:\n  bob: " ALICE "\n",
		 "line 3: 'basic_auth_users' twice (first on line 1)"},
		{"tls_server_config:\n  cert_file: a.pem\n  cert_file: b.pem\n  key_file: k.pem\n",
		 "line 3: tls_server_config: 'cert_file' twice (first on line 2)"},
		{"basic_auth_users: [alice]\n", "expected a mapping"},
		{"tls_server_config:\n  cert_file: c.pem\n", "needs both"},
		{"tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: "
		 "TLS13\n",
		 "'min_version' is not supported"},
		{"tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n",
		 "cannot read '/nonexistent/c.pem'"},
		{"http_server_config:\n  http2: false\n", "not supported"},
		{"web_config: 1\n", "unknown field 'web_config'"},
		{"- a\n- b\n", "expected a mapping"},
		{"tls_server_config:\n  cert_file: [oops\n", "line "},
		/* the users after a second '---' would be left unread: served without them */
		{"---\n---\nbasic_auth_users:\n  alice: " ALICE "\n",
		 "line 3: a second YAML document"},
		{"basic_auth_users:\n  alice: " ALICE "\n---\nbasic_auth_users:\n  bob: " ALICE
		 "\n",
		 "a second YAML document"},
		{"basic_auth_users:\n  alice: " ALICE "\n---\n- [oops\n", "line "},
		/* a hash no password can ever match: a cost outside 04..31, a byte not bcrypt's */
		{"basic_auth_users:\n  alice: "
		 "$2b$99$C9ia4cpyIB4Exb.7DTZ.0OLQWtl753grS07e2KBLpLGiA7d5N7bIC\n",
		 "not a bcrypt hash"},
		{"basic_auth_users:\n  alice: "
		 "$2b$03$C9ia4cpyIB4Exb.7DTZ.0OLQWtl753grS07e2KBLpLGiA7d5N7bIC\n",
		 "not a bcrypt hash"},
		{"basic_auth_users:\n  alice: "
		 "$2b$1x$C9ia4cpyIB4Exb.7DTZ.0OLQWtl753grS07e2KBLpLGiA7d5N7bIC\n",
		 "not a bcrypt hash"},
		{"basic_auth_users:\n  alice: "
		 "$2b$04$C9ia4cpyIB4Exb!7DTZ.0OLQWtl753grS07e2KBLpLGiA7d5N7bIC\n",
		 "not a bcrypt hash"},
	};
	struct web_config cfg;
	char why[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_not_equal(parse(bad[i].text, &cfg, why), 0);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': got '%s', want '%s'", bad[i].text, why, bad[i].why);
		assert_null(strchr(why, '\n')); /* one line */
		assert_int_equal(cfg.n_users, 0);
	}
}

/* A file that cannot be read whole is an error: a directory is no empty config. */
static void unreadable_is_fatal(void **state)
{
	struct web_config cfg;
	char why[200] = "";

	(void)state;
	assert_int_not_equal(web_config_load("/tmp", &cfg, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "Is a directory"));
	assert_int_not_equal(web_config_load("/nonexistent.yml", &cfg, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(users),
		cmocka_unit_test(unknown_user_same_time),
		cmocka_unit_test(refused),
		cmocka_unit_test(unreadable_is_fatal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
