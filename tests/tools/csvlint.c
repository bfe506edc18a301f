// SPDX-License-Identifier: GPL-2.0
/* Test helper: validates kvmmmu CSV files (v1, v2) with the project's reader; prints the row count.
 */
#include <stdio.h>

#include "csv.h"

int main(int argc, char **argv)
{
	int status = 0;

	for (int i = 1; i < argc; i++) {
		struct csv_table t;
		char err[256];

		if (csv_read_file(argv[i], &t, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", argv[i], err);
			status = 1;
			continue;
		}
		printf("%s: %zu rows\n", argv[i], t.n_rows);
		csv_table_free(&t);
	}
	return status;
}
