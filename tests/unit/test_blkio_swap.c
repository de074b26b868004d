// SPDX-License-Identifier: MIT
/* The blkio source's reader of /proc/swaps lines and of the swap areas it keeps (blkio_swap.c). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "../../plugins/blkio/blkio_swap.h"

Test(blkio_swap, a_partition_line)
{
	char path[64];
	bool part = false;

	cr_assert(blkio_swap_parse(
		"/dev/loop3                              partition\t65532\t\t0\t\t0\n", path,
		sizeof(path), &part));
	cr_assert_str_eq(path, "/dev/loop3");
	cr_assert(part);
}

Test(blkio_swap, a_file_with_a_blank_in_its_path)
{
	char path[64];
	bool part = true;

	cr_assert(blkio_swap_parse("/var/swap\\040file file 1048572 0 -2\n", path, sizeof(path),
				   &part));
	cr_assert_str_eq(path, "/var/swap file");
	cr_assert(!part);
}

Test(blkio_swap, the_header_and_bad_lines_are_none)
{
	char path[8];
	bool part;

	cr_assert(!blkio_swap_parse("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n", path,
				    sizeof(path), &part));
	cr_assert(!blkio_swap_parse("/dev/loop3\n", path, sizeof(path), &part));
	/* a path longer than the buffer is refused, not cut */
	cr_assert(
		!blkio_swap_parse("/dev/a-long-name partition 1 0 0\n", path, sizeof(path), &part));
}

Test(blkio_swap, an_entry)
{
	uint64_t start = 0, n = 0;
	char path[64];

	cr_assert(blkio_swap_entry("2048 131072 /dev/vda2", &start, &n, path, sizeof(path)));
	cr_assert_eq(start, 2048);
	cr_assert_eq(n, 131072);
	cr_assert_str_eq(path, "/dev/vda2");
	cr_assert(!blkio_swap_entry("vda2", &start, &n, path, sizeof(path)));
}
