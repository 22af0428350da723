/*
 * tpp_mem.c - how much host memory this process may use: the machine's
 * physical memory, or less where a memory cgroup limits the job (a
 * container, a Slurm or Kubernetes job).  An allocation past a cgroup's
 * limit is not refused: the kernel's OOM killer ends the process mid-run,
 * so `calibrate` and `exec` check their buffers against this figure before
 * they allocate.
 *
 * The cgroup is found as the kernel documents it (cgroup-v1 memory.rst,
 * cgroup-v2.rst): /proc/self/cgroup names the process's cgroup, the
 * "0::PATH" line for v2 or the line listing the "memory" controller for v1;
 * /proc/self/mountinfo says where that hierarchy is mounted and which of
 * its cgroups the mount shows as its root (inside a container, usually the
 * container's own cgroup).  The limit is memory.max (v2, "max" when none)
 * or memory.limit_in_bytes (v1, a huge number when none), and a cgroup's
 * ancestors limit it too: the smallest from the process's cgroup up to
 * the mount's root is taken.
 */
#include "tpp_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read one number of bytes from dir/name; 0 when there is none ("max",
 * no such file, or v1's "no limit", which is near 2^63). */
static double read_limit(const char *dir, const char *name)
{
	char path[4096 + 64], buf[64];
	FILE *f;
	double v = 0;
	char *end;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return 0;
	if (!(f = fopen(path, "r")))
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		v = strtod(buf, &end);
		if (end == buf || v <= 0 || v >= 0x1p62)
			v = 0;
	}
	fclose(f);
	return v;
}

/* The process's cgroup in the hierarchy of `v2` (the unified one) or of
 * the v1 memory controller, from a /proc/self/cgroup file; 0 when found. */
static int cgroup_path(const char *cgroup_file, int v2, char *out, size_t size)
{
	char line[4096];
	FILE *f = fopen(cgroup_file, "r");
	int found = 0;
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char *nl;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		if ((nl = strchr(c2 + 1, '\n')))
			*nl = '\0';
		if (v2) {
			found = !strcmp(line, "0") && c1 + 1 == c2;
		} else {
			char *tok, *save = NULL;
			for (tok = strtok_r(c1 + 1, ",", &save); tok && !found;
			     tok = strtok_r(NULL, ",", &save))
				found = !strcmp(tok, "memory");
		}
		if (found)
			tpp_strlcpy(out, c2 + 1, size);
	}
	fclose(f);
	return found ? 0 : -1;
}

/* Where the hierarchy is mounted and the cgroup the mount shows at its
 * top, from a mountinfo file ("ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS
 * [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS"). */
static int cgroup_mount(const char *mountinfo, int v2, char *mnt, char *root,
			size_t size)
{
	char line[8192];
	FILE *f = fopen(mountinfo, "r");
	int found = 0;
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *field[6], *sep = strstr(line, " - "), *save = NULL, *tok;
		char *fstype, *super;
		int n = 0;
		if (!sep)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok && n < 6; tok = strtok_r(NULL, " ", &save))
			field[n++] = tok;
		if (n < 5)
			continue;
		save = NULL;
		fstype = strtok_r(sep + 3, " ", &save);
		(void)strtok_r(NULL, " ", &save); /* source */
		super = strtok_r(NULL, " \n", &save);
		if (!fstype)
			continue;
		if (v2) {
			found = !strcmp(fstype, "cgroup2");
		} else if (!strcmp(fstype, "cgroup") && super) {
			for (tok = strtok_r(super, ",", &save); tok && !found;
			     tok = strtok_r(NULL, ",", &save))
				found = !strcmp(tok, "memory");
		}
		if (found) {
			tpp_strlcpy(root, field[3], size);
			tpp_strlcpy(mnt, field[4], size);
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

double tpp_cgroup_mem_limit_from(const char *mountinfo, const char *cgroup_file)
{
	int v2;
	double best = 0;
	for (v2 = 1; v2 >= 0; v2--) {
		char cg[4096], mnt[4096], root[4096], dir[8192];
		const char *rel;
		size_t rl, ml;
		if (cgroup_path(cgroup_file, v2, cg, sizeof(cg)) ||
		    cgroup_mount(mountinfo, v2, mnt, root, sizeof(mnt)))
			continue;
		/* the cgroup relative to what the mount shows at its top; a
		 * cgroup outside it (a container's view): the mount's top */
		rl = strlen(root);
		if (!strcmp(root, "/"))
			rel = cg;
		else if (!strncmp(cg, root, rl) && (cg[rl] == '/' || !cg[rl]))
			rel = cg + rl;
		else
			rel = "";
		ml = strlen(mnt);
		if (snprintf(dir, sizeof(dir), "%s%s", mnt, rel) >= (int)sizeof(dir))
			continue;
		/* from the cgroup up to the mount's top, the smallest limit */
		for (;;) {
			size_t dl = strlen(dir);
			char *slash;
			double v = read_limit(dir, v2 ? "memory.max" : "memory.limit_in_bytes");
			if (v > 0 && (best == 0 || v < best))
				best = v;
			while (dl > ml && dir[dl - 1] == '/')
				dir[--dl] = '\0';
			if (dl <= ml || !(slash = strrchr(dir, '/')) || (size_t)(slash - dir) < ml)
				break;
			*slash = '\0';
		}
		if (best > 0)
			break;
	}
	return best;
}

double tpp_host_mem_limit(int *from_cgroup)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	double phys = pages > 0 && psize > 0 ? (double)pages * (double)psize : INFINITY;
	double cg = tpp_cgroup_mem_limit_from("/proc/self/mountinfo", "/proc/self/cgroup");
	if (from_cgroup)
		*from_cgroup = cg > 0 && cg < phys;
	return cg > 0 && cg < phys ? cg : phys;
}
