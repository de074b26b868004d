// SPDX-License-Identifier: MIT
/*
 * What `whyslow --help`, `whyslow help COMMAND` and each command's --help print: the prose
 * here, the options from the option table (options.c), so an option is in every help of a
 * command it applies to, and in no other.
 */
#include "usage.h"
#include "options.h"

struct usage {
	unsigned int cmd;
	const char *head, *tail;
};

static const struct usage usages[] = {
	{ WS_CMD_NONE,
	  "Usage: whyslow [options] COMMAND [options] [ARGS...]\n"
	  "\n"
	  "Explains why a program was slow: every wait of a traced thread (off CPU for at least\n"
	  "--min-block) is walked back along proven wakeups to its root cause: a futex holder,\n"
	  "a disk request, a timer, or the threads that kept it off the CPU.\n"
	  "\n"
	  "Commands:\n"
	  "  run [options] [--] COMMAND [ARGS...]   run COMMAND and trace it and its children\n"
	  "  attach [options] PID...                trace running processes until Ctrl-C or exit\n"
	  "  record [options] -- COMMAND | attach PID...   save the events to a file, for later\n"
	  "  report [FILE...] [options]             analyse a recording (several: hosts joined)\n"
	  "  stuck [options] PID...                 what each thread waits for, now\n"
	  "  watch [options] -a | PID... | --cgroup PATH   keep the last seconds, dump slow ones\n"
	  "  dump                                   ask the running watch for a dump now\n"
	  "  help [COMMAND]                         this help, or COMMAND's\n"
	  "\n"
	  "Options before the command (each command's own: whyslow help COMMAND):\n",
	  "\n"
	  "`run` writes the report to stderr, so the command's own stdout stays its own (as strace\n"
	  "and time do); -o FILE writes it to FILE, -o - to stdout, which is then the report's\n"
	  "alone: the command's stdout goes to stderr. `attach` and `report` write it to stdout.\n"
	  "\n"
	  "Examples:\n"
	  "  sudo whyslow run -- ./my-slow-program --its-args\n"
	  "  sudo whyslow run --format=json -o chains.jsonl -- make -j4\n"
	  "  sudo whyslow attach --duration 30s -p $(pidof postgres)\n"
	  "  sudo whyslow -c /etc/whyslow/whyslow.ini run -- ./app\n"
	  "  sudo whyslow record -o app.data -- ./app && whyslow report app.data\n" },
	{ WS_CMD_RUN,
	  "Usage: whyslow run [options] [--] COMMAND [ARGS...]\n"
	  "\n"
	  "Runs COMMAND (as the user who ran sudo, unless --as-root) and traces it and every\n"
	  "process it starts. When it exits, prints the longest waits as causal chains and exits\n"
	  "with COMMAND's exit status. The report goes to stderr (or -o FILE), so COMMAND's stdout\n"
	  "stays its own. With -o - the report has stdout to itself and COMMAND's stdout goes to\n"
	  "stderr: `whyslow run --format json -o - -- CMD 2>/dev/null | jq .` gets the report alone.\n"
	  "\n"
	  "Options:\n",
	  "\n"
	  "On a terminal a status line (threads, events, lost, elapsed) is kept on stderr while\n"
	  "tracing; -v prints it once a second wherever stderr goes.\n"
	  "\n"
	  "Examples:\n"
	  "  sudo whyslow run -- ./my-slow-program --its-args\n"
	  "  sudo whyslow run --min-block=50ms --top=3 -- make -j4\n"
	  "  sudo whyslow run --format json -o - -- ./app 2>/dev/null | jq .\n" },
	{ WS_CMD_ATTACH,
	  "Usage: whyslow attach [options] PID...   (or whyslow attach -p PID[,PID...])\n"
	  "\n"
	  "Traces running processes (any thread id names its process) until Ctrl-C, --duration,\n"
	  "or until they all exit; then prints the longest waits as causal chains to stdout.\n"
	  "\n"
	  "Options:\n",
	  "\n"
	  "Examples:\n"
	  "  sudo whyslow attach --duration 30s $(pidof postgres)\n"
	  "  sudo whyslow attach -p 1234 --format json -o chains.jsonl\n" },
	{ WS_CMD_RECORD | WS_CMD_REC_ATTACH,
	  "Usage: whyslow record [options] [--] COMMAND [ARGS...]\n"
	  "       whyslow record [options] attach [options] PID...\n"
	  "\n"
	  "Saves every event to a file (default whyslow.data) instead of printing chains; analyse\n"
	  "it later, anywhere, with `whyslow report FILE` (no root needed). The report's options\n"
	  "(--format, --min-block, --top...) shape the --live analysis.\n"
	  "\n"
	  "Options:\n",
	  "\n"
	  "Examples:\n"
	  "  sudo whyslow record -o app.data -- ./app && whyslow report app.data\n"
	  "  sudo whyslow record -o db.data --duration 10s attach $(pidof postgres)\n" },
	{ WS_CMD_REPORT,
	  "Usage: whyslow report [FILE...] [options]\n"
	  "\n"
	  "Analyses a recording made by `whyslow record` (default FILE: whyslow.data; - reads it\n"
	  "from standard input) and prints the same chains the live run would have. Needs neither\n"
	  "root nor BPF.\n"
	  "Several FILEs, one per host: their chains joined across hosts by TCP evidence.\n"
	  "\n"
	  "Options:\n",
	  "\n"
	  "Examples:\n"
	  "  sudo whyslow record -o app.data -- ./app\n"
	  "  whyslow report app.data\n"
	  "  whyslow report app.data --format json --comm 'worker-[0-9]+'\n"
	  "  whyslow report app.data --since 14:32:07 --until 14:32:09.500\n"
	  "  whyslow report app.data --since 2s --pid 1234 --min-block 50ms\n"
	  "  whyslow report web.data db.data     (each recorded with --host on its own host)\n"
	  "  whyslow report app.data --format perfetto -o app.json   # open in ui.perfetto.dev\n" },
	{ WS_CMD_STUCK,
	  "Usage: whyslow stuck [options] PID...\n"
	  "\n"
	  "A snapshot of what every thread of the processes waits for, now, without tracing:\n"
	  "the syscall it sleeps in, how long it has been off CPU at least, its user stack, who\n"
	  "holds the mutex it waits for (read from the mutex itself), the chain of holders, and\n"
	  "deadlocks.\n"
	  "Exit status 3 when a deadlock is found, 0 otherwise, 1 on error.\n"
	  "Needs ptrace access to the processes (their user, or root), not BPF.\n"
	  "\n"
	  "Options:\n",
	  "\n"
	  "Examples:\n"
	  "  whyslow stuck $(pidof my-hung-program)\n"
	  "  whyslow stuck --format=json --min-block=1ms 1234\n" },
	{ WS_CMD_WATCH,
	  "Usage: whyslow watch [options] -a | PID... | --cgroup PATH | --comm NAME[,NAME]\n"
	  "\n"
	  "Traces until SIGINT or SIGTERM and keeps the last --keep seconds (at most --keep-mb)\n"
	  "of what a recording holds in memory. On SIGUSR1, on `whyslow dump`, and a second after a\n"
	  "wait of at least --trigger is reported (at most one per --min-interval), it writes them\n"
	  "as a recording into --spool, where `whyslow report DUMP` reads it on any machine.\n"
	  "\n"
	  "Options:\n",
	  "\n"
	  "Examples:\n"
	  "  sudo whyslow watch -a --trigger 500ms\n"
	  "  sudo whyslow watch --cgroup /sys/fs/cgroup/system.slice/nginx.service --trigger 200ms\n"
	  "  sudo whyslow dump; ls /var/lib/whyslow; whyslow report /var/lib/whyslow/whyslow-*.data\n" },
	{ WS_CMD_DUMP,
	  "Usage: whyslow dump\n"
	  "\n"
	  "Asks the running `whyslow watch` (found through /run/whyslow/watch.pid) to write its\n"
	  "flight recorder into its spool now, and prints the dump's path once it is written\n"
	  "(exit status 1 when none came within 10 s). Needs the watch's user (root).\n"
	  "\n"
	  "Options:\n",
	  "" },
};

void ws_usage(FILE *f, unsigned int cmd)
{
	const struct usage *u = &usages[0];

	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++)
		if (usages[i].cmd & cmd)
			u = &usages[i];
	fputs(u->head, f);
	ws_opts_help(f, u->cmd);
	fputs(u->tail, f);
}
