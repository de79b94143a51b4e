/* SPDX-License-Identifier: MIT */
/* A progress bar on stderr, for transfers that last: it appears after half a
 * second and redraws at most ten times a second. Called from any worker
 * thread; a thread that finds another drawing skips its turn (an atomic
 * flag, not a lock: nobody ever waits). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "tool.h"

#define SHOW_AFTER_S 0.5
#define REDRAW_S 0.1
#define WIDTH 30

struct tool_progress {
  atomic_flag drawing;
  double start, last; /* last and shown: only by the drawing thread */
  bool shown;
  atomic_uint_fast64_t done;
};

struct tool_progress *tool_progress_new(const char *label)
{
  (void)label;
  struct tool_progress *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  atomic_flag_clear(&p->drawing);
  p->start = tool_now();
  return p;
}

void tool_progress_free(struct tool_progress *p)
{
  free(p);
}

static void draw(struct tool_progress *p, uint64_t done, uint64_t total,
                 double t)
{
  char d[32], tot[32], rate[32], bar[WIDTH + 1];
  double frac = total ? (double)done / (double)total : 1.0;
  int fill = (int)(frac * WIDTH);
  for (int i = 0; i < WIDTH; i++)
    bar[i] = i < fill ? '#' : '.';
  bar[WIDTH] = '\0';
  tool_fmt_bytes((double)done, d, sizeof d);
  tool_fmt_bytes((double)total, tot, sizeof tot);
  tool_fmt_bytes(t > p->start ? (double)done / (t - p->start) : 0, rate,
                 sizeof rate);
  fprintf(stderr, "\r[%s] %3.0f%%  %s / %s  %s/s\033[K", bar, frac * 100, d,
          tot, rate);
  fflush(stderr);
}

int tool_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
  struct tool_progress *p = ctx;
  if (!p)
    return 0;
  atomic_store(&p->done, done);
  double t = tool_now();
  if (t - p->start < SHOW_AFTER_S || atomic_flag_test_and_set(&p->drawing))
    return 0;
  if (t - p->last >= REDRAW_S) {
    p->last = t;
    p->shown = true;
    draw(p, atomic_load(&p->done), total, t);
  }
  atomic_flag_clear(&p->drawing);
  return 0;
}

void tool_progress_done(struct tool_progress *p)
{
  if (!p)
    return;
  /* The transfer is over: no callback runs any more. */
  if (p->shown)
    fputs("\r\033[K", stderr);
  p->shown = false;
}
