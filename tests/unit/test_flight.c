// SPDX-License-Identifier: MIT
/* The flight recorder of watch (core/record/flight.c) and its spool (core/record/spool.c): the
 * last records within both bounds, oldest dropped first and counted; dumps within the quota,
 * oldest removed first, never written over an existing path. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/flight.h"
#include "record/spool.h"

#define MS 1000000ULL

/* A record of @size bytes at @ts whose payload repeats @tag. */
static struct ws_rec_hdr *rec(uint16_t size, uint64_t ts, uint8_t tag)
{
	struct ws_rec_hdr *r = calloc(1, size);

	cr_assert_not_null(r);
	r->size = size;
	r->ts = ts;
	memset(r + 1, tag, size - sizeof(*r));
	return r;
}

struct walk {
	uint64_t n, first_ts, last_ts;
	bool ordered, intact;
};

static int check(void *ctx, const struct ws_rec_hdr *r)
{
	struct walk *w = ctx;
	const uint8_t *p = (const uint8_t *)(r + 1);

	if (w->n && r->ts <= w->last_ts)
		w->ordered = false;
	for (size_t i = 0; i < r->size - sizeof(*r); i++)
		if (p[i] != (uint8_t)(r->ts / MS))
			w->intact = false;
	if (!w->n)
		w->first_ts = r->ts;
	w->last_ts = r->ts;
	w->n++;
	return 0;
}

static struct walk walk(struct ws_flight *f)
{
	struct walk w = { .ordered = true, .intact = true };

	cr_assert_eq(ws_flight_each(f, check, &w), 0);
	return w;
}

Test(flight, too_small_a_buffer_is_refused)
{
	struct ws_flight *f;

	cr_assert_eq(ws_flight_new(&f, 1000 * MS, 4096), -EINVAL);
	cr_assert_null(f);
}

Test(flight, records_older_than_the_window_go_first_and_are_counted)
{
	struct ws_flight *f;
	struct ws_flight_stats st;
	struct walk w;

	cr_assert_eq(ws_flight_new(&f, 100 * MS, 1 << 20), 0);
	for (uint64_t t = 1; t <= 300; t++) {
		struct ws_rec_hdr *r = rec(64, t * MS, (uint8_t)t);

		ws_flight_push(f, r);
		free(r);
	}
	ws_flight_stats(f, &st);
	w = walk(f);
	cr_assert_eq(st.records, 101, "the last 100 ms, both ends in: %lu",
		     (unsigned long)st.records);
	cr_assert_eq(w.n, st.records);
	cr_assert_eq(st.aged, 199);
	cr_assert_eq(st.evicted, 0);
	cr_assert_eq(w.first_ts, 200 * MS);
	cr_assert_eq(w.last_ts, 300 * MS);
	cr_assert(w.ordered && w.intact);
	ws_flight_free(f);
}

Test(flight, the_memory_bound_holds_with_records_of_every_size_across_the_wrap)
{
	const size_t cap = 300 * 1024;
	struct ws_flight *f;
	struct ws_flight_stats st;
	struct walk w;
	uint64_t pushed = 0;

	cr_assert_eq(ws_flight_new(&f, 3600 * 1000 * MS, cap), 0);
	srand(7);
	for (uint64_t t = 1; t <= 20000; t++) {
		/* from a bare header to stacks of some kilobytes, misaligned sizes among them */
		uint16_t size = 32 + rand() % (t % 50 ? 200 : 9000);
		struct ws_rec_hdr *r = rec(size, t * MS, (uint8_t)t);

		ws_flight_push(f, r);
		free(r);
		pushed++;
		ws_flight_stats(f, &st);
		cr_assert_leq(st.bytes, cap);
	}
	w = walk(f);
	ws_flight_stats(f, &st);
	cr_assert(w.ordered && w.intact, "records come back whole and in order after the wrap");
	cr_assert_eq(w.last_ts, 20000 * MS, "the newest is kept");
	cr_assert_eq(w.n, st.records);
	cr_assert_eq(st.records + st.evicted, pushed, "every record dropped is counted");
	cr_assert_eq(w.first_ts, st.first_evicted_ts + MS, "what is held follows what was dropped");
	cr_assert_eq(st.oldest_ts, w.first_ts);
	ws_flight_free(f);
}

static char *spool_dir(void)
{
	char *d = strdup("/tmp/test_flight.XXXXXX");

	cr_assert_not_null(mkdtemp(d));
	return d;
}

static void spool_remove(struct ws_spool *sp, char *d)
{
	char cmd[300];

	ws_spool_close(sp);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d); /* ours: made by mkdtemp above */
	cr_assert_eq(system(cmd), 0);
	free(d);
}

static void put(struct ws_spool *sp, const char *name, size_t bytes)
{
	struct ws_spool_file sf;
	char *zero = calloc(1, bytes);

	cr_assert_eq(ws_spool_begin(sp, bytes, &sf), 0);
	cr_assert_eq(fwrite(zero, 1, bytes, sf.f), bytes);
	cr_assert_eq(ws_spool_commit(sp, &sf, name), 0);
	free(zero);
	usleep(20000); /* distinct modification times: the order is theirs */
}

Test(spool, the_quota_removes_the_oldest_dumps_and_their_sidecars_first)
{
	char *d = spool_dir(), path[256];
	struct ws_spool sp;
	char why[256];

	cr_assert_eq(ws_spool_open(&sp, d, 250000, why, sizeof(why)), 0, "%s", why);
	put(&sp, "whyslow-a.data", 100000);
	put(&sp, "whyslow-a.data.json", 1000);
	put(&sp, "whyslow-b.data", 100000);
	put(&sp, "other-file", 500000); /* not a dump: never counted, never removed */
	put(&sp, "whyslow-c.data", 100000);
	cr_assert_eq(ws_spool_trim(&sp, "whyslow-c.data"), 1);
	snprintf(path, sizeof(path), "%s/whyslow-a.data", d);
	cr_assert_neq(access(path, F_OK), 0, "the oldest went");
	snprintf(path, sizeof(path), "%s/whyslow-a.data.json", d);
	cr_assert_neq(access(path, F_OK), 0, "with its sidecar");
	snprintf(path, sizeof(path), "%s/other-file", d);
	cr_assert_eq(access(path, F_OK), 0);
	cr_assert_eq(ws_spool_usage(&sp), 200000);
	/* one that alone is over the quota goes too, the others first */
	put(&sp, "whyslow-d.data", 300000);
	cr_assert_eq(ws_spool_trim(&sp, "whyslow-d.data"), 3);
	cr_assert_eq(ws_spool_usage(&sp), 0);
	spool_remove(&sp, d);
}

Test(spool, a_dump_never_replaces_an_existing_path)
{
	char *d = spool_dir(), path[256];
	struct ws_spool sp;
	struct ws_spool_file sf;
	struct stat st;
	char why[256];
	int fd;

	cr_assert_eq(ws_spool_open(&sp, d, 1 << 20, why, sizeof(why)), 0, "%s", why);
	snprintf(path, sizeof(path), "%s/whyslow-x.data", d);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "theirs", 6), 6);
	close(fd);
	cr_assert_eq(ws_spool_begin(&sp, 10, &sf), 0);
	fputs("ours", sf.f);
	cr_assert_eq(ws_spool_commit(&sp, &sf, "whyslow-x.data"), -EEXIST);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 6, "the existing file is untouched");
	spool_remove(&sp, d);
}

Test(spool, a_directory_others_can_write_is_refused)
{
	char *d = spool_dir();
	struct ws_spool sp;
	char why[256];

	cr_assert_eq(chmod(d, 0777), 0);
	cr_assert_eq(ws_spool_open(&sp, d, 1 << 20, why, sizeof(why)), -EPERM);
	cr_assert(strstr(why, "others can write"), "%s", why);
	spool_remove(&sp, d);
}

Test(spool, a_dump_that_would_eat_into_the_free_space_reserve_is_refused)
{
	char *d = spool_dir();
	struct ws_spool sp;
	struct ws_spool_file sf;
	char why[256];

	cr_assert_eq(ws_spool_open(&sp, d, UINT64_MAX, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(ws_spool_begin(&sp, UINT64_MAX / 2, &sf), -ENOSPC);
	cr_assert_null(sf.f, "no temporary file is left open");
	cr_assert_eq(ws_spool_usage(&sp), 0);
	spool_remove(&sp, d);
}
