/* SPDX-License-Identifier: MIT */
#include "timefmt.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void hs_time_iso8601(int64_t t, char out[32])
{
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed",
                                "Thu", "Fri", "Sat"};
static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

void hs_time_http(int64_t t, char out[40])
{
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  /* Not strftime: %a and %b follow the locale. */
  snprintf(out, 40, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday],
           tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
           tm.tm_min, tm.tm_sec);
}

static bool num(const char *s, int n, int *out)
{
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

/* Seconds since the epoch of a UTC date (mon 0..11). */
static bool to_time(int year, int mon, int day, int h, int m, int sec,
                    int64_t *out)
{
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  tm.tm_year = year - 1900;
  tm.tm_mon = mon;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  time_t t = timegm(&tm);
  if (t == (time_t)-1)
    return false;
  *out = (int64_t)t;
  return true;
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" only. */
bool hs_time_parse_http(const char *s, int64_t *out)
{
  if (strlen(s) != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' ||
      s[11] != ' ' || s[16] != ' ' || s[19] != ':' || s[22] != ':' ||
      strcmp(s + 25, " GMT") != 0)
    return false;
  int mon = -1;
  for (int i = 0; i < 12; i++)
    if (memcmp(s + 8, months[i], 3) == 0)
      mon = i;
  int day, year, h, m, sec;
  if (mon < 0 || !num(s + 5, 2, &day) || !num(s + 12, 4, &year) ||
      !num(s + 17, 2, &h) || !num(s + 20, 2, &m) || !num(s + 23, 2, &sec) ||
      day < 1 || day > 31 || h > 23 || m > 59 || sec > 60)
    return false;
  return to_time(year, mon, day, h, m, sec, out);
}

bool hs_time_parse_iso8601(const char *s, size_t len, int64_t *out)
{
  /* YYYY-MM-DDTHH:MM:SS, optionally .fraction, then Z */
  if (len < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
      s[13] != ':' || s[16] != ':' || s[len - 1] != 'Z')
    return false;
  size_t i = 19;
  if (s[i] == '.')
    for (i++; i < len - 1 && s[i] >= '0' && s[i] <= '9'; i++)
      ;
  int year, mon, day, h, m, sec;
  if (i != len - 1 || !num(s, 4, &year) || !num(s + 5, 2, &mon) ||
      !num(s + 8, 2, &day) || !num(s + 11, 2, &h) || !num(s + 14, 2, &m) ||
      !num(s + 17, 2, &sec) || mon < 1 || mon > 12 || day < 1 || day > 31 ||
      h > 23 || m > 59 || sec > 60)
    return false;
  return to_time(year, mon - 1, day, h, m, sec, out);
}
