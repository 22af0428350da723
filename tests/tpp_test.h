/*
 * tpp_test.h - minimal unit-test helpers: each test file is one executable
 * (one topic); checks count failures and the process exits non-zero if any
 * check failed.  Numeric checks use relative tolerances.
 */
#ifndef TPP_TEST_H
#define TPP_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int tpp_test_failures;
static int tpp_test_checks;

#define CHECK(cond)                                                          \
	do {                                                                 \
		tpp_test_checks++;                                           \
		if (!(cond)) {                                               \
			tpp_test_failures++;                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                            \
		}                                                            \
	} while (0)

/* |a - b| <= rel * max(|a|, |b|) */
#define CHECK_REL(a, b, rel)                                                 \
	do {                                                                 \
		double a_ = (double)(a), b_ = (double)(b);                   \
		double m_ = fmax(fabs(a_), fabs(b_));                        \
		tpp_test_checks++;                                           \
		if (!(fabs(a_ - b_) <= (rel) * m_)) {                        \
			tpp_test_failures++;                                 \
			fprintf(stderr,                                      \
				"%s:%d: CHECK_REL failed: %s = %.9g vs %s = %.9g (rel %.3g > %.3g)\n", \
				__FILE__, __LINE__, #a, a_, #b, b_,          \
				m_ > 0 ? fabs(a_ - b_) / m_ : 0.0, (double)(rel)); \
		}                                                            \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                      \
	do {                                                                 \
		tpp_test_checks++;                                           \
		if (!strstr((hay), (needle))) {                              \
			tpp_test_failures++;                                 \
			fprintf(stderr,                                      \
				"%s:%d: expected \"%s\" to contain \"%s\"\n", \
				__FILE__, __LINE__, (hay), (needle));        \
		}                                                            \
	} while (0)

/* Directory of test data, from CMake. */
#ifndef TPP_TEST_DATA
#define TPP_TEST_DATA "."
#endif

/* The next value of a fixed-seed splitmix64 sequence (*state advances):
 * reproducible random inputs for the tests that draw them. */
static inline uint64_t tpp_test_rand64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline int tpp_test_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, tpp_test_checks,
	       tpp_test_failures);
	return tpp_test_failures ? 1 : 0;
}

#endif
