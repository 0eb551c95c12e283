/*
 * rpcrdma-dump's JSON writer.  It owns the syntax of the output: commas
 * between items, quoting and escaping of strings, and the hex spellings of
 * handles, offsets and XIDs.  Strings are escaped so the output is valid
 * UTF-8 JSON whatever bytes they hold: control characters and every byte
 * above 0x7f become \u00XX, since text from a capture is not known to be
 * UTF-8 and an invalid sequence would make a strict reader reject the line.
 */
#include <assert.h>

#include "json.h"

void json_init(struct json *j, FILE *out)
{
	j->out = out;
	j->depth = 0;
	j->has_items[0] = false;
	j->in_object[0] = false;
}

static void put_escaped(FILE *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20 || *p > 0x7e) {
				fputs("\\u00", out);
				putc(hex[*p >> 4], out);
				putc(hex[*p & 0xf], out);
			} else {
				putc(*p, out);
			}
		}
	}
	putc('"', out);
}

/* Everything that precedes a value: the comma and, in an object, the key. */
static void item(struct json *j, const char *key)
{
	assert(j->in_object[j->depth] == (key != NULL));
	if (j->has_items[j->depth])
		putc(',', j->out);
	j->has_items[j->depth] = true;
	if (key) {
		put_escaped(j->out, key);
		putc(':', j->out);
	}
}

static void begin_value(struct json *j, const char *key, bool object)
{
	item(j, key);
	assert(j->depth < JSON_MAX_DEPTH);
	j->depth++;
	j->has_items[j->depth] = false;
	j->in_object[j->depth] = object;
	putc(object ? '{' : '[', j->out);
}

static void end_value(struct json *j, bool object)
{
	assert(j->depth > 0 && j->in_object[j->depth] == object);
	j->depth--;
	putc(object ? '}' : ']', j->out);
}

void json_object_begin(struct json *j, const char *key)
{
	begin_value(j, key, true);
}

void json_object_end(struct json *j)
{
	end_value(j, true);
}

void json_array_begin(struct json *j, const char *key)
{
	begin_value(j, key, false);
}

void json_array_end(struct json *j)
{
	end_value(j, false);
}

void json_uint(struct json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->out, "%llu", (unsigned long long)v);
}

void json_string(struct json *j, const char *key, const char *s)
{
	item(j, key);
	put_escaped(j->out, s);
}

void json_null(struct json *j, const char *key)
{
	item(j, key);
	fputs("null", j->out);
}

void json_hex32(struct json *j, const char *key, uint32_t v)
{
	item(j, key);
	fprintf(j->out, "\"0x%08lx\"", (unsigned long)v);
}

void json_hex64(struct json *j, const char *key, uint64_t v)
{
	item(j, key);
	fprintf(j->out, "\"0x%016llx\"", (unsigned long long)v);
}

void json_hexbytes(struct json *j, const char *key, const uint8_t *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	item(j, key);
	putc('"', j->out);
	for (size_t i = 0; i < len; i++) {
		putc(hex[buf[i] >> 4], j->out);
		putc(hex[buf[i] & 0xf], j->out);
	}
	putc('"', j->out);
}

void json_end_line(struct json *j)
{
	assert(j->depth == 0);
	putc('\n', j->out);
	j->has_items[0] = false;
}
