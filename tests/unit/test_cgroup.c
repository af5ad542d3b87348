// SPDX-License-Identifier: MIT
/* cgroup.c: cgroup paths, container ids and NSpid from /proc text. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/cgroup.h"
#include "testlib.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void check_id(const char *path, const char *want, const char *name)
{
	char id[CONTAINER_ID_LEN + 1];
	int ret = cgroup_container_id(path, id);

	if (want)
		CHECK(ret == 0 && !strcmp(id, want), name, "'%s' -> '%s' (%d)", path, id, ret);
	else
		CHECK(ret == -ENOENT && id[0] == '\0', name, "'%s' -> '%s' (%d)", path, id, ret);
}

int main(void)
{
	struct cgroup_info ci;
	uint32_t nspid = 0;
	char text[600];

	T_PLAN(29);
	check_id("/system.slice/docker-" ID ".scope", ID, "docker (systemd driver)");
	check_id("/docker/" ID, ID, "docker (cgroupfs driver)");
	check_id("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/"
		 "cri-containerd-" ID ".scope",
		 ID, "containerd under kubepods");
	check_id("/kubepods/burstable/pod5678/" ID, ID, "kubepods cgroupfs");
	check_id("/machine.slice/libpod-" ID ".scope/container", ID, "podman, nested cgroup");
	check_id("/kubepods.slice/crio-" ID ".scope", ID, "cri-o");
	check_id("/system.slice/ssh.service", NULL, "systemd service: no container");
	check_id("/user.slice/user-0.slice/session-1.scope", NULL, "session scope: no container");
	check_id("/docker/0123abc", NULL, "short hex is not an id");
	check_id("/docker/" ID "0", NULL, "65 hex digits is not an id");
	check_id("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", NULL,
		 "upper-case hex is not what runtimes write");
	check_id("", NULL, "empty path");
	check_id("/", NULL, "root");

	snprintf(text, sizeof(text), "0::/system.slice/docker-%s.scope\n", ID);
	CHECK(cgroup_parse(text, strlen(text), &ci) == 0 &&
		      !strcmp(ci.path, "/system.slice/docker-" ID ".scope") &&
		      !strcmp(ci.container_id, ID),
	      "v2 line parsed with its container id", "path '%s' id '%s'", ci.path, ci.container_id);

	snprintf(text, sizeof(text),
		 "12:memory:/docker/%s\n1:name=systemd:/docker/%s\n", ID, ID);
	CHECK(cgroup_parse(text, strlen(text), &ci) == 0 && !strcmp(ci.path, "/docker/" ID),
	      "v1 host: the name=systemd line", "path '%s'", ci.path);

	snprintf(text, sizeof(text), "1:name=systemd:/a\n0::/b\n");
	CHECK(cgroup_parse(text, strlen(text), &ci) == 0 && !strcmp(ci.path, "/b"),
	      "hybrid host: v2 wins", "path '%s'", ci.path);
	CHECK(cgroup_parse("garbage", 7, &ci) == -ENOENT && ci.path[0] == '\0',
	      "no usable line: -ENOENT", "path '%s'", ci.path);
	CHECK(cgroup_parse("0::", 3, &ci) == 0 && ci.path[0] == '\0', "empty v2 path",
	      "path '%s'", ci.path);
	{
		char longline[1000];

		memcpy(longline, "0::/", 4);
		memset(longline + 4, 'a', sizeof(longline) - 4);
		CHECK(cgroup_parse(longline, sizeof(longline), &ci) == 0 &&
			      strlen(ci.path) == CGROUP_PATH_MAX - 1,
		      "over-long path is cut, not overflowed", "len %zu", strlen(ci.path));
	}

	CHECK(cgroup_parse_nspid("Name:\tx\nNSpid:\t4242\t17\t1\n", 27, &nspid) == 0 && nspid == 1,
	      "NSpid: innermost namespace's pid", "%u", nspid);
	CHECK(cgroup_parse_nspid("NSpid:\t99\n", 10, &nspid) == 0 && nspid == 99,
	      "NSpid: no namespace", "%u", nspid);
	CHECK(cgroup_parse_nspid("NSpid:\t99999999999\n", 19, &nspid) == -EINVAL,
	      "NSpid: overflow rejected", "%u", nspid);
	CHECK(cgroup_parse_nspid("Pid:\t1\n", 7, &nspid) == -ENOENT, "no NSpid line", "%s", "returned something else");

	CHECK(cgroup_read("/proc", (uint32_t)getpid(), &ci, NULL) == 0 && ci.path[0] == '/',
	      "our own /proc/self/cgroup", "path '%s'", ci.path);
	CHECK(cgroup_read_nspid("/proc", (uint32_t)getpid(), &nspid, NULL) == 0 && nspid > 0,
	      "our own NSpid", "%u", nspid);
	{
		struct errbuf e = { "" };

		CHECK(cgroup_read("/proc", 0x7ffffff0u, &ci, &e) == -ENOENT &&
			      strstr(e.msg, "/proc/2147483632/cgroup"),
		      "missing process: error names the file", "%s", e.msg);
	}
	{
		struct errbuf e = { "" };
		char root[256];
		struct stat st;
		uint64_t id = 0;

		if (cgroup_v2_mount(root, sizeof(root)) || stat(root, &st)) {
			T_SKIP("cgroup id of the v2 root", "no cgroup v2 mount");
		} else {
			CHECK(cgroup_id_of("/", &id, &e) == 0 && id == st.st_ino,
			      "cgroup id of \"/\": the mount's inode", "%llu vs %llu: %s",
			      (unsigned long long)id, (unsigned long long)st.st_ino, e.msg);
			CHECK(cgroup_id_of(root, &id, &e) == 0 && id == st.st_ino,
			      "cgroup id of the mount path itself", "%llu: %s",
			      (unsigned long long)id, e.msg);
			CHECK(cgroup_id_of("/no/such/cgroup-h15m", &id, &e) == -ENOENT &&
				      strstr(e.msg, "/no/such/cgroup-h15m"),
			      "missing cgroup: error names the path", "%s", e.msg);
		}
	}
	return T_EXIT();
}
