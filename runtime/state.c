/* state.c - the PE's state (shoal_g), alone in its file: the leaves of the runtime (address translation, logging)
 * read it, and must not pull init.c's set-up (bootstrap, heaps, transports) into every program that links them. */
#include "shoal.h"

shoal_state_t shoal_g = {.boot = {.fd = -1}}; /* fd 0 would be stdin */
