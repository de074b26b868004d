/* A library sym_target dlopen()s after its maps were first read (tests/unit/test_symbols.c,
 * test_unwind.c). */
#include <unistd.h>

volatile int st_dl_sink;

__attribute__((noinline)) int st_dl_fn(int x)
{
	st_dl_sink = x;
	return st_dl_sink * 11 + 5;
}

/* Blocks in read(0) for one byte, called from sym_target's main ("block"). */
__attribute__((noinline)) int st_dl_block(void)
{
	char c;
	int r = (int)read(0, &c, 1);

	st_dl_sink = r;
	return st_dl_sink + 1;
}
