/*
 * rpcrdma-dump: a minimal streaming JSON writer.
 *
 * Writes one JSON value at a time to a stdio stream, inserting the commas
 * and quoting itself, so the caller only says what comes next.  Nesting is
 * bounded (JSON_MAX_DEPTH); misuse (too deep, a key outside an object) is a
 * programming error caught by assert().
 */
#ifndef RPCRDMA_TOOLS_JSON_H
#define RPCRDMA_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

struct json {
	FILE *out;
	unsigned int depth;
	bool has_items[JSON_MAX_DEPTH + 1]; /* a comma is due before the next item */
	bool in_object[JSON_MAX_DEPTH + 1];
};

void json_init(struct json *j, FILE *out);

/*
 * Each call below takes @key: the member name when the enclosing value is an
 * object, NULL when it is an array or at the top level.
 */
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);

void json_uint(struct json *j, const char *key, uint64_t v);
void json_string(struct json *j, const char *key, const char *s);
void json_null(struct json *j, const char *key);
/* "0x" and exactly 8 (or 16) lower-case hex digits. */
void json_hex32(struct json *j, const char *key, uint32_t v);
void json_hex64(struct json *j, const char *key, uint64_t v);
/* @len bytes as a string of 2 * @len lower-case hex digits. */
void json_hexbytes(struct json *j, const char *key, const uint8_t *buf, size_t len);

/* End a top-level value: write the newline that makes the output JSONL. */
void json_end_line(struct json *j);

#endif /* RPCRDMA_TOOLS_JSON_H */
