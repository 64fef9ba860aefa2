// memcpy_count: an LD_PRELOAD shim that counts the bytes a process copies in user
// space through memcpy/memmove (and their _chk forms), for the per-message tables of
// docs/profiling/2026-12-02-large-path.md.
//
// Why a shim: callgrind counts instructions, not bytes, and neither library exports
// its copies. Both libraries (and the bench) reach glibc's memcpy through the PLT for
// any copy whose size is not a small constant, so interposing it sees every copy
// worth counting; an inlined fixed-size copy of a few bytes is not seen (and does not
// matter at 64-256 KiB). Copies glibc makes inside itself are not seen either.
//
// Counts are per process, split at 4 KiB ("large": the bodies and batches, not the
// headers); written at exit as one line to $MEMCPY_COUNT_OUT (appended) or stderr:
//   memcpy_count pid=P comm=NAME calls=C bytes=B large_calls=LC large_bytes=LB
//
// Build: cc -O2 -shared -fPIC -o memcpy_count.so memcpy_count.c -ldl
// It perturbs timing (an atomic add per call): use it for counts, never for rates.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*copy_fn)(void *, const void *, size_t);

static _Atomic unsigned long long calls, bytes, large_calls, large_bytes;
static copy_fn real_memcpy, real_memmove;
enum { large = 4096 };

static void note(size_t n) {
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, n, memory_order_relaxed);
    if (n >= large) {
        atomic_fetch_add_explicit(&large_calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&large_bytes, n, memory_order_relaxed);
    }
}

// Before dlsym has answered (it may copy while resolving), a plain byte loop.
static void *slow_move(void *d, const void *s, size_t n) {
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp < sp)
        for (size_t i = 0; i < n; ++i)
            dp[i] = sp[i];
    else
        for (size_t i = n; i-- > 0;)
            dp[i] = sp[i];
    return d;
}

static copy_fn resolve(copy_fn *slot, const char *name) {
    copy_fn f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (copy_fn)dlsym(RTLD_NEXT, name);
        if (f)
            __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

void *memcpy(void *d, const void *s, size_t n) {
    note(n);
    copy_fn f = resolve(&real_memcpy, "memcpy");
    return f ? f(d, s, n) : slow_move(d, s, n);
}

void *memmove(void *d, const void *s, size_t n) {
    note(n);
    copy_fn f = resolve(&real_memmove, "memmove");
    return f ? f(d, s, n) : slow_move(d, s, n);
}

void *__memcpy_chk(void *d, const void *s, size_t n, size_t dn) {
    (void)dn;
    return memcpy(d, s, n);
}

void *__memmove_chk(void *d, const void *s, size_t n, size_t dn) {
    (void)dn;
    return memmove(d, s, n);
}

__attribute__((destructor)) static void report(void) {
    char comm[64] = "?";
    FILE *c = fopen("/proc/self/comm", "r");
    if (c) {
        if (fgets(comm, sizeof comm, c))
            comm[strcspn(comm, "\n")] = 0;
        fclose(c);
    }
    const char *path = getenv("MEMCPY_COUNT_OUT");
    FILE *out = path ? fopen(path, "a") : NULL;
    fprintf(out ? out : stderr,
            "memcpy_count pid=%d comm=%s calls=%llu bytes=%llu large_calls=%llu large_bytes=%llu\n",
            (int)getpid(), comm, (unsigned long long)calls, (unsigned long long)bytes,
            (unsigned long long)large_calls, (unsigned long long)large_bytes);
    if (out)
        fclose(out);
}
