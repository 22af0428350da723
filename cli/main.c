/*
 * main.c - tpplan entry point: dispatches subcommands from one table.
 * Only the CLI exits; exit codes are documented in usage().
 */
#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "cli.h"

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcmd cmds[] = {
	{"plan", tpp_cmd_plan, "search layouts (default when the first argument is a flag)"},
	{"models", tpp_cmd_models, "list the built-in model presets"},
	{"validate", tpp_cmd_validate, "predict published training runs and report the error"},
	{"calibrate", tpp_cmd_calibrate, "measure collectives and GEMMs (under mpiexec) or import nccl-tests output"},
	{"report", tpp_cmd_report, "write an HTML + Markdown report with gnuplot figures into a directory"},
	{"exec", tpp_cmd_exec, "run a layout's layers sharded under mpiexec; check numerics, time vs prediction"},
};

static void usage(FILE *f)
{
	size_t i;
	fprintf(f,
		"usage: tpplan [plan] --model NAME|FILE --cluster NAME|FILE [options]\n"
		"       tpplan <command> [--help]\n\n"
		"Plans tensor / pipeline / data parallel layouts for training a\n"
		"transformer on a GPU cluster and ranks them by predicted step time.\n\n"
		"commands:\n");
	for (i = 0; i < TPP_ARRAY_LEN(cmds); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f,
		"\nRun `tpplan plan --help` for the planning options.\n\n"
		"exit codes:\n"
		"  0  success\n"
		"  1  no layout is feasible (or the search ran past --time-limit), or a check failed\n"
		"  2  usage error (bad flag or value)\n"
		"  3  input or configuration error (bad YAML, unknown model, ...)\n"
		"  4  backend or system error\n");
}

static int dispatch(int argc, char **argv);

/* Results go to stdout: a write that failed (a full disk, a closed pipe)
 * must not end in a success exit. */
int main(int argc, char **argv)
{
	int rc = dispatch(argc, argv);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "tpplan: error writing standard output: %s\n", strerror(errno));
		return rc ? rc : TPP_E_SYSTEM;
	}
	return rc;
}

static int dispatch(int argc, char **argv)
{
	size_t i;
	if (argc < 2) {
		usage(stderr);
		return TPP_E_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return TPP_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tpplan %s\n", tpp_version);
		return TPP_OK;
	}
	if (argv[1][0] == '-')
		return tpp_cmd_plan(argc, argv);
	for (i = 0; i < TPP_ARRAY_LEN(cmds); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "tpplan: unknown command '%s' (try `tpplan --help`)\n",
		argv[1]);
	return TPP_E_USAGE;
}
