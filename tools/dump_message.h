/*
 * rpcrdma-dump: decode one RPC-over-RDMA message and print it as one JSON
 * object per line.  The capture reading and the command line stay in
 * rpcrdma-dump.c; this part takes bytes, so a fuzz target can drive it
 * (tests/fuzz/dump_fuzz.c).
 */
#ifndef RPCRDMA_TOOLS_DUMP_MESSAGE_H
#define RPCRDMA_TOOLS_DUMP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rpcrdma/header.h"
#include "rpcrdma/rpc_msg.h"

#include "json.h"

struct dump {
	struct json json;
	struct rpcrdma_hdr_limits lim;
	bool rpc;               /* decode the RPC header after the transport header */
	struct rpcrdma_hdr hdr; /* large: one per run, not one per message */
	struct rpcrdma_rpc_msg msg;
};

/*
 * Print to @out, decoding under limits as wide as struct rpcrdma_hdr allows;
 * with @rpc, also the RPC header after the transport header.
 */
void dump_init(struct dump *d, FILE *out, bool rpc);

/*
 * Decode and print one message of @len bytes at @buf (NULL when @len is 0).
 * @frame is printed when @has_frame.  @problem, when set, says why the bytes
 * are not the whole Send (the capture cut it short); it leads the "invalid"
 * text.
 */
void dump_message(struct dump *d, bool has_frame, uint64_t frame, const uint8_t *buf, size_t len,
		  const char *problem);

/* Print a Send that was lost before it could be decoded, and why. */
void dump_lost(struct dump *d, uint64_t frame, const char *problem);

/*
 * Print the message held by one line of hex (the @len bytes at @line, with
 * or without its line end), line number @lineno of the input.  A blank line
 * or a '#' comment prints nothing; a line that is not hex prints an
 * "invalid" record.  Decodes in place: @line is overwritten.
 */
void dump_hex_line(struct dump *d, char *line, size_t len, unsigned long lineno);

#endif /* RPCRDMA_TOOLS_DUMP_MESSAGE_H */
