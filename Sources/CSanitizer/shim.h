// ThreadSanitizer annotations for locks TSan cannot see (ColorcamCore's `Locked`).
//
// `__tsan_acquire` / `__tsan_release` are the TSan runtime's annotation entry points. They are declared weak: in a
// program built with -sanitize=thread the runtime is linked in and they resolve; in any other build they stay null
// and the wrappers below are one untaken branch.
#ifndef COLORCAM_CSANITIZER_SHIM_H
#define COLORCAM_CSANITIZER_SHIM_H

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

/// Tells TSan that the calling thread acquired the synchronisation object at `address` (no-op without TSan).
static inline void colorcam_tsan_acquire(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}

/// Tells TSan that the calling thread releases the synchronisation object at `address` (no-op without TSan).
static inline void colorcam_tsan_release(void *address) {
    if (__tsan_release) __tsan_release(address);
}

#endif
