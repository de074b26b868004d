// SPDX-License-Identifier: GPL-2.0
/*
 * Loads bench/bpf_floor.bpf.c's object, attaches its programs in order and waits for a
 * signal (bench/bpf_floor.sh measures them with kernel.bpf_stats_enabled).
 * Usage: bpf_floor OBJECT
 */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
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

	if (argc != 2) {
		fprintf(stderr, "usage: bpf_floor OBJECT\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
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
