/*
 * rpcrdma-dump: print every RPC-over-RDMA message of a capture as one JSON
 * object per line.  This file owns the command line, the two inputs (a
 * libpcap/pcapng capture, whose RoCEv2 Sends roce.c reassembles, or a text
 * file of hex-encoded messages); dump_message.c maps each decoded transport
 * header and RPC header onto JSON keys.
 *
 * The tool is meant to be pointed at hostile or broken traffic, so it decodes
 * with the library's own validating decoder under limits as wide as struct
 * rpcrdma_hdr can hold, and a message that fails validation is still
 * printed: what could be decoded, plus "invalid" with the decoder's reason
 * and the byte offset where it stopped.  In such a record the chunk lists
 * show what was decoded before the failure; a list the decoder never reached
 * appears empty.  Sends the reassembler had to discard (see roce.c) print as
 * {"frame":N,"invalid":"..."} so a lost message never passes unnoticed.
 *
 * Exit status: 0 when the whole input was read, 1 when it could not be
 * opened or read to its end (or the output could not be written), 2 for a
 * bad command line.
 */
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_message.h"
#include "roce.h"

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
	        "usage: %s [-x] [--no-rpc] FILE\n"
	        "\n"
	        "Print each RPC-over-RDMA message in FILE as one JSON object per line.\n"
	        "FILE is a pcap or pcapng capture of RoCEv2 traffic (UDP port 4791),\n"
	        "or with -x a text file holding one hex-encoded message per line\n"
	        "(blank lines and lines starting with '#' are skipped).  \"-\" reads\n"
	        "standard input.\n"
	        "\n"
	        "  -x, --hex     FILE holds hex-encoded messages, not a capture\n"
	        "      --no-rpc  do not decode the RPC message after the header\n"
	        "  -h, --help    show this text\n",
	        prog);
}

static void on_send(void *ctx, const struct roce_send *send)
{
	struct dump *d = ctx;

	if (send->lost)
		dump_lost(d, send->frame, send->problem);
	else
		dump_message(d, true, send->frame, send->data, send->len,
		             send->truncated ? "Send truncated by the capture" : NULL);
}

static int link_of(int dlt, enum roce_link *link)
{
	switch (dlt) {
	case DLT_EN10MB:
		*link = ROCE_LINK_ETHERNET;
		return 0;
	case DLT_LINUX_SLL:
		*link = ROCE_LINK_SLL;
		return 0;
#ifdef DLT_LINUX_SLL2
	case DLT_LINUX_SLL2:
		*link = ROCE_LINK_SLL2;
		return 0;
#endif
	case DLT_RAW:
#ifdef DLT_IPV4
	case DLT_IPV4:
	case DLT_IPV6:
#endif
		*link = ROCE_LINK_RAW;
		return 0;
	}
	return -1;
}

static int dump_pcap(struct dump *d, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct roce_reasm *r;
	struct pcap_pkthdr *ph;
	const u_char *data;
	enum roce_link link;
	uint64_t frame = 0;
	pcap_t *p;
	int rc;

	p = pcap_open_offline(path, errbuf);
	if (!p) {
		fprintf(stderr, "rpcrdma-dump: %s: %s\n", path, errbuf);
		return 1;
	}
	if (link_of(pcap_datalink(p), &link)) {
		fprintf(stderr, "rpcrdma-dump: %s: unsupported link type %s\n", path,
		        pcap_datalink_val_to_name(pcap_datalink(p))
		            ? pcap_datalink_val_to_name(pcap_datalink(p))
		            : "(unknown)");
		pcap_close(p);
		return 1;
	}
	/* About 260 KiB of flow table: keep it off the stack. */
	r = malloc(sizeof(*r));
	if (!r) {
		fprintf(stderr, "rpcrdma-dump: out of memory\n");
		pcap_close(p);
		return 1;
	}
	roce_init(r, link, on_send, d);
	while ((rc = pcap_next_ex(p, &ph, &data)) == 1) {
		frame++;
		/* A reassembly buffer that could not grow is already reported
		 * as a lost Send; later messages may still fit. */
		(void)roce_input(r, frame, data, ph->caplen);
	}
	roce_finish(r);
	free(r);
	if (rc != PCAP_ERROR_BREAK) { /* -2: the end of the file */
		fprintf(stderr, "rpcrdma-dump: %s: after frame %llu: %s\n", path,
		        (unsigned long long)frame, pcap_geterr(p));
		pcap_close(p);
		return 1;
	}
	pcap_close(p);
	return 0;
}

static int dump_hex(struct dump *d, const char *path)
{
	FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t n;
	int status = 0;

	if (!in) {
		fprintf(stderr, "rpcrdma-dump: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((n = getline(&line, &cap, in)) >= 0)
		dump_hex_line(d, line, (size_t)n, ++lineno);
	if (ferror(in)) {
		fprintf(stderr, "rpcrdma-dump: %s: %s\n", path, strerror(errno));
		status = 1;
	}
	free(line);
	if (in != stdin)
		fclose(in);
	return status;
}

int main(int argc, char **argv)
{
	enum { OPT_NO_RPC = 256 };
	static const struct option longopts[] = {
	    {"hex", no_argument, NULL, 'x'},
	    {"no-rpc", no_argument, NULL, OPT_NO_RPC},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *prog = argc > 0 ? argv[0] : "rpcrdma-dump";
	bool hex = false;
	struct dump *d;
	int c, status;

	d = calloc(1, sizeof(*d));
	if (!d) {
		fprintf(stderr, "rpcrdma-dump: out of memory\n");
		return 1;
	}
	dump_init(d, stdout, true);
	while ((c = getopt_long(argc, argv, "xh", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			hex = true;
			break;
		case OPT_NO_RPC:
			d->rpc = false;
			break;
		case 'h':
			usage(stdout, prog);
			free(d);
			return 0;
		default:
			usage(stderr, prog);
			free(d);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr, prog);
		free(d);
		return 2;
	}

	status = hex ? dump_hex(d, argv[optind]) : dump_pcap(d, argv[optind]);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "rpcrdma-dump: writing the output: %s\n", strerror(errno));
		status = 1;
	}
	free(d);
	return status;
}
