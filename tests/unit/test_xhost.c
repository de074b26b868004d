// SPDX-License-Identifier: MIT
/*
 * The join of several hosts' recordings (core/report/xhost*.c): a receive matches the send of
 * its first byte only on the mirrored connection, across the sequence numbers' wrap; the clock
 * offset is bounded from pairs both ways; a peer no recording has is said not proven.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/plugin.h>

#include "report/xhost.h"

#define MS 1000000ull

/* Host 0 "a" anchored at wall = mono; host 1 "b" whose wall clock reads @shift ahead. */
static void two_hosts(struct ws_xjoin *j, int64_t shift)
{
	struct ws_clock ca = { .mono_ns = 1000 * MS, .wall_ns = 1000 * MS };
	struct ws_clock cb = { .mono_ns = 1000 * MS, .wall_ns = 1000 * MS + shift };

	memset(j, 0, sizeof(*j));
	cr_assert_eq(ws_xjoin_add_host(j, "a.data", "a", "", &ca), 0);
	cr_assert_eq(ws_xjoin_add_host(j, "b.data", "b", "", &cb), 0);
}

/* A TCP call of the last host added. */
static void io(struct ws_xjoin *j, uint64_t ts, uint32_t tid, bool send, const char *local,
	       const char *peer, uint32_t seq_end, uint32_t bytes)
{
	struct ws_sock_io x = { .sz = sizeof(x),
				.ts = ts,
				.tid = tid,
				.pid = tid,
				.bytes = bytes,
				.dir = send ? WS_SOCK_SEND : WS_SOCK_RECV,
				.proto = WS_SOCK_TCP,
				.local = local,
				.peer = peer,
				.seq_end = seq_end,
				.flags = WS_SOCK_SEQ };

	cr_assert_eq(ws_xjoin_io(j, &x), 0);
}

/* Add host @h's calls: recordings are read one after the other, so this one is the last. */
static void only_host(struct ws_xjoin *j, int h)
{
	j->nhosts = h + 1;
}

Test(xhost, receive_matches_the_mirrored_send_across_the_wrap)
{
	struct ws_xjoin j;
	const struct ws_xio *s;

	two_hosts(&j, 0);
	only_host(&j, 0);
	/* a got 100 bytes that began 40 before the wrap */
	io(&j, 2000 * MS, 11, false, "10.0.0.1:5000", "10.0.0.2:80", 60, 100);
	only_host(&j, 1);
	/* the same bytes sent the other way round on b's connection to someone else: no match */
	io(&j, 1990 * MS, 21, true, "10.0.0.2:80", "10.0.0.9:5000", 60, 100);
	/* b's own receive of those numbers is not a send */
	io(&j, 1990 * MS, 22, false, "10.0.0.2:80", "10.0.0.1:5000", 60, 100);
	/* the send: [0xffffffd8, 60) */
	io(&j, 1995 * MS, 23, true, "10.0.0.2:80", "10.0.0.1:5000", 60, 100);
	cr_assert_eq(ws_xjoin_match(&j), 0);
	cr_assert_eq(j.pairs, 1);
	for (size_t i = 0; i < j.hosts[0].nios; i++)
		if (!j.hosts[0].ios[i].send) {
			s = xjoin_sender(&j, &j.hosts[0].ios[i]);
			cr_assert_not_null(s);
			cr_assert_eq(s->tid, 23);
		}
	ws_xjoin_free(&j);
}

Test(xhost, a_receive_past_the_send_is_not_it)
{
	struct ws_xjoin j;

	two_hosts(&j, 0);
	only_host(&j, 0);
	/* bytes [1000, 1100): the send below was [900, 1000) */
	io(&j, 2000 * MS, 11, false, "10.0.0.1:5000", "10.0.0.2:80", 1100, 100);
	only_host(&j, 1);
	io(&j, 1995 * MS, 23, true, "10.0.0.2:80", "10.0.0.1:5000", 1000, 100);
	cr_assert_eq(ws_xjoin_match(&j), 0);
	cr_assert_eq(j.pairs, 0);
	ws_xjoin_free(&j);
}

Test(xhost, offset_bounded_both_ways_contains_the_shift)
{
	struct ws_xjoin j;
	const int64_t shift = 250 * MS;

	two_hosts(&j, shift);
	/* a -> b takes 3 ms, b -> a 5 ms (true times; b's wall reads shift ahead) */
	only_host(&j, 0);
	io(&j, 2000 * MS, 11, true, "10.0.0.1:5000", "10.0.0.2:80", 116, 16);
	io(&j, 2020 * MS, 11, false, "10.0.0.1:5000", "10.0.0.2:80", 1200, 200);
	only_host(&j, 1);
	io(&j, 2003 * MS, 21, false, "10.0.0.2:80", "10.0.0.1:5000", 116, 16);
	io(&j, 2015 * MS, 21, true, "10.0.0.2:80", "10.0.0.1:5000", 1200, 200);
	cr_assert_eq(ws_xjoin_match(&j), 0);
	cr_assert_eq(j.pairs, 2);
	cr_assert(j.hosts[1].offset_known);
	/* 250 - 5 <= offset <= 250 + 3: midpoint 249 ms, half-width 4 ms */
	cr_assert_eq(j.hosts[1].offset_ns, (int64_t)(249 * MS));
	cr_assert_eq(j.hosts[1].offset_err_ns, 4 * MS);
	ws_xjoin_free(&j);
}

Test(xhost, offset_from_one_direction_is_not_bounded)
{
	struct ws_xjoin j;

	two_hosts(&j, 0);
	only_host(&j, 0);
	io(&j, 2020 * MS, 11, false, "10.0.0.1:5000", "10.0.0.2:80", 1200, 200);
	only_host(&j, 1);
	io(&j, 2015 * MS, 21, true, "10.0.0.2:80", "10.0.0.1:5000", 1200, 200);
	cr_assert_eq(ws_xjoin_match(&j), 0);
	cr_assert_eq(j.pairs, 1);
	cr_assert_not(j.hosts[1].offset_known);
	ws_xjoin_free(&j);
}

static void str_field(struct ws_claim *cl, const char *key, const char *v)
{
	struct ws_field *f = &cl->fields[cl->nfields++];

	snprintf(f->key, sizeof(f->key), "%s", key);
	f->type = WS_FIELD_STR;
	snprintf(f->s, sizeof(f->s), "%s", v);
}

/*
 * A chain of one link: @tid waited on a TCP socket until packet @src -> @dst, whose sender this
 * recording does not follow.
 */
static void socket_chain(struct ws_xjoin *j, uint32_t tid, uint64_t start, uint64_t end,
			 const char *src, const char *dst)
{
	static struct ws_claim cl;
	struct ws_chain *c = calloc(1, sizeof(*c));

	memset(&cl, 0, sizeof(cl));
	snprintf(cl.kind, sizeof(cl.kind), "socket");
	cl.root = true;
	str_field(&cl, "proto", "TCP");
	str_field(&cl, "src", src);
	str_field(&cl, "dst", dst);
	c->start = start;
	c->end = end;
	c->nlinks = 1;
	c->links[0] = (struct ws_link){ .tid = tid,
					.pid = tid,
					.comm = "cli",
					.start = start,
					.dur = end - start,
					.kind = "socket",
					.claim = &cl };
	snprintf(c->root, sizeof(c->root), "socket in cli");
	cr_assert_eq(ws_xjoin_chain(j, c, NULL, NULL), 0);
	free(c);
}

static char *print(struct ws_xjoin *j, enum ws_format format)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ws_xjoin_print(j, f, format, 5);
	fclose(f);
	return text;
}

Test(xhost, the_chain_goes_on_in_the_sender_s_wait)
{
	struct ws_xjoin j;
	char *text;

	two_hosts(&j, 0);
	only_host(&j, 0);
	socket_chain(&j, 11, 2000 * MS, 2300 * MS, "[::ffff:10.0.0.2]:80",
		     "[::ffff:10.0.0.1]:5000");
	io(&j, 1999 * MS, 11, true, "[::ffff:10.0.0.1]:5000", "[::ffff:10.0.0.2]:80", 116, 16);
	/* another connection's bytes, read first, are not the packet's */
	io(&j, 2300 * MS, 11, false, "10.0.0.1:6000", "10.0.0.3:80", 500, 200);
	io(&j, 2301 * MS, 11, false, "[::ffff:10.0.0.1]:5000", "[::ffff:10.0.0.2]:80", 1200, 200);
	only_host(&j, 1);
	socket_chain(&j, 21, 2001 * MS, 2295 * MS, "10.0.0.9:5432", "10.0.0.2:41000");
	io(&j, 2000 * MS, 21, false, "10.0.0.2:80", "10.0.0.1:5000", 116, 16);
	io(&j, 2296 * MS, 21, true, "10.0.0.2:80", "10.0.0.1:5000", 1200, 200);
	cr_assert_eq(ws_xjoin_match(&j), 0);
	text = print(&j, WS_FORMAT_JSON);
	cr_assert(
		strstr(text,
		       "\"crossings\":[{\"from_host\":\"b\",\"to_host\":\"a\",\"src\":\"10.0.0.2:80\",\"dst\":\"10.0.0.1:5000\",\"seq_start\":1000,\"seq_end\":1200,\"recv_tid\":11,\"send_tid\":21"),
		"%s", text);
	/* b's chain is shown inside a's, not again on its own */
	cr_assert_null(strstr(text, "\"type\":\"xhost_chain\",\"host\":\"b\""), "%s", text);
	free(text);
	ws_xjoin_free(&j);
}

Test(xhost, a_peer_in_no_recording_is_said_not_proven)
{
	struct ws_xjoin j;
	char *text;

	two_hosts(&j, 0);
	only_host(&j, 0);
	socket_chain(&j, 11, 2000 * MS, 2300 * MS, "10.0.0.2:8080", "10.0.0.1:5000");
	/* a proxy's end answered: b has only its own end of another connection */
	io(&j, 2301 * MS, 11, false, "10.0.0.1:5000", "10.0.0.2:8080", 1200, 200);
	only_host(&j, 1);
	io(&j, 2290 * MS, 21, true, "10.0.0.2:80", "10.0.0.2:41000", 1200, 200);
	cr_assert_eq(ws_xjoin_match(&j), 0);
	text = print(&j, WS_FORMAT_JSON);
	cr_assert(
		strstr(text,
		       "\"not_proven\":\"join not proven: no recording has the peer's end of 10.0.0.2:8080 -> 10.0.0.1:5000"),
		"%s", text);
	cr_assert(strstr(text, "\"links\":[{\"host\":\"a\""), "%s", text);
	cr_assert_null(strstr(text, "\"from_host\""), "%s", text);
	free(text);
	ws_xjoin_free(&j);
}

Test(xhost, a_long_connection_s_send_is_found_by_its_numbers)
{
	struct ws_xjoin j;
	const struct ws_xio *s = NULL;
	/* 20000 sends of 100 bytes from 2^32 - 1000000: the numbers wrap on the way */
	const uint32_t isn = 0u - 1000000u;

	two_hosts(&j, 0);
	only_host(&j, 0);
	/* the 15000th send's bytes, and one 4 bytes into the 3rd send's */
	io(&j, 5000 * MS, 11, false, "10.0.0.1:5000", "10.0.0.2:80", isn + 15000 * 100, 100);
	io(&j, 5000 * MS, 11, false, "10.0.0.1:5000", "10.0.0.2:80", isn + 2 * 100 + 50, 46);
	only_host(&j, 1);
	for (uint32_t i = 0; i < 20000; i++)
		io(&j, 1000 * MS + i, 21 + (i == 14999) + 2 * (i == 2), true, "10.0.0.2:80",
		   "10.0.0.1:5000", isn + (i + 1) * 100, 100);
	cr_assert_eq(ws_xjoin_match(&j), 0);
	cr_assert_eq(j.pairs, 2);
	for (size_t i = 0; i < j.hosts[0].nios; i++) {
		s = xjoin_sender(&j, &j.hosts[0].ios[i]);
		cr_assert_not_null(s);
		cr_assert_eq(s->tid, j.hosts[0].ios[i].bytes == 100 ? 22 : 23);
	}
	ws_xjoin_free(&j);
}

Test(xhost, a_recording_s_words_cannot_forge_lines)
{
	struct ws_xjoin j;
	struct ws_clock c = { 0 };
	char *text;

	memset(&j, 0, sizeof(j));
	cr_assert_eq(ws_xjoin_add_host(&j, "a.data", "evil\n\x1b[2Jhost", "", &c), 0);
	cr_assert_eq(ws_xjoin_add_host(&j, "b.data", "evil\n\x1b[2Jhost", "", &c), 0);
	cr_assert_str_eq(j.hosts[0].name, "evil??[2Jhost");
	cr_assert_str_eq(j.hosts[1].name, "evil??[2Jhost#2");
	cr_assert_eq(ws_xjoin_match(&j), 0);
	text = print(&j, WS_FORMAT_TEXT);
	cr_assert_null(strchr(text, '\x1b'), "%s", text);
	free(text);
	ws_xjoin_free(&j);
}
