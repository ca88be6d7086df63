/* oshrun's command line: a pure parser (no printing, no environment changes) and the helpers main() needs to decide
 * between a local launch and a hand-off to a PMIx launcher. Option spellings follow Open MPI 4.1 mpirun; the
 * hand-off follows SOS's oshrun (which execs mpirun). User documentation: docs/man/oshrun.md. */
#ifndef SHOAL_OSHRUN_OPTS_H
#define SHOAL_OSHRUN_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define OSHRUN_MAX_PES 4096

typedef struct oshrun_opts {
  int npes;              /* -n/-np/--np N, 0 when not given; 1..OSHRUN_MAX_PES */
  int per_node;          /* -N N (PEs per node), 0 when not given */
  const char *host;      /* --host/-H list as given: "a,b:2,c", NULL when not given (may be given several times: join with ',') */
  const char *hostfile;  /* --hostfile/--machinefile FILE, NULL */
  const char *map_by;    /* --map-by core|hwthread|slot|numa|socket|package|node, NULL when not given */
  const char *bind_to;   /* --bind-to core|numa|none, NULL when not given (the caller chooses a default) */
  bool oversubscribe, tag_output, report_bindings;
  double timeout;        /* --timeout S, seconds > 0; 0 = none */
  int nexport; char **exports; /* -x VAR or VAR=VAL, in order (pointers into argv are fine) */
  int nmca; const char **mca;  /* --mca/--gmca KEY VALUE pairs, in order: mca[2i] the key, mca[2i+1] its value */
  bool allow_run_as_root;      /* --allow-run-as-root: Shoal never refuses root; passed on to mpirun */
  int prog;              /* index in argv of the program; argv[prog..] is the program and its arguments */
  enum { OSHRUN_RUN, OSHRUN_HELP, OSHRUN_VERSION } action;
  char **argv_copy_;     /* private: parse's copy of argv (some strings above point into it); freed by free */
  char *host_buf_;       /* private: the joined --host list that host points to */
} oshrun_opts_t;

/* Parse argv (argv[0] is oshrun's name) into *o, like Open MPI 4.1 mpirun: -n/-np/--np/-c N, -N/-npernode/--npernode N,
 * --host/-H LIST, --hostfile/--machinefile FILE, --map-by M, --bind-to B, --oversubscribe, -x VAR[=VAL],
 * --timeout S, --tag-output, --report-bindings, --mca/--gmca KEY VALUE (two words; KEY of A-Z a-z 0-9 _, not
 * starting with a digit), --allow-run-as-root, --version/-V, --help/-h, each with an argument as the next word,
 * after '=' or (short forms) attached; the single-dash long forms -np, -host, -hostfile, ... are accepted too.
 * Parsing stops at "--" or at the first word that is not an option: the program, whose own options are never read.
 * Counts are integers in [1, OSHRUN_MAX_PES]; --timeout is a finite decimal number of seconds > 0; a --host entry is
 * "name", "name:SLOTS" or "[ipv6]:SLOTS" (SLOTS in [1, OSHRUN_MAX_PES]). An option given twice: the last wins (-x and
 * --host accumulate). --help / --version stop parsing and need no program (action says which).
 * Returns 0 with *o filled, or 2 with o zeroed and a one-line message in err (no trailing newline; truncated to
 * errlen): an unknown option, a missing argument, a bad value (naming the option as typed and the valid values),
 * "no program given", or out of memory. Not thread-safe: it uses getopt_long (resets optind, sets opterr = 0).
 * Either way, release with oshrun_opts_free. */
int oshrun_opts_parse(int argc, char **argv, oshrun_opts_t *o, char *err, size_t errlen);

/* Free what oshrun_opts_parse allocated and zero *o; safe on a zeroed or failed *o, and twice. */
void oshrun_opts_free(oshrun_opts_t *o);

/* Whether every host named by --host and --hostfile is this machine: "localhost", a 127.x.x.x or ::1 address, this
 * machine's gethostname() or its short form (up to the first '.'), compared ignoring case; no DNS lookup. Hostfile
 * lines as Open MPI 4.1 reads them: "host", "host:N" or "host slots=N" (max_slots=/max-slots= accepted and ignored),
 * '#' starts a comment, blank lines skipped. Returns 1 yes (also with neither option, or an empty hostfile), 0 no,
 * -1 with a one-line message in err: the hostfile cannot be read, or a line is malformed ("F:LINE: ..."). */
int oshrun_hosts_local(const oshrun_opts_t *o, char *err, size_t errlen);

/* The slots (PEs that fit) given for this machine, summed over --host ("h:4" = 4 slots, "h" = 1 each time it is
 * named, as Open MPI 4.1 counts) and the hostfile (a line without a count is 1 slot; Open MPI would count the
 * cores). Local hosts as in oshrun_hosts_local. 0 when none given; saturates at INT_MAX; an unreadable or malformed
 * hostfile adds nothing (oshrun_hosts_local reports it). */
int oshrun_local_slots(const oshrun_opts_t *o);

/* The argv that hands a multi-node launch to the PMIx launcher `launcher` (e.g. "mpirun"), as SOS's oshrun does:
 *   launcher -np N [--npernode K] [--host H] [--hostfile F] [--map-by M] [--bind-to B] [--oversubscribe]
 *            [--tag-output] [--report-bindings] [--allow-run-as-root] [--mca KEY VALUE]... [-x VAR[=VAL]]...
 *            [--timeout S] program args...
 * in Open MPI 4.1 mpirun's spellings. N is o->npes, or 1 (oshrun's default) when not given; options not given are
 * left out, so the launcher's defaults apply. mpirun's --timeout takes whole seconds: S is o->timeout rounded up.
 * Requires a parse that returned 0 with action OSHRUN_RUN (argc and argv the same as given to parse). Returns a
 * NULL-terminated array in one malloc'd block (the caller frees the array only; strings point into argv, o and that
 * block, so use it before oshrun_opts_free(o)), or NULL when out of memory, launcher is NULL or o->prog is not in
 * [1, argc). */
char **oshrun_handoff_argv(const oshrun_opts_t *o, int argc, char **argv, const char *launcher);

/* Print the usage text to f: a synopsis line, then every option, one line each. */
void oshrun_usage(FILE *f);

#endif
