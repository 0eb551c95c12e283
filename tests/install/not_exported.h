/* For install/symbols-detects: declarations the library does not export. */
#include "rpcrdma/common.h"
RPCRDMA_EXTERN int rpcrdma_no_such_function(void);
int rpcrdma_declared_without_macro(int x);
static inline int rpcrdma_inline_is_fine(void)
{
	return 0;
}
