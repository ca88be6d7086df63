/* alloc.c - the symmetric heap's allocator: first fit over offsets [0, size), with neighbour coalescing. Pure and
 * deterministic: every PE makes the same calls in the same order, so every PE gets the same offsets. At the end,
 * the one line a full heap says (from its state). */
#include "shoal.h"

#include <stdlib.h>

struct shoal_alloc_blk {
  size_t off, size;
  bool used;
  shoal_alloc_blk_t *next;
};

static shoal_alloc_blk_t *blk_new(size_t off, size_t size, bool used, shoal_alloc_blk_t *next) {
  shoal_alloc_blk_t *b = malloc(sizeof *b);
  if (b) *b = (shoal_alloc_blk_t){off, size, used, next};
  return b;
}

shoal_status_t shoal_alloc_init(shoal_alloc_t *a, size_t size) {
  shoal_alloc_blk_t *b = blk_new(0, size, false, NULL);
  if (!b) return SHOAL_ERR_NOMEM;
  *a = (shoal_alloc_t){.size = size, .head = b, .used = 0};
  return SHOAL_OK;
}

void shoal_alloc_fini(shoal_alloc_t *a) {
  for (shoal_alloc_blk_t *b = a->head, *n; b; b = n) {
    n = b->next;
    free(b);
  }
  a->head = NULL;
}

shoal_status_t shoal_alloc_alloc(shoal_alloc_t *a, size_t size, size_t align, size_t *off) {
  if (!size || !align || (align & (align - 1))) return SHOAL_ERR_INVAL;
  for (shoal_alloc_blk_t *b = a->head; b; b = b->next) {
    if (b->used) continue;
    size_t start = (b->off + align - 1) & ~(align - 1);
    if (start < b->off || start - b->off > b->size || size > b->size - (start - b->off)) continue;
    size_t pad = start - b->off, tail = b->size - pad - size;
    /* Split into [pad free][size used][tail free]; allocate the nodes first so failure changes nothing. */
    shoal_alloc_blk_t *t = tail ? blk_new(start + size, tail, false, b->next) : NULL;
    shoal_alloc_blk_t *u = pad ? blk_new(start, size, true, t ? t : b->next) : NULL;
    if ((tail && !t) || (pad && !u)) {
      free(t);
      free(u);
      return SHOAL_ERR_NOMEM;
    }
    if (pad) {
      b->size = pad;
      b->next = u;
    } else {
      b->size = size;
      b->used = true;
      b->next = t ? t : b->next;
    }
    a->used += size;
    *off = start;
    return SHOAL_OK;
  }
  return SHOAL_ERR_NOMEM;
}

static shoal_alloc_blk_t *find(const shoal_alloc_t *a, size_t off, shoal_alloc_blk_t **prev) {
  shoal_alloc_blk_t *p = NULL;
  for (shoal_alloc_blk_t *b = a->head; b && b->off <= off; p = b, b = b->next)
    if (b->off == off && b->used) {
      if (prev) *prev = p;
      return b;
    }
  return NULL;
}

shoal_status_t shoal_alloc_free(shoal_alloc_t *a, size_t off) {
  shoal_alloc_blk_t *p = NULL, *b = find(a, off, &p);
  if (!b) return SHOAL_ERR_INVAL;
  b->used = false;
  a->used -= b->size;
  shoal_alloc_blk_t *n = b->next;
  if (n && !n->used) { /* merge with next */
    b->size += n->size;
    b->next = n->next;
    free(n);
  }
  if (p && !p->used) { /* merge into previous */
    p->size += b->size;
    p->next = b->next;
    free(b);
  }
  return SHOAL_OK;
}

size_t shoal_alloc_size_of(const shoal_alloc_t *a, size_t off) {
  shoal_alloc_blk_t *b = find(a, off, NULL);
  return b ? b->size : 0;
}

shoal_status_t shoal_alloc_resize(shoal_alloc_t *a, size_t off, size_t size) {
  shoal_alloc_blk_t *b = find(a, off, NULL);
  if (!b || !size) return SHOAL_ERR_INVAL;
  shoal_alloc_blk_t *n = b->next;
  if (size <= b->size) { /* shrink: give the tail back */
    size_t tail = b->size - size;
    if (!tail) return SHOAL_OK;
    if (n && !n->used) {
      n->off -= tail;
      n->size += tail;
    } else {
      shoal_alloc_blk_t *t = blk_new(off + size, tail, false, n);
      if (!t) return SHOAL_ERR_NOMEM;
      b->next = t;
    }
    b->size = size;
    a->used -= tail;
    return SHOAL_OK;
  }
  size_t grow = size - b->size;
  if (!n || n->used || n->size < grow) return SHOAL_ERR_NOMEM;
  if (n->size == grow) {
    b->next = n->next;
    free(n);
  } else {
    n->off += grow;
    n->size -= grow;
  }
  b->size = size;
  a->used += grow;
  return SHOAL_OK;
}

size_t shoal_alloc_free_bytes(const shoal_alloc_t *a) { return a->size - a->used; }

size_t shoal_alloc_largest_free(const shoal_alloc_t *a) {
  size_t m = 0;
  for (shoal_alloc_blk_t *b = a->head; b; b = b->next)
    if (!b->used && b->size > m) m = b->size;
  return m;
}

/* Both heaps' message when full (heap.c, heap_gpu.c): here, below both, so that neither calls into the other. */
void shoal_heap_say_full(const char *routine, const char *which, const shoal_alloc_t *a, size_t size, size_t align,
                         const char *var, bool *said) {
  if (*said && !shoal_env.debug) return;
  const char *later = *said || shoal_env.debug ? "" : "; later failures are said only with SHMEM_DEBUG=1";
  shoal_warn("%s: cannot allocate %zu bytes (alignment %zu) from the %s: %zu bytes free (largest block %zu) of %zu; "
             "returning NULL (enlarge it with %s=SIZE%s)", routine, size, align, which, shoal_alloc_free_bytes(a),
             shoal_alloc_largest_free(a), a->size, var, later);
  *said = true;
}
