/* boot_proto.h - the wire format between oshrun and its PEs (a Unix-domain stream socket in the abstract namespace,
 * so nothing is ever created in the file system), and the names of the variables the launchers set.
 *
 * oshrun trusts a connection only after three checks, in this order, before it reads anything: the peer's uid
 * (SO_PEERCRED) is oshrun's; its pid is one of oshrun's PEs or descends from one (a wrapper shell may sit between);
 * its HELLO names that PE's rank and carries the job's secret (SHOAL_BOOT_SECRET, 32 random bytes in hex, handed to
 * the PEs in their environment only). */
#ifndef SHOAL_BOOT_PROTO_H
#define SHOAL_BOOT_PROTO_H
#include <stdint.h>

enum shoal_boot_msg_type {
  SHOAL_BOOT_HELLO = 1,     /* PE -> oshrun: arg = pid, payload = the job secret (SHOAL_BOOT_SECRET_LEN bytes) */
  SHOAL_BOOT_ALLGATHER = 2, /* PE -> oshrun: len bytes; oshrun -> PE: size*len bytes, by rank */
  SHOAL_BOOT_ABORT = 3,     /* PE -> oshrun: stop the job, exit status arg */
  SHOAL_BOOT_FINI = 4,      /* PE -> oshrun: finalized; its exit is no failure */
};

typedef struct shoal_boot_msg {
  uint32_t type;
  int32_t rank;
  int64_t arg;
  uint64_t len; /* payload bytes that follow */
} shoal_boot_msg_t;

#define SHOAL_BOOT_SECRET_LEN 32

/* Environment that oshrun sets for each PE. */
#define SHOAL_BOOT_ENV_ADDR "SHOAL_BOOT_ADDR" /* abstract socket name, without the leading NUL */
#define SHOAL_BOOT_ENV_SECRET "SHOAL_BOOT_SECRET" /* the job secret, hex; removed from the PE's environment at init */
#define SHOAL_BOOT_ENV_RANK "SHOAL_RANK"
#define SHOAL_BOOT_ENV_SIZE "SHOAL_SIZE"
#define SHOAL_BOOT_ENV_LOCAL_RANK "SHOAL_LOCAL_RANK"
#define SHOAL_BOOT_ENV_LOCAL_SIZE "SHOAL_LOCAL_SIZE"
/* Set by a PE at init to its job's name: a program started from inside a PE (system("./tool")) inherits the
 * launcher's variables, and this tells it that they are not its own. oshrun clears it for the PEs it starts. */
#define SHOAL_BOOT_ENV_JOB "SHOAL_PE_JOB"

#endif
