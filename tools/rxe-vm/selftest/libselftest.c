/* libselftest.c - a stand-in for the project's libhipobj.so.0: built by
 * selftest.sh into a separate directory that t_runpath finds only through
 * its RUNPATH on the host. run.sh must copy it to /payload/lib. */
int selftest_answer(void);
int selftest_answer(void) { return 42; }
