/*
 * Checks for the NFS interoperation programs: a failed check prints where
 * and what, and ends the program with status 1 (a client against a real
 * server cannot go on sensibly after one).  A positive value in CHECK_RC
 * is an NFS status.
 */
#ifndef TESTS_NFS_CHECK_H
#define TESTS_NFS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "rpcrdma/common.h"

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_RC(expr, want)                                                                       \
	do {                                                                                       \
		long rc_ = (long)(expr);                                                           \
		if (rc_ != (long)(want)) {                                                         \
			fprintf(stderr, "%s:%d: %s = %ld (%s), want %ld\n", __FILE__, __LINE__,    \
				#expr, rc_, rc_ < 0 ? rpcrdma_strerror((int)rc_) : "NFS status",   \
				(long)(want));                                                     \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#endif /* TESTS_NFS_CHECK_H */
