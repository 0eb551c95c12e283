/*
 * Fuzz rpcrdma-dump's per-message decoding and JSON printing
 * (tools/dump_message.c), with the bytes as one message or as lines of hex.
 *
 * Input: a control byte, then the rest.
 *   bit 0: the rest is text for -x, cut at each '\n' into lines, each in a
 *          buffer of its own exact size; clear, the rest is one message
 *   bit 1: decode the RPC header too (the tool's default; --no-rpc clears)
 *   bit 2: the message has a frame number (a capture's Send)
 *   bit 3: the message comes with a problem ("Send truncated by the capture")
 *
 * Whatever the bytes: every line printed is one JSON object, syntactically
 * valid, with no key twice in any object; one message prints exactly one
 * line, and a line of hex at most one.  ASan sees that no byte outside the
 * input is read.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 64

/* A recursive-descent check of one JSON value at *@p, before @end. */
struct cursor {
	const char *p, *end;
	unsigned int depth;
};

static bool value(struct cursor *c);

static void skip_ws(struct cursor *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

static bool is_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* A string; its contents (between the quotes) in *@s, *@n. */
static bool string(struct cursor *c, const char **s, size_t *n)
{
	if (c->p == c->end || *c->p != '"')
		return false;
	*s = ++c->p;
	while (c->p < c->end && *c->p != '"') {
		unsigned char ch = (unsigned char)*c->p++;

		if (ch < 0x20)
			return false;
		if (ch != '\\')
			continue;
		if (c->p == c->end)
			return false;
		ch = (unsigned char)*c->p++;
		if (ch == 'u') {
			if (c->end - c->p < 4)
				return false;
			for (int i = 0; i < 4; i++)
				if (!is_hex(*c->p++))
					return false;
		} else if (!strchr("\"\\/bfnrt", ch) || ch == '\0') {
			return false;
		}
	}
	if (c->p == c->end)
		return false;
	*n = (size_t)(c->p - *s);
	c->p++;
	return true;
}

static bool number(struct cursor *c)
{
	const char *start = c->p;

	if (c->p < c->end && *c->p == '-')
		c->p++;
	if (c->p == c->end || *c->p < '0' || *c->p > '9')
		return false;
	if (*c->p == '0')
		c->p++;
	else
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
			c->p++;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (c->p == c->end || *c->p < '0' || *c->p > '9')
			return false;
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
			c->p++;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (c->p == c->end || *c->p < '0' || *c->p > '9')
			return false;
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
			c->p++;
	}
	return c->p > start;
}

static bool literal(struct cursor *c, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
		return false;
	c->p += n;
	return true;
}

static bool object(struct cursor *c)
{
	struct {
		const char *s;
		size_t n;
	} keys[MAX_KEYS];
	size_t nkeys = 0;

	c->p++; /* '{' */
	skip_ws(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return true;
	}
	for (;;) {
		const char *s;
		size_t n;

		skip_ws(c);
		if (!string(c, &s, &n))
			return false;
		for (size_t i = 0; i < nkeys; i++)
			if (keys[i].n == n && memcmp(keys[i].s, s, n) == 0)
				return false; /* a key twice */
		if (nkeys == MAX_KEYS)
			return false;
		keys[nkeys].s = s;
		keys[nkeys++].n = n;
		skip_ws(c);
		if (c->p == c->end || *c->p++ != ':')
			return false;
		if (!value(c))
			return false;
		skip_ws(c);
		if (c->p == c->end)
			return false;
		if (*c->p == '}') {
			c->p++;
			return true;
		}
		if (*c->p++ != ',')
			return false;
	}
}

static bool array(struct cursor *c)
{
	c->p++; /* '[' */
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return true;
	}
	for (;;) {
		if (!value(c))
			return false;
		skip_ws(c);
		if (c->p == c->end)
			return false;
		if (*c->p == ']') {
			c->p++;
			return true;
		}
		if (*c->p++ != ',')
			return false;
	}
}

static bool value(struct cursor *c)
{
	const char *s;
	size_t n;
	bool ok;

	skip_ws(c);
	if (c->p == c->end || c->depth == 64)
		return false;
	c->depth++;
	switch (*c->p) {
	case '{':
		ok = object(c);
		break;
	case '[':
		ok = array(c);
		break;
	case '"':
		ok = string(c, &s, &n);
		break;
	case 't':
		ok = literal(c, "true");
		break;
	case 'f':
		ok = literal(c, "false");
		break;
	case 'n':
		ok = literal(c, "null");
		break;
	default:
		ok = number(c);
		break;
	}
	c->depth--;
	return ok;
}

/* Every line of @out is one JSON object; returns how many lines. */
static size_t check_lines(const char *out, size_t len)
{
	size_t lines = 0;

	if (len && out[len - 1] != '\n')
		abort(); /* the last line unterminated */
	for (const char *p = out, *end = out + len; p < end; lines++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct cursor c = {p, nl, 0};

		if (nl == p || *p != '{' || !value(&c) || c.p != nl)
			abort();
		p = nl + 1;
	}
	return lines;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dump d; /* large: struct rpcrdma_hdr */
	char *out = NULL;
	size_t outlen = 0, lines, messages = 0;
	uint8_t ctl;
	FILE *f;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;
	f = open_memstream(&out, &outlen);
	if (!f)
		return 0;
	dump_init(&d, f, ctl & 2);
	if (ctl & 1) {
		unsigned long lineno = 0;

		/* Each line in a buffer of its exact size, as getline() would
		 * hand it over but without the terminating NUL: reading past
		 * the line is caught. */
		for (size_t o = 0; o < size;) {
			const uint8_t *nl = memchr(data + o, '\n', size - o);
			size_t n = nl ? (size_t)(nl - (data + o)) + 1 : size - o;
			char *line = malloc(n ? n : 1);

			if (!line)
				break;
			memcpy(line, data + o, n);
			dump_hex_line(&d, line, n, ++lineno);
			free(line);
			o += n;
		}
		messages = lineno;
	} else {
		/* libFuzzer's buffer is the message's exact size. */
		dump_message(&d, ctl & 4, 0x1234567890ull, size ? data : NULL, size,
			     (ctl & 8) ? "Send truncated by the capture" : NULL);
		messages = 1;
	}
	if (fclose(f) != 0) {
		free(out);
		return 0;
	}
	lines = check_lines(out, outlen);
	if ((ctl & 1) ? lines > messages : lines != 1)
		abort();
	free(out);
	return 0;
}
