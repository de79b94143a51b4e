/* SPDX-License-Identifier: MIT */
/* Locks annotated for Clang's -Wthread-safety, which works in C. A field
 * guarded by a lock says so with HO_GUARDED_BY(lock); a function that needs
 * a lock held says HO_REQUIRES(lock). gcc ignores the attributes. */
#ifndef HO_COMMON_THREAD_SAFETY_H
#define HO_COMMON_THREAD_SAFETY_H

#include <pthread.h>

#if defined(__clang__)
#define HO_TS(x) __attribute__((x))
#else
#define HO_TS(x)
#endif

#define HO_CAPABILITY(x) HO_TS(capability(x))
/* clang before 16 cannot name a struct member in a field's attribute in C,
 * so field guards are documentation there; the function attributes below
 * (acquire, release, requires) are checked by every clang. */
#if defined(__clang__) && __clang_major__ >= 16
#define HO_GUARDED_BY(x) HO_TS(guarded_by(x))
#define HO_PT_GUARDED_BY(x) HO_TS(pt_guarded_by(x))
#else
#define HO_GUARDED_BY(x)
#define HO_PT_GUARDED_BY(x)
#endif
/* Globals can be guarded by every clang. */
#define HO_GUARDED_GLOBAL(x) HO_TS(guarded_by(x))
#define HO_REQUIRES(...) HO_TS(requires_capability(__VA_ARGS__))
#define HO_REQUIRES_SHARED(...) HO_TS(requires_shared_capability(__VA_ARGS__))
#define HO_ACQUIRE(...) HO_TS(acquire_capability(__VA_ARGS__))
#define HO_ACQUIRE_SHARED(...) HO_TS(acquire_shared_capability(__VA_ARGS__))
#define HO_RELEASE(...) HO_TS(release_capability(__VA_ARGS__))
#define HO_RELEASE_SHARED(...) HO_TS(release_shared_capability(__VA_ARGS__))
#define HO_EXCLUDES(...) HO_TS(locks_excluded(__VA_ARGS__))
#define HO_ACQUIRED_AFTER(...) HO_TS(acquired_after(__VA_ARGS__))
#define HO_NO_TSA HO_TS(no_thread_safety_analysis)

typedef struct HO_CAPABILITY("mutex") ho_mutex {
  pthread_mutex_t m;
} ho_mutex;

typedef struct HO_CAPABILITY("rwlock") ho_rwlock {
  pthread_rwlock_t l;
} ho_rwlock;

#define HO_MUTEX_INIT {PTHREAD_MUTEX_INITIALIZER}
#define HO_RWLOCK_INIT {PTHREAD_RWLOCK_INITIALIZER}

static inline void ho_mutex_init(ho_mutex *m) { pthread_mutex_init(&m->m, 0); }
static inline void ho_mutex_destroy(ho_mutex *m) { pthread_mutex_destroy(&m->m); }
static inline void ho_mutex_lock(ho_mutex *m) HO_ACQUIRE(m) HO_NO_TSA
{
  pthread_mutex_lock(&m->m);
}
static inline void ho_mutex_unlock(ho_mutex *m) HO_RELEASE(m) HO_NO_TSA
{
  pthread_mutex_unlock(&m->m);
}
/* Waits on c; m is held again on return. */
static inline int ho_cond_wait(pthread_cond_t *c, ho_mutex *m) HO_REQUIRES(m)
    HO_NO_TSA
{
  return pthread_cond_wait(c, &m->m);
}
static inline int ho_cond_timedwait(pthread_cond_t *c, ho_mutex *m,
                                    const struct timespec *abs) HO_REQUIRES(m)
    HO_NO_TSA
{
  return pthread_cond_timedwait(c, &m->m, abs);
}

static inline void ho_rwlock_init(ho_rwlock *l) { pthread_rwlock_init(&l->l, 0); }
static inline void ho_rwlock_destroy(ho_rwlock *l) { pthread_rwlock_destroy(&l->l); }
static inline void ho_rdlock(ho_rwlock *l) HO_ACQUIRE_SHARED(l) HO_NO_TSA
{
  pthread_rwlock_rdlock(&l->l);
}
static inline void ho_rdunlock(ho_rwlock *l) HO_RELEASE_SHARED(l) HO_NO_TSA
{
  pthread_rwlock_unlock(&l->l);
}
static inline void ho_wrlock(ho_rwlock *l) HO_ACQUIRE(l) HO_NO_TSA
{
  pthread_rwlock_wrlock(&l->l);
}
static inline void ho_wrunlock(ho_rwlock *l) HO_RELEASE(l) HO_NO_TSA
{
  pthread_rwlock_unlock(&l->l);
}

#endif
