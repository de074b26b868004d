// SPDX-License-Identifier: MIT
/* What `whyslow --help` and each command's --help print (report's is in cmd_report.c). */
#include "usage.h"

/* The options of the report that run and attach print (record writes no report). */
#define REPORT_OPTIONS                                                                               \
	"      --format FMT       text (default), json (JSON Lines, one chain per line) or folded\n" \
	"                         (one line per piece of a wait, for flame graphs)\n"                \
	"  -o, --output FILE      write the report to FILE (complete, or not at all); - = stdout\n"  \
	"      --min-block DUR    report waits at least this long (default 10ms; units required)\n"  \
	"      --top N            text: show the N longest chains (default 5)\n"                     \
	"      --stack-depth N    text: user frames shown per link (default 3, and one kernel\n"     \
	"                         frame; 0: none); JSON, Perfetto and folded carry them all\n"       \
	"      --include-idle     rank idle waits too (epoll_wait, accept... that nobody was\n"      \
	"                         working to end); by default they are only counted\n"

const char ws_usage_main[] =
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
	"  report [FILE] [options]                analyse a recording (no root needed)\n"
	"  stuck [--format text|json] PID...      what each thread waits for, now\n"
	"  help [COMMAND]                         this help, or COMMAND's\n"
	"\n"
	"Options for every command (before or after it):\n"
	"  -c, --config FILE      read settings from an ini file (see whyslow.ini(5))\n"
	"      --sources LIST     comma-separated sources to enable, e.g. sched,futex,blkio\n"
	"      --plugin-dir DIR   load source plugins from DIR (env WHYSLOW_PLUGIN_DIR)\n"
	"  -v, --verbose          more detail; twice for libbpf's debug log\n"
	"      --config-help[=text|ini|man]  every ini key with its default, range and meaning\n"
	"      --version          print the version\n"
	"  -h, --help             this help (whyslow COMMAND --help: the command's)\n"
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
	"  sudo whyslow record -o app.data -- ./app && whyslow report app.data\n";

const char ws_usage_run[] =
	"Usage: whyslow run [options] [--] COMMAND [ARGS...]\n"
	"\n"
	"Runs COMMAND (as the user who ran sudo, unless --as-root) and traces it and every\n"
	"process it starts. When it exits, prints the longest waits as causal chains and exits\n"
	"with COMMAND's exit status. The report goes to stderr (or -o FILE), so COMMAND's stdout\n"
	"stays its own. With -o - the report has stdout to itself and COMMAND's stdout goes to\n"
	"stderr: `whyslow run --format json -o - -- CMD 2>/dev/null | jq .` gets the report alone.\n"
	"\n"
	"Options:\n" REPORT_OPTIONS
	"      --duration DUR     stop tracing after DUR and report the waits still open\n"
	"  -u, --user USER        run COMMAND as USER (default under sudo: $SUDO_USER)\n"
	"      --as-root          keep root for COMMAND\n"
	"      --wait             when COMMAND exits, trace what it left behind until that exits\n"
	"                         (default: name it, and stop 10s later)\n"
	"      --perfetto FILE    also write the chains as a Perfetto trace (ui.perfetto.dev)\n"
	"  -c, --config FILE, --sources LIST, --plugin-dir DIR, -v: see whyslow --help\n"
	"\n"
	"On a terminal a status line (threads, events, lost, elapsed) is kept on stderr while\n"
	"tracing; -v prints it once a second wherever stderr goes.\n"
	"\n"
	"Examples:\n"
	"  sudo whyslow run -- ./my-slow-program --its-args\n"
	"  sudo whyslow run --min-block=50ms --top=3 -- make -j4\n"
	"  sudo whyslow run --format json -o - -- ./app 2>/dev/null | jq .\n";

const char ws_usage_attach[] =
	"Usage: whyslow attach [options] PID...   (or whyslow attach -p PID[,PID...])\n"
	"\n"
	"Traces running processes (any thread id names its process) until Ctrl-C, --duration,\n"
	"or until they all exit; then prints the longest waits as causal chains to stdout.\n"
	"\n"
	"Options:\n"
	"  -p, --pid PID[,PID]    a process to trace (repeatable; or give PIDs as arguments)\n"
	"      --duration DUR     stop after DUR (default: Ctrl-C or exit)\n" REPORT_OPTIONS
	"      --perfetto FILE    also write the chains as a Perfetto trace (ui.perfetto.dev)\n"
	"  -c, --config FILE, --sources LIST, --plugin-dir DIR, -v: see whyslow --help\n"
	"\n"
	"Examples:\n"
	"  sudo whyslow attach --duration 30s $(pidof postgres)\n"
	"  sudo whyslow attach -p 1234 --format json -o chains.jsonl\n";

const char ws_usage_record[] =
	"Usage: whyslow record [options] [--] COMMAND [ARGS...]\n"
	"       whyslow record [options] attach [options] PID...\n"
	"\n"
	"Saves every event to a file (default whyslow.data) instead of printing chains; analyse\n"
	"it later, anywhere, with `whyslow report FILE` (no root needed).\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE      the recording (default whyslow.data)\n"
	"      --live FILE        also write the live analysis (--format) to FILE; - = stdout\n"
	"      --format, --min-block, --top, --include-idle, --perfetto: for --live,\n"
	"                         as in run\n"
	"      --duration DUR     stop after DUR\n"
	"  -u, --user USER, --as-root, --wait: as in run\n"
	"  -p, --pid PID          record attach: a process to trace\n"
	"  -c, --config FILE, --sources LIST, --plugin-dir DIR, -v: see whyslow --help\n"
	"\n"
	"Examples:\n"
	"  sudo whyslow record -o app.data -- ./app && whyslow report app.data\n"
	"  sudo whyslow record -o db.data --duration 10s attach $(pidof postgres)\n";
