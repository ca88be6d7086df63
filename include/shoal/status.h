/* shoal/status.h - the status codes every module of libshoal returns (runtime/, collectives/, device/), and the branch
 * hints. Internal (never installed): it lives here, outside the modules, so that device/'s headers can use the codes
 * without including runtime/shoal.h (device/ is a leaf: docs/design/modules.md). libc only. */
#ifndef SHOAL_STATUS_H
#define SHOAL_STATUS_H

#ifndef SHOAL_OK
#define SHOAL_OK 0
#define SHOAL_ERR -1
#define SHOAL_ERR_NOMEM -2
#define SHOAL_ERR_INVAL -3
#define SHOAL_ERR_NOSYS -4
#define SHOAL_ERR_IO -5
#endif
typedef int shoal_status_t;

#define SHOAL_LIKELY(x) __builtin_expect(!!(x), 1)
#define SHOAL_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
