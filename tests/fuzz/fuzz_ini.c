// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the ini handling (core/session/config.c): arbitrary bytes as a config file,
 * through ws_config_load, then every check and lookup whyslow does with it
 * (ws_config_check_section against ws_core_keys and a source-like table, sections, typed
 * lookups, command-line overrides).  Build and run: tests/fuzz/run_ini_decoders.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/config.h"

extern const struct ws_config_key ws_core_keys[];

static const struct ws_config_key src_keys[] = {
	{ "enabled", WS_CFG_BOOL, "yes", 0, 0, "on or off" },
	{ "threshold", WS_CFG_DURATION, "1ms", 1000, 1000000000ULL, "a duration" },
	{ "count", WS_CFG_U64, "4", 1, 64, "a number" },
	{ "name", WS_CFG_STRING, NULL, 0, 0, "a string" },
	{ NULL },
};

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(path, sizeof(path), "/dev/shm/fuzz_ini.%d.ini", (int)getpid());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ws_config c = { 0 };
	char err[768];
	const char *secs[64];
	FILE *f = fopen(path, "w");
	uint64_t u;
	bool b;

	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if (ws_config_load(&c, path, err, sizeof(err)) == 0) {
		size_t n = ws_config_sections(&c, secs, 64);

		ws_config_check_section(&c, "core", ws_core_keys, err, sizeof(err));
		for (size_t i = 0; i < n; i++) {
			ws_config_check_section(&c, secs[i], src_keys, err, sizeof(err));
			ws_config_section_line(&c, secs[i]);
			ws_config_get(&c, secs[i], "enabled");
			ws_config_bool(&c, secs[i], src_keys, "enabled", &b);
			ws_config_u64(&c, secs[i], src_keys, "threshold", &u);
			ws_config_u64(&c, secs[i], src_keys, "count", &u);
			ws_config_str(&c, secs[i], src_keys, "name");
		}
		for (const struct ws_config_key *k = ws_core_keys; k->key; k++) {
			const char *v = ws_config_get(&c, "core", k->key);

			if (v)
				ws_config_check_value(k, v, err, sizeof(err));
			ws_config_u64(&c, "core", ws_core_keys, k->key, &u);
			ws_config_str(&c, "core", ws_core_keys, k->key);
		}
		ws_config_set(&c, "core", "min_block", "1ms");
		ws_config_check_section(&c, "core", ws_core_keys, err, sizeof(err));
	} else if (!memchr(err, 0, sizeof(err))) {
		abort(); /* the message must be a terminated string */
	}
	ws_config_free(&c);
	return 0;
}
