// SPDX-License-Identifier: MIT
/*
 * plugin: a shared library that nofp loads with dlopen() after it has been
 * running for a while, built without frame pointers like nofp.
 */
static volatile unsigned long plugin_sink;

__attribute__((noinline)) static void plugin_inner(void)
{
	for (int i = 0; i < 200000; i++)
		plugin_sink += (unsigned long)i * 5;
}

__attribute__((noinline)) void plugin_work(void)
{
	plugin_inner();
	plugin_sink++;
}
