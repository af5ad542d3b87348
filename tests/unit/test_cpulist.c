// SPDX-License-Identifier: MIT
/*
 * Tests for --cpu's lists (cpulist.h): what parses and to which CPUs, the
 * error naming each kind of bad item, CPUs checked against the online
 * ones, and lists written back, cut short when they do not fit.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fs/cpulist.h"
#include "testlib.h"

/* "0-3,5" -> its set, through the parser with no online check. */
static struct cpulist set_of(const char *s)
{
	struct cpulist l;

	if (cpulist_parse(s, NULL, &l, NULL))
		memset(&l, 0xff, sizeof(l));
	return l;
}

static void test_good(void)
{
	static const struct {
		const char *s, *back; /* as written again */
		int n;
	} cases[] = {
		{ "0", "0", 1 },         { "0,2", "0,2", 2 },     { "1-3,5", "1-3,5", 4 },
		{ "3,1,2", "1-3", 3 },   { "1,1,1-2", "1-2", 2 }, { "7-7", "7", 1 },
		{ "0-4095", "0-4095", 4096 }, { "4095", "4095", 1 }, { "63,64", "63-64", 2 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cpulist l;
		struct errbuf err = { "" };
		char back[64], name[80];
		int ret = cpulist_parse(cases[i].s, NULL, &l, &err);

		snprintf(name, sizeof(name), "parse: '%s' is %d CPUs, '%s'", cases[i].s,
			 cases[i].n, cases[i].back);
		cpulist_format(&l, back, sizeof(back));
		CHECK(!ret && cpulist_count(&l) == cases[i].n && !strcmp(back, cases[i].back),
		      name, "%d %d '%s' %s", ret, cpulist_count(&l), back, err.msg);
	}
}

static void test_bad(void)
{
	static const struct {
		const char *s, *msg; /* the error line, exactly */
	} cases[] = {
		{ "", "empty item in ''" },
		{ "0,,1", "empty item in '0,,1'" },
		{ "1,", "empty item in '1,'" },
		{ ",1", "empty item in ',1'" },
		{ "5-3", "'5-3' is not a range: 3 is below 5" },
		{ "x", "'x' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
		{ "0,1x", "'1x' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
		{ "-1", "'-1' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
		{ "+1", "'+1' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
		{ " 1", "' 1' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
		{ "1-", "'1-' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
		{ "1-2-3", "'1-2-3' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
		{ "4096", "'4096': CPU 4096 is beyond 4095" },
		{ "4000-5000", "'4000-5000': CPU 4096 is beyond 4095" },
		{ "99999999999999999999999",
		  "'99999999999999999999999' is not a CPU number or range (like 0, 0,2 or 1-3,5)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cpulist l;
		struct errbuf err = { "" };
		char name[96];
		int ret = cpulist_parse(cases[i].s, NULL, &l, &err);

		snprintf(name, sizeof(name), "parse: '%s' refused, named", cases[i].s);
		CHECK(ret < 0 && !strcmp(err.msg, cases[i].msg), name, "%d '%s'", ret, err.msg);
	}
}

static void test_online(void)
{
	struct cpulist online = set_of("0-1,4"), l;
	struct errbuf err = { "" };
	char host[64];

	CHECK(!cpulist_parse("1,4", &online, &l, &err) && cpulist_count(&l) == 2,
	      "online: CPUs that are online pass", "%s", err.msg);
	CHECK(cpulist_parse("0-2", &online, &l, &err) < 0 &&
		      !strcmp(err.msg, "'0-2': CPU 2 is not online (online: 0-1,4)"),
	      "online: the first CPU not online is named, with its item", "'%s'", err.msg);
	CHECK(cpulist_parse("0,9999", &online, &l, &err) < 0 &&
		      !strcmp(err.msg, "'9999': CPU 9999 is not online (online: 0-1,4)"),
	      "online: a number too big is not online either", "'%s'", err.msg);
	/* This host's list, as the kernel writes it: as many CPUs as libc counts. */
	CHECK(!cpulist_online(&l, &err), "online: read from sysfs", "%s", err.msg);
	cpulist_format(&l, host, sizeof(host));
	CHECK(cpulist_count(&l) == sysconf(_SC_NPROCESSORS_ONLN),
	      "online: the host's CPUs, all of them", "'%s' but %ld online", host,
	      sysconf(_SC_NPROCESSORS_ONLN));
}

static void test_format(void)
{
	struct cpulist l = set_of("0,2,4,6,8,10,12");
	char buf[12];
	size_t n = cpulist_format(&l, buf, sizeof(buf));

	CHECK(n == strlen("0,2,4,6,8,10,12") && !strcmp(buf, "0,2,4,6..."),
	      "format: a list too long ends in '...', within its buffer", "%zu '%s'", n, buf);
	n = cpulist_format(&l, buf, 3);
	CHECK(!strcmp(buf, ""), "format: no room even for '...': empty", "'%s'", buf);
	memset(&l, 0, sizeof(l));
	n = cpulist_format(&l, buf, sizeof(buf));
	CHECK(n == 0 && !buf[0], "format: an empty set", "%zu '%s'", n, buf);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	T_PLAN(32);
	test_good();
	test_bad();
	test_online();
	test_format();
	return T_EXIT();
}
