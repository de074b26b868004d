/*
 * A process with functions at known addresses, for tests/unit/test_symbols.c.  Built with -g and
 * -rdynamic: st_alpha and st_beta are exported (in .dynsym), st_hidden is not (hidden
 * visibility: only in .symtab), so a stripped copy must not name it after a neighbour.
 *
 * Prints "NAME ADDRESS" lines, then obeys stdin commands, one line each:
 *   dlopen   -> dlopen(argv[1]) and print "st_dl_fn ADDRESS"
 *   mmap     -> map an anonymous executable page and print "anon ADDRESS"
 *   block    -> print "st_dl_block ADDRESS", then call it: it blocks reading one byte of stdin
 *   data     -> print "st_data ADDRESS" (an initialised global array, in .data)
 *   bss      -> print "st_bss ADDRESS" (a zeroed one, in .bss: 64 KiB, so most of it lies in the
 *               anonymous mapping past the file's last page)
 * and exits 0 when stdin closes.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone, used))

volatile int sink;
/* data objects, for ws_symbols_data() */
int st_data[16] = { 1 };
char st_bss[65536];

enum {
	ALPHA_FIRST_LINE = __LINE__
};
KEEP int st_alpha(int x)
{
	sink = x;
	return sink * 3 + 1;
}
enum {
	ALPHA_LAST_LINE = __LINE__
};

KEEP __attribute__((visibility("hidden"))) int st_hidden(int x)
{
	sink = x + 7;
	return sink * 5 + 2;
}

KEEP int st_beta(int x)
{
	sink = x - 1;
	return sink * 7 + 3;
}

int main(int argc, char **argv)
{
	char line[64];
	void *h = NULL;

	alarm(60); /* never outlive a broken test */
	printf("st_alpha %p\nst_hidden %p\nst_beta %p\nalpha_lines %d %d\n", (void *)st_alpha,
	       (void *)st_hidden, (void *)st_beta, ALPHA_FIRST_LINE, ALPHA_LAST_LINE);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "dlopen\n") && argc > 1) {
			void *fn;

			h = dlopen(argv[1], RTLD_NOW);
			fn = h ? dlsym(h, "st_dl_fn") : NULL;

			printf("st_dl_fn %p\n", fn);
		} else if (!strcmp(line, "data\n")) {
			printf("st_data %p\n", (void *)st_data);
		} else if (!strcmp(line, "bss\n")) {
			printf("st_bss %p\n", (void *)st_bss);
		} else if (!strcmp(line, "mmap\n")) {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			printf("anon %p\n", p == MAP_FAILED ? NULL : p);
		} else if (!strcmp(line, "block\n") && h) {
			int (*fn)(void);
			void *sym = dlsym(h, "st_dl_block");

			/* A data pointer to a function pointer, as POSIX dlsym requires. */
			memcpy(&fn, &sym, sizeof(fn));
			printf("st_dl_block %p\n", sym);
			fflush(stdout);
			if (fn && fn() != 2)
				return 1;
		}
		fflush(stdout);
	}
	return st_alpha(1) + st_hidden(2) + st_beta(3) > 0 ? 0 : 1;
}
