/* Ground truth "metrics_io": one thread with a known total of block I/O time, for a whyslow that
 * attaches to it (tests/e2e/metrics_prom.sh: --metrics scraped by curl and by Prometheus).
 *
 *   gt_metrics_io --dev /dev/loopN --cgroup DIR --truth FILE [--min-read-ms N]
 *
 * It joins the blkio group, then reads a line from stdin (the test writes one once whyslow is
 * attached), makes 6 O_DIRECT reads of 4 KiB on the throttled device one after another,
 * writes the truth (its pid and the summed latency of the reads whyslow reports, those of at least
 * min_block = 10 ms: "block_io_ns"), and waits for stdin to close before it exits (the test
 * scrapes meanwhile). A group that was idle may let its first read through at once: such a read
 * is no wait worth reporting, and is left out of the truth (counted apart). Waiting on stdin, not
 * polling a file: no sleep of its own blurs what the metrics say of it.
 */
#include "gt_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READS 6
/* whyslow's default min_block: shorter waits are not reported, nor in the metrics */
#define MIN_BLOCK_NS 10000000ULL

int main(int argc, char **argv)
{
	struct gt_opts o;
	struct gt_read rd[READS];
	uint64_t sum = 0, fast_ns = 0;
	int slow = 0;
	char line[64];
	ssize_t n;
	FILE *f;

	gt_set_prog("gt_metrics_io");
	gt_parse(argc, argv, &o, 1);
	gt_join_cgroup(o.cgroups[0]);
	if (!fgets(line, sizeof(line), stdin))
		gt_die("stdin closed before the go line");
	for (int i = 0; i < READS; i++) {
		uint64_t ns;

		gt_slow_read(&o, gt_pick_offset(&o, i), &rd[i]);
		ns = rd[i].end_ns - rd[i].start_ns;
		if (ns >= MIN_BLOCK_NS) {
			sum += ns;
			slow++;
		} else {
			fast_ns += ns;
		}
	}
	if (slow < READS / 2)
		gt_die("only %d of %d reads were throttled: the run proves nothing", slow, READS);
	f = fopen(o.truth, "w");
	if (!f)
		gt_die("%s: %s", o.truth, strerror(errno));
	fprintf(f,
		"{\"pid\":%d,\"dev\":\"%s\",\"reads\":%d,\"slow_reads\":%d,\"block_io_ns\":%" PRIu64
		",\"fast_ns\":%" PRIu64 "}\n",
		(int)getpid(), o.dev_name, READS, slow, sum, fast_ns);
	if (fclose(f))
		gt_die("%s: %s", o.truth, strerror(errno));
	/* until the test is done scraping: EOF on stdin */
	while ((n = read(STDIN_FILENO, line, sizeof(line))) > 0 || (n < 0 && errno == EINTR))
		;
	return 0;
}
