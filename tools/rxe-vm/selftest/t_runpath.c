/* t_runpath.c - linked against libselftest.so.0 from a host build directory
 * (RUNPATH), like the project's tests against libhipobj.so.0. */
#include <stdio.h>
int selftest_answer(void);
int main(void) {
  int a = selftest_answer();
  printf("selftest_answer() = %d\n", a);
  return a == 42 ? 0 : 1;
}
