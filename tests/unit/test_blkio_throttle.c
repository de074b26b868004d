// SPDX-License-Identifier: MIT
/*
 * The blkio source's reader of I/O limits (plugins/blkio/blkio_throttle.c), on cgroup
 * directories made by the test: v1's blkio.throttle files and v2's io.max, as the kernel
 * writes them (one device a line).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../plugins/blkio/blkio_throttle.h"

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/whyslow-throttle.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	static const char *const files[] = { "blkio.throttle.read_iops_device",
					     "blkio.throttle.read_bps_device",
					     "blkio.throttle.write_iops_device",
					     "blkio.throttle.write_bps_device", "io.max" };
	char name[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(name, sizeof(name), "%s/%s", dir, files[i]);
		unlink(name);
	}
	rmdir(dir);
}

TestSuite(blkio_throttle, .init = make_dir, .fini = remove_dir);

static void put(const char *file, const char *text)
{
	char name[128];
	FILE *f;

	snprintf(name, sizeof(name), "%s/%s", dir, file);
	f = fopen(name, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(blkio_throttle, v1_read_iops_of_the_device)
{
	char buf[64];

	put("blkio.throttle.read_iops_device", "8:0 100\n7:0 2\n");
	put("blkio.throttle.read_bps_device", "");
	cr_assert(blkio_throttle_limits_in(dir, true, "7:0", false, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "2 reads/s on 7:0");
	/* another device's rule, or the other direction: none */
	cr_assert_not(blkio_throttle_limits_in(dir, true, "7:1", false, buf, sizeof(buf)));
	cr_assert_not(blkio_throttle_limits_in(dir, true, "7:0", true, buf, sizeof(buf)));
}

Test(blkio_throttle, v1_write_iops_and_bps)
{
	char buf[64];

	put("blkio.throttle.write_iops_device", "7:0 100\n");
	put("blkio.throttle.write_bps_device", "7:0 1048576\n");
	cr_assert(blkio_throttle_limits_in(dir, true, "7:0", true, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "100 writes/s, 1048576 bytes/s on 7:0");
}

Test(blkio_throttle, v2_io_max)
{
	char buf[64];

	put("io.max", "8:0 rbps=max wbps=max riops=50 wiops=max\n"
		      "7:0 rbps=max wbps=1048576 riops=2 wiops=max\n");
	cr_assert(blkio_throttle_limits_in(dir, false, "7:0", false, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "2 reads/s on 7:0");
	cr_assert(blkio_throttle_limits_in(dir, false, "7:0", true, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "1048576 bytes/s on 7:0");
	cr_assert(blkio_throttle_limits_in(dir, false, "8:0", false, buf, sizeof(buf)));
	cr_assert_str_eq(buf, "50 reads/s on 8:0");
	/* "max" everywhere is no limit */
	cr_assert_not(blkio_throttle_limits_in(dir, false, "8:0", true, buf, sizeof(buf)));
}
