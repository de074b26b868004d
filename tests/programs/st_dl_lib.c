/* A library sym_target dlopen()s after its maps were first read (tests/unit/test_symbols.c). */
volatile int st_dl_sink;

__attribute__((noinline)) int st_dl_fn(int x)
{
	st_dl_sink = x;
	return st_dl_sink * 11 + 5;
}
