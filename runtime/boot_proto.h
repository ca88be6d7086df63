/* boot_proto.h - the wire format between oshrun and its PEs (a Unix-domain stream socket in the abstract namespace,
 * so nothing is ever created in the file system). */
#ifndef SHOAL_BOOT_PROTO_H
#define SHOAL_BOOT_PROTO_H
#include <stdint.h>

enum shoal_boot_msg_type {
  SHOAL_BOOT_HELLO = 1,     /* PE -> oshrun: arg = pid */
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

/* Environment that oshrun sets for each PE. */
#define SHOAL_BOOT_ENV_ADDR "SHOAL_BOOT_ADDR" /* abstract socket name, without the leading NUL */
#define SHOAL_BOOT_ENV_RANK "SHOAL_RANK"
#define SHOAL_BOOT_ENV_SIZE "SHOAL_SIZE"
#define SHOAL_BOOT_ENV_LOCAL_RANK "SHOAL_LOCAL_RANK"
#define SHOAL_BOOT_ENV_LOCAL_SIZE "SHOAL_LOCAL_SIZE"

#endif
