// SPDX-License-Identifier: GPL-2.0
/*
 * Loads bench/bpf_floor.bpf.c's object, attaches its programs in order and waits for a
 * signal (bench/bpf_floor.sh measures them with kernel.bpf_stats_enabled; bench/overhead.sh
 * loads its empty_bpf and minimal_bpf tracers with it).
 * Usage: bpf_floor OBJECT [TGID]   TGID: written into the first word of the object's .bss
 * (bench/minimal_tracer.bpf.c's floor_tgid) before the load.
 */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_program *prog;
	struct bpf_object *obj;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: bpf_floor OBJECT [TGID]\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (obj && argc == 3) {
		struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
		unsigned int tgid = (unsigned int)strtoul(argv[2], NULL, 10);
		size_t size = 0;
		const void *init = bss ? bpf_map__initial_value(bss, &size) : NULL;
		char *data = init && size >= sizeof(tgid) ? malloc(size) : NULL;

		if (!data) {
			fprintf(stderr, "bpf_floor: %s has no .bss to take the TGID\n", argv[1]);
			return 1;
		}
		memcpy(data, init, size);
		memcpy(data, &tgid, sizeof(tgid));
		if (bpf_map__set_initial_value(bss, data, size)) {
			fprintf(stderr, "bpf_floor: cannot set %s's TGID\n", argv[1]);
			return 1;
		}
		free(data);
	}
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "bpf_floor: cannot load %s\n", argv[1]);
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "bpf_floor: cannot attach %s\n", bpf_program__name(prog));
			return 1; /* exiting closes the links: nothing stays attached */
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_object__close(obj);
	return 0;
}
