/* gpu_ops.c - the backend-level part of device/: the table in use and its choice among the compiled-in backends, the
 * log hook the backends report through, and the pure helpers about the hardware. Nothing here knows the heap, the
 * bootstrap or the collectives (runtime/heap_gpu.c does). */
#include "gpu.h"

#include <stdarg.h>
#include <stdio.h>

shoal_gpu_kind_t shoal_gpu_kind = SHOAL_GPU_NONE;
shoal_gpu_ops_t shoal_gpu_ops;
const shoal_gpu_ops_t *shoal_gpu_test_backend;
void (*shoal_gpu_log_hook)(int level, const char *line);
int shoal_gpu_log_level;
char shoal_gpu_select_why[256];
char shoal_gpu_count_why[160];

static const shoal_gpu_ops_t *const backends[SHOAL_GPU_NKINDS] = {
  [SHOAL_GPU_NONE] = &shoal_gpu_none_ops,
#if SHOAL_HAVE_CUDA
  [SHOAL_GPU_CUDA] = &shoal_gpu_cuda_ops,
#endif
#if SHOAL_HAVE_HIP
  [SHOAL_GPU_HIP] = &shoal_gpu_hip_ops,
#endif
};

bool shoal_gpu_backend_built(void) {
  for (int k = SHOAL_GPU_NONE + 1; k < SHOAL_GPU_NKINDS; k++)
    if (backends[k]) return true;
  return shoal_gpu_test_backend != NULL;
}

void shoal_gpu_select(int *ndev, char *tried, size_t len) {
  shoal_gpu_ops_fill(&shoal_gpu_ops, &shoal_gpu_none_ops);
  shoal_gpu_kind = SHOAL_GPU_NONE;
  *ndev = 0;
  if (len) tried[0] = 0;
  shoal_gpu_select_why[0] = 0;
  for (int k = SHOAL_GPU_NONE + 1; k < SHOAL_GPU_NKINDS; k++) {
    shoal_gpu_ops_t ops;
    int c = 0;
    const shoal_gpu_ops_t *b = shoal_gpu_test_backend ? shoal_gpu_test_backend : backends[k];
    if (!b || shoal_gpu_ops_fill(&ops, b)) continue;
    size_t used = strlen(tried);
    if (used < len) snprintf(tried + used, len - used, "%s%s", used ? ", " : "", ops.name);
    shoal_gpu_count_why[0] = 0;
    if (ops.device_count(&c) == SHOAL_OK && c > 0) {
      shoal_gpu_ops = ops;
      shoal_gpu_kind = (shoal_gpu_kind_t)k;
      *ndev = c;
      shoal_gpu_select_why[0] = 0;
      return;
    }
    used = strlen(shoal_gpu_select_why);
    if (used < sizeof shoal_gpu_select_why)
      snprintf(shoal_gpu_select_why + used, sizeof shoal_gpu_select_why - used, "%s%s: %s", used ? "; " : "", ops.name,
               shoal_gpu_count_why[0] ? shoal_gpu_count_why : "0 devices");
  }
}

void shoal_gpu_logf(int level, const char *fmt, ...) {
  if (!shoal_gpu_log_hook || level > shoal_gpu_log_level) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  shoal_gpu_log_hook(level, line);
}

/* ---- pure helpers ---- */
long shoal_gpu_coresident_limit(int blocks_per_sm, int sms, int pes_per_gpu) {
  if (blocks_per_sm <= 0 || sms <= 0) return 0;
  return (long)blocks_per_sm * sms / (pes_per_gpu < 1 ? 1 : pes_per_gpu);
}

int shoal_gpu_count_sharing(const char *busids, size_t len, int n, int me) {
  int k = 0;
  for (int p = 0; p < n; p++) k += !strncmp(busids + (size_t)p * len, busids + (size_t)me * len, len);
  return k < 1 ? 1 : k;
}
