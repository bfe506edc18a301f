// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzing corpus of the CSV reader (tests/fuzz/csv/, kept from make fuzz
 * runs), replayed through the same targets on every test run, the reader's
 * and kvmmmu-diff's (loader and derivation): inputs that once found a bug,
 * or reach a path, keep being read right. make sanitize replays them under
 * ASan and UBSan.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../fuzz/csv_target.c"
#include "../fuzz/diff_target.c"

#define CORPUS "tests/fuzz/csv"

static void replay(void **state)
{
	struct dirent *e;
	size_t files = 0;
	DIR *d = opendir(CORPUS);

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[512], *buf;
		long len;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS, e->d_name);
		f = fopen(path, "rb");
		assert_non_null(f);
		assert_int_equal(fseek(f, 0, SEEK_END), 0);
		len = ftell(f);
		rewind(f);
		buf = malloc(len > 0 ? (size_t)len : 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		csv_target((const uint8_t *)buf, (size_t)len);
		diff_target((const uint8_t *)buf, (size_t)len);
		free(buf);
		files++;
	}
	closedir(d);
	/* the corpus is there: an empty replay would pass for nothing */
	assert_true(files >= 20);
	printf("# replayed %zu inputs\n", files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
