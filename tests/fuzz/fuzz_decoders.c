// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for every plugin's record decoder and the engine behind it: a session is
 * opened on a plugin directory (FUZZ_PLUGIN_DIR: the plugins rebuilt with the fuzzer's
 * instrumentation by run_ini_decoders.sh), set to replay (no BPF, no root), and fed records made
 * from the input; then finished (chains built, reported to /dev/null) and freed.
 *
 * Input: a sequence of records, each
 *   u8 source (0 core/LOST, 1 sched, 2 futex, 3 blkio, 4 klock, else raw kind bytes follow)
 *   u8 kind low byte, u8 payload length, u8 tid, u8 pid, u8 cpu/ctx, u16 ts delta (us), payload.
 * The header's size always matches the bytes handed over (the ring buffer guarantees that);
 * everything else — kinds, payloads, ids, times — is the fuzzer's.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/record.h>

#include "base/clock.h"
#include "session/config.h"
#include "session/session.h"

static const char *plugin_dir;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	plugin_dir = getenv("FUZZ_PLUGIN_DIR");
	if (!plugin_dir) {
		fprintf(stderr, "fuzz_decoders: set FUZZ_PLUGIN_DIR to a plugin directory\n");
		exit(2);
	}
	devnull = fopen("/dev/null", "w");
	/* keep every plugin mapped for the whole run: the session dlcloses them, and libFuzzer's
	 * coverage counters of an unmapped module would be written to unmapped memory */
	DIR *d = opendir(plugin_dir);
	struct dirent *e;
	char path[4096];

	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".so")) {
			snprintf(path, sizeof(path), "%s/%s", plugin_dir, e->d_name);
			if (!dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))
				fprintf(stderr, "fuzz_decoders: %s\n", dlerror());
		}
	if (d)
		closedir(d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t bases[] = { WS_KIND_CORE, WS_KIND_SCHED, WS_KIND_FUTEX, WS_KIND_BLKIO,
					  WS_KIND_KLOCK };
	struct ws_session_opts so = { .plugin_dir = plugin_dir, .sources = getenv("FUZZ_SOURCES") };
	struct ws_config cfg = { 0 };
	struct ws_session *s = NULL;
	struct ws_clock clock = { .mono_ns = 1000000000ULL, .wall_ns = 1700000000000000000ULL };
	uint64_t ts = 1000000000ULL;
	size_t i = 0;

	ws_config_set(&cfg, "core", "format", size & 1 ? "json" : "text");
	ws_config_set(&cfg, "core", "min_block", "0");
	if (ws_session_open(&s, &so, &cfg))
		abort(); /* the plugin directory must open */
	ws_session_set_replay(s, &clock);
	for (uint32_t p = 1000; p < 1004; p++)
		ws_session_trace_pid(s, p);
	if (ws_session_start(s, devnull))
		goto out;
	while (i + 8 <= size) {
		_Alignas(8) uint8_t buf[8 + sizeof(struct ws_rec_hdr) + 256];
		struct ws_rec_hdr *h = (void *)buf;
		uint8_t src = data[i], klo = data[i + 1], len = data[i + 2];
		size_t avail;

		memset(buf, 0, sizeof(buf));
		h->kind = src < 5 ? bases[src] | klo : (uint16_t)(src << 8 | klo);
		h->tid = 1000 + (data[i + 3] & 7);
		h->pid = 1000 + (data[i + 4] & 3);
		h->cpu = data[i + 5] & 1;
		h->ctx = (data[i + 5] >> 1) & 7;
		h->ctx_id = data[i + 5] >> 4;
		ts += (uint64_t)(data[i + 6] | data[i + 7] << 8) * 1000;
		h->ts = ts;
		i += 8;
		avail = size - i < len ? size - i : len;
		memcpy(buf + sizeof(*h), data + i, avail);
		i += avail;
		h->size = sizeof(*h) + avail;
		if (h->kind == WS_KIND_LOST && h->size >= sizeof(struct ws_rec_lost)) {
			struct ws_rec_lost *l = (void *)buf;

			l->first_ts = ts - (l->first_ts % 10000000ULL); /* a window ending now */
		}
		ws_session_feed(s, h);
	}
	ws_session_finish(s);
out:
	ws_session_free(s);
	ws_config_free(&cfg);
	return 0;
}
