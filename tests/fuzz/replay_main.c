/* SPDX-License-Identifier: MIT */
/* Runs a libFuzzer target without libFuzzer: every file in the corpus
 * directories given, then a deterministic stream of mutations of them, so
 * CI exercises the targets on every build under the sanitizers. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void ho_log_set_quiet(bool on);

#define MAX_SEEDS 256
#define REPLAY_MAX_INPUT 4096

static uint8_t *seeds[MAX_SEEDS];
static size_t seed_len[MAX_SEEDS];
static size_t nseeds;

static void load_dir(const char *path)
{
  DIR *d = opendir(path);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) && nseeds < MAX_SEEDS) {
    if (e->d_name[0] == '.')
      continue;
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, e->d_name);
    FILE *f = fopen(file, "rb");
    if (!f)
      continue;
    uint8_t *buf = malloc(REPLAY_MAX_INPUT);
    size_t n = buf ? fread(buf, 1, REPLAY_MAX_INPUT, f) : 0;
    fclose(f);
    if (!buf)
      continue;
    seeds[nseeds] = buf;
    seed_len[nseeds++] = n;
  }
  closedir(d);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

int main(int argc, char **argv)
{
  ho_log_set_quiet(true); /* hostile input makes the library warn */
  for (int i = 1; i < argc; i++)
    load_dir(argv[i]);
  for (size_t i = 0; i < nseeds; i++)
    LLVMFuzzerTestOneInput(seeds[i], seed_len[i]);
  static uint8_t buf[REPLAY_MAX_INPUT];
  unsigned iterations = 20000;
  for (unsigned it = 0; it < iterations; it++) {
    size_t n;
    if (nseeds && (next() & 3)) {
      size_t s = next() % nseeds;
      n = seed_len[s];
      memcpy(buf, seeds[s], n);
      unsigned flips = 1 + next() % 4;
      for (unsigned f = 0; f < flips && n; f++) {
        switch (next() % 4) {
        case 0: buf[next() % n] = (uint8_t)next(); break;
        case 1: n = next() % (n + 1); break;
        case 2: if (n < REPLAY_MAX_INPUT) buf[n++] = (uint8_t)next(); break;
        default: buf[next() % n] ^= (uint8_t)(1u << (next() % 8)); break;
        }
      }
    } else {
      n = next() % 200;
      for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)next();
    }
    LLVMFuzzerTestOneInput(buf, n);
  }
  printf("fuzz replay: %zu seeds, %u generated inputs, no crash\n", nseeds,
         iterations);
  for (size_t i = 0; i < nseeds; i++)
    free(seeds[i]);
  return 0;
}
