// CPU affinity without glibc's CPU_SET macros (they need _GNU_SOURCE, which a Clang module cannot set for glibc's
// own headers): the raw sched_getaffinity/sched_setaffinity system calls on a 1024-CPU bit mask. Linux only.
// Also the CPU's spin-wait hint for the inference thread's polling wait.
#ifndef COLORCAM_CSCHED_SHIM_H
#define COLORCAM_CSCHED_SHIM_H
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define COLORCAM_MAX_CPUS 1024
#define COLORCAM_MASK_WORDS (COLORCAM_MAX_CPUS / (8 * sizeof(unsigned long)))
#define COLORCAM_WORD_BITS (8 * sizeof(unsigned long))

/// Writes the CPUs the calling thread may run on (ascending) to `out` (up to `max`); returns how many, or -errno.
static inline int colorcam_thread_cpus(int *out, int max) {
    unsigned long mask[COLORCAM_MASK_WORDS];
    memset(mask, 0, sizeof mask);
    if (syscall(SYS_sched_getaffinity, 0, sizeof mask, mask) < 0) return -errno;
    int n = 0;
    for (int cpu = 0; cpu < COLORCAM_MAX_CPUS && n < max; cpu++) {
        if (mask[cpu / COLORCAM_WORD_BITS] & (1UL << (cpu % COLORCAM_WORD_BITS))) out[n++] = cpu;
    }
    return n;
}

/// Restricts the calling thread to `cpus` (threads it creates later inherit this). Returns 0 or -errno.
static inline int colorcam_set_thread_cpus(const int *cpus, int count) {
    unsigned long mask[COLORCAM_MASK_WORDS];
    memset(mask, 0, sizeof mask);
    for (int i = 0; i < count; i++) {
        if (cpus[i] < 0 || cpus[i] >= COLORCAM_MAX_CPUS) return -EINVAL;
        mask[cpus[i] / COLORCAM_WORD_BITS] |= 1UL << (cpus[i] % COLORCAM_WORD_BITS);
    }
    if (syscall(SYS_sched_setaffinity, 0, sizeof mask, mask) != 0) return -errno;
    return 0;
}

/// A spin-wait hint to the CPU (x86 `pause`, Arm `yield`): lets a polling loop spare its sibling hyper-thread and
/// the memory bus. No system call, no effect on correctness.
static inline void colorcam_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#endif
