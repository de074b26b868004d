// SPDX-License-Identifier: MIT
/* Deadlocks as cycles of the wait-for graph (core/hang/waitfor.c). */
#include <criterion/criterion.h>

#include "hang/waitfor.h"

Test(waitfor, finds_a_two_thread_cycle_once)
{
	/* 10 waits for 11 and 11 for 10; 12 waits for 10 (a victim of the deadlock, not in it) */
	struct ws_waitfor_node n[] = { { 12, 10 }, { 10, 11 }, { 11, 10 }, { 13, 0 } };
	size_t cyc[4], len[4];

	cr_assert_eq(ws_waitfor_cycles(n, 4, cyc, len, 4), 1);
	cr_assert_eq(len[0], 2);
	cr_assert_eq(cyc[0], 1, "starts at its lowest index");
	cr_assert_eq(cyc[1], 2);
}

Test(waitfor, finds_longer_and_separate_cycles)
{
	/* 1 -> 2 -> 3 -> 1, and 7 -> 8 -> 7; 5 -> 9 (not a node): a chain that ends */
	struct ws_waitfor_node n[] = { { 3, 1 }, { 5, 9 }, { 1, 2 }, { 8, 7 }, { 2, 3 }, { 7, 8 } };
	size_t cyc[6], len[6];

	cr_assert_eq(ws_waitfor_cycles(n, 6, cyc, len, 6), 2);
	cr_assert_eq(len[0], 3);
	/* index 0 (tid 3) waits for tid 1 (index 2), which waits for tid 2 (index 4) */
	cr_assert_eq(cyc[0], 0);
	cr_assert_eq(cyc[1], 2);
	cr_assert_eq(cyc[2], 4);
	cr_assert_eq(len[1], 2);
	cr_assert_eq(cyc[3], 3);
	cr_assert_eq(cyc[4], 5);
}

Test(waitfor, no_cycle_in_a_chain_of_owners)
{
	struct ws_waitfor_node n[] = { { 1, 2 }, { 2, 3 }, { 3, 4 }, { 4, 0 } };
	size_t cyc[4], len[4];

	cr_assert_eq(ws_waitfor_cycles(n, 4, cyc, len, 4), 0);
	cr_assert_eq(ws_waitfor_next(n, 4, 0), 1);
	cr_assert_eq(ws_waitfor_next(n, 4, 3), -1);
}

Test(waitfor, a_thread_waiting_for_itself_is_a_cycle)
{
	/* relocking a normal mutex one already holds: a self-deadlock */
	struct ws_waitfor_node n[] = { { 5, 5 } };
	size_t cyc[1], len[1];

	cr_assert_eq(ws_waitfor_cycles(n, 1, cyc, len, 1), 1);
	cr_assert_eq(len[0], 1);
	cr_assert_eq(ws_waitfor_cycles(n, 0, cyc, len, 1), 0, "no nodes");
}
