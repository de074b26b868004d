// SPDX-License-Identifier: MIT
/* The SDK's hash table (whyslow/table.h) against a plain array that does the same. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include <whyslow/table.h>

struct val {
	uint64_t key_copy;
	uint32_t n;
};

Test(table, matches_a_reference_through_puts_and_deletes)
{
	enum { KEYS = 3000, OPS = 200000 };
	static uint32_t ref[KEYS]; /* 0: absent, else the value stored */
	struct ws_table t;
	size_t live = 0;

	ws_table_init(&t, sizeof(struct val));
	srand(12);
	for (int op = 0; op < OPS; op++) {
		/* keys clustered like tids, plus large ones like addresses */
		uint64_t k = (uint64_t)(rand() % KEYS);
		uint64_t key = k % 3 ? k + 1 : (k << 40) | 0x1000;
		struct val *v = ws_table_get(&t, key);

		cr_assert_eq(v != NULL, ref[k] != 0, "key %llu", (unsigned long long)key);
		if (v) {
			cr_assert_eq(v->n, ref[k]);
			cr_assert_eq(v->key_copy, key);
			cr_assert_eq(ws_table_key_of(v), key);
		}
		if (rand() % 3 == 0) {
			cr_assert_eq(ws_table_del_key(&t, key), ref[k] != 0);
			live -= ref[k] != 0;
			ref[k] = 0;
		} else {
			bool added;

			v = ws_table_put(&t, key, &added);
			cr_assert_not_null(v);
			cr_assert_eq(added, ref[k] == 0);
			if (added) {
				cr_assert_eq(v->n, 0, "a new value starts zeroed");
				live++;
			}
			v->key_copy = key;
			v->n = ref[k] = (uint32_t)op + 1;
		}
		cr_assert_eq(t.live, live);
	}
	/* iteration sees exactly the live entries */
	size_t seen = 0;

	for (size_t i = 0; i < t.cap; i++) {
		struct val *v = ws_table_at(&t, i);

		if (v) {
			seen++;
			cr_assert_eq(ws_table_key_of(v), v->key_copy);
		}
	}
	cr_assert_eq(seen, live);
	ws_table_free(&t);
	cr_assert_eq(t.cap, 0);
}

Test(table, key_zero_is_never_stored)
{
	struct ws_table t;

	ws_table_init(&t, 0);
	cr_assert_null(ws_table_put(&t, 0, NULL));
	cr_assert_null(ws_table_get(&t, 0));
	cr_assert_not_null(ws_table_put(&t, 7, NULL));
	cr_assert_not_null(ws_table_get(&t, 7));
	cr_assert_null(ws_table_get(&t, 8));
	ws_table_free(&t);
}
