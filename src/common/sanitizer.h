/*
 * sanitizer.h - whether this is an AddressSanitizer build, for the few
 * places that trade a block of memory of its own (which lets ASan catch an
 * overrun or a use after free) for speed: RPCRDMA__ASAN is 1 there, else 0.
 * GCC says so with __SANITIZE_ADDRESS__, clang with __has_feature.
 */
#ifndef RPCRDMA_COMMON_SANITIZER_H
#define RPCRDMA_COMMON_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define RPCRDMA__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RPCRDMA__ASAN 1
#endif
#endif
#ifndef RPCRDMA__ASAN
#define RPCRDMA__ASAN 0
#endif

#endif
