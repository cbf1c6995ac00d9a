/* SPDX-License-Identifier: MIT */
/* compiler.h - small compiler helpers shared by every part. */
#ifndef LPC_CORE_COMPILER_H
#define LPC_CORE_COMPILER_H

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

/* Marks a definition as part of the public ABI (see src/lpc.map). */
#define LPC_EXPORT __attribute__((visibility("default")))

#define lpc_always_inline inline __attribute__((always_inline))

#define LPC_CACHELINE 64
#define lpc_cacheline_aligned __attribute__((aligned(LPC_CACHELINE)))

#endif /* LPC_CORE_COMPILER_H */
