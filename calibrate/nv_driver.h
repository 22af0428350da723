/*
 * nv_driver.h - the NVIDIA driver release from the first line of
 * /proc/driver/nvidia/version, for the cuda backend's description
 * (backend_cuda.c).  A header of its own, without CUDA, so that the unit
 * tests (tests/test_calibration.c) check it on machines without a GPU.
 */
#ifndef TPP_NV_DRIVER_H
#define TPP_NV_DRIVER_H

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/*
 * The first word after "Kernel Module" that starts with a digit, into out
 * ("" when there is none).  The proprietary module's line reads
 *   NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.82.07  Wed Aug ...
 * and the open one's (the default for Hopper and later since R560)
 *   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build ...
 */
static inline void tpp_nv_driver_release(const char *line, char *out, size_t size)
{
	const char *p = strstr(line, "Kernel Module");
	char w[64];
	int n = 0;
	if (size)
		out[0] = '\0';
	if (!p || !size)
		return;
	p += strlen("Kernel Module");
	while (sscanf(p, " %63s%n", w, &n) == 1 && n > 0) {
		if (isdigit((unsigned char)w[0])) {
			snprintf(out, size, "%s", w);
			return;
		}
		p += n;
	}
}

#endif
