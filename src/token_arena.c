/* SPDX-License-Identifier: MIT */
#include "token_arena.h"

#include <stdint.h>
#include <sys/mman.h>

#include "common/log.h"
#include "common/thread_safety.h"

#define PAGE 4096u
#define RANGE_BYTES (1ull << 32)
/* Slot 0 of each page is its header; the others are tokens. */
#define SLOTS_PER_PAGE (PAGE / HO_TOKEN_SLOT - 1)

_Static_assert(HO_TOKEN_SLOT >= 89, "a token, its NUL");
_Static_assert(PAGE % HO_TOKEN_SLOT == 0, "slots tile a page");

struct page_hdr {
  unsigned freed; /* slots of this page given back */
};

static ho_mutex arena_mu = HO_MUTEX_INIT;
static uint8_t *range_next HO_GUARDED_GLOBAL(arena_mu); /* next page */
static uint8_t *range_end HO_GUARDED_GLOBAL(arena_mu);
static uint8_t *page HO_GUARDED_GLOBAL(arena_mu); /* slots being cut */
static unsigned page_handed HO_GUARDED_GLOBAL(arena_mu);

/* Reserve another range of address space; the old one stays reserved. */
static bool reserve_range(void) HO_REQUIRES(arena_mu)
{
  void *p = mmap(NULL, RANGE_BYTES, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    ho_warn("cannot reserve address space for RDMA tokens");
    return false;
  }
  range_next = p;
  range_end = range_next + RANGE_BYTES;
  return true;
}

static bool next_page(void) HO_REQUIRES(arena_mu)
{
  if (range_next == range_end && !reserve_range())
    return false;
  if (mprotect(range_next, PAGE, PROT_READ | PROT_WRITE) != 0) {
    ho_warn("cannot map a page for RDMA tokens");
    return false;
  }
  page = range_next;
  range_next += PAGE;
  page_handed = 0;
  ((struct page_hdr *)page)->freed = 0;
  return true;
}

char *ho_token_slot_alloc(void)
{
  char *slot = NULL;
  ho_mutex_lock(&arena_mu);
  if ((page && page_handed < SLOTS_PER_PAGE) || next_page()) {
    page_handed++;
    slot = (char *)page + (size_t)page_handed * HO_TOKEN_SLOT;
  }
  ho_mutex_unlock(&arena_mu);
  return slot;
}

void ho_token_slot_free(char *slot)
{
  if (!slot)
    return;
  uint8_t *pg = (uint8_t *)((uintptr_t)slot & ~(uintptr_t)(PAGE - 1));
  bool release = false;
  ho_mutex_lock(&arena_mu);
  struct page_hdr *h = (struct page_hdr *)pg;
  /* Every slot handed out and given back: no live token is on it, and the
   * allocator has moved past it. */
  release = ++h->freed == SLOTS_PER_PAGE;
  if (release && pg == page)
    page = NULL;
  ho_mutex_unlock(&arena_mu);
  if (release) {
    madvise(pg, PAGE, MADV_DONTNEED);
    mprotect(pg, PAGE, PROT_NONE);
  }
}
