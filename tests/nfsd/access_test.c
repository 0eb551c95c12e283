/*
 * rpcrdma-nfsd's access list (tools/nfsd/access.c): client specs, options
 * and their defaults, exports files, and which entry a peer address
 * matches.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "access.h"

static struct nfsd_access acc;

static void reset(void)
{
	memset(&acc, 0, sizeof(acc));
	acc.anon_uid = acc.anon_gid = 65534;
}

static const struct nfsd_client *find4(const char *ip, int port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return nfsd_access_find(&acc, (struct sockaddr *)&sin);
}

static const struct nfsd_client *find6(const char *ip)
{
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};

	assert_int_equal(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1);
	return nfsd_access_find(&acc, (struct sockaddr *)&sin6);
}

static void test_hosts_and_networks(void **state)
{
	(void)state;
	reset();
	assert_int_equal(nfsd_access_add(&acc, "192.0.2.7"), 0);
	assert_int_equal(nfsd_access_add(&acc, "10.0.0.0/8(ro)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "172.16.0.0/255.240.0.0(insecure)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "2001:db8::/32(all_squash)"), 0);
	assert_ptr_equal(find4("192.0.2.7", 700), &acc.c[0]);
	assert_null(find4("192.0.2.8", 700));
	assert_ptr_equal(find4("10.255.1.2", 700), &acc.c[1]);
	assert_true(acc.c[1].flags & NFSD_RO);
	assert_ptr_equal(find4("172.31.255.255", 700), &acc.c[2]);
	assert_null(find4("172.32.0.0", 700));
	assert_ptr_equal(find6("2001:db8:1::5"), &acc.c[3]);
	assert_null(find6("2001:db9::5"));
	/* An IPv4-mapped IPv6 peer is its IPv4 address. */
	assert_ptr_equal(find6("::ffff:10.1.2.3"), &acc.c[1]);
	assert_null(nfsd_access_find(&acc, NULL));
}

static void test_first_match_and_any(void **state)
{
	(void)state;
	reset();
	assert_int_equal(nfsd_access_add(&acc, "127.0.0.1(no_root_squash,insecure)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "*(ro)"), 0);
	assert_ptr_equal(find4("127.0.0.1", 5000), &acc.c[0]);
	assert_ptr_equal(find4("127.0.0.2", 5000), &acc.c[1]);
	assert_ptr_equal(find6("2001:db8::1"), &acc.c[1]);
}

/* exports(5): a single host outranks a network, which outranks "*",
 * whatever the order they are written in; within one kind, the first. */
static void test_host_outranks_network_outranks_any(void **state)
{
	(void)state;
	reset();
	assert_int_equal(nfsd_access_add(&acc, "*(rw,no_root_squash)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "127.0.0.0/8(rw,no_root_squash,insecure)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "127.0.0.0/16(insecure)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "127.0.0.1(ro,root_squash)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "127.0.0.1/32(rw)"), 0);
	assert_ptr_equal(find4("127.0.0.1", 5000), &acc.c[3]);
	assert_true(acc.c[3].flags & NFSD_RO);
	assert_ptr_equal(find4("127.0.0.2", 5000), &acc.c[1]);
	assert_ptr_equal(find4("127.1.0.2", 5000), &acc.c[1]);
	assert_ptr_equal(find4("10.0.0.1", 5000), &acc.c[0]);
}

static void test_options_and_defaults(void **state)
{
	(void)state;
	reset();
	acc.default_flags = NFSD_ALL_SQUASH | NFSD_INSECURE;
	acc.anon_uid = 1234;
	acc.anon_gid = 5678;
	assert_int_equal(nfsd_access_add(&acc, "*"), 0);
	assert_int_equal(acc.c[0].flags, NFSD_ALL_SQUASH | NFSD_INSECURE);
	assert_int_equal(acc.c[0].anon_uid, 1234);
	assert_int_equal(nfsd_access_add(&acc, "*(no_all_squash,secure,anonuid=7,anongid=8,ro,rw,"
					       "sync,no_subtree_check)"),
			 0);
	assert_int_equal(acc.c[1].flags, 0);
	assert_int_equal(acc.c[1].anon_uid, 7);
	assert_int_equal(acc.c[1].anon_gid, 8);
	/* subtree_check does something (nfs3_proc.c's dir_open), the last
	 * word of the pair wins. */
	assert_int_equal(nfsd_access_add(&acc, "*(subtree_check)"), 0);
	assert_int_equal(acc.c[2].flags, NFSD_ALL_SQUASH | NFSD_INSECURE | NFSD_SUBTREE_CHECK);
	assert_int_equal(nfsd_access_add(&acc, "*(subtree_check,no_subtree_check)"), 0);
	assert_int_equal(acc.c[3].flags, NFSD_ALL_SQUASH | NFSD_INSECURE);
}

/* An IPv4-mapped entry is the IPv4 one: it must match the mapped peer
 * (which is matched as IPv4) and the plain IPv4 peer, before "*". */
static void test_mapped_entries(void **state)
{
	(void)state;
	reset();
	assert_int_equal(nfsd_access_add(&acc, "*(rw)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "::ffff:10.1.2.3(ro)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "::ffff:192.168.0.0/112(all_squash)"), 0);
	assert_int_equal(nfsd_access_add(&acc, "::ffff:172.16.0.0/96(insecure)"), 0);
	assert_int_equal(acc.c[1].family, AF_INET);
	assert_int_equal(acc.c[1].prefix, 32);
	assert_false(acc.c[1].network);
	assert_int_equal(acc.c[2].family, AF_INET);
	assert_int_equal(acc.c[2].prefix, 16);
	assert_int_equal(acc.c[3].prefix, 0);
	assert_ptr_equal(find6("::ffff:10.1.2.3"), &acc.c[1]);
	assert_ptr_equal(find4("10.1.2.3", 700), &acc.c[1]);
	assert_true(find4("10.1.2.3", 700)->flags & NFSD_RO);
	assert_ptr_equal(find6("::ffff:192.168.7.7"), &acc.c[2]);
	assert_ptr_equal(find4("192.168.7.7", 700), &acc.c[2]);
	/* ::ffff:172.16.0.0/96 is every IPv4 address. */
	assert_ptr_equal(find4("8.8.8.8", 700), &acc.c[3]);
	assert_ptr_equal(find6("2001:db8::1"), &acc.c[0]);
	/* More than the mapped range: not one entry. */
	assert_int_not_equal(nfsd_access_add(&acc, "::ffff:0.0.0.0/95"), 0);
	assert_int_not_equal(nfsd_access_add(&acc, "::/0"), 0);
	assert_int_not_equal(nfsd_access_add(&acc, "::/80(ro)"), 0);
	assert_int_equal(acc.n, 4);
	/* A network that leaves the mapped range out stays IPv6. */
	assert_int_equal(nfsd_access_add(&acc, "::ffff:0:0:0/96"), 0);
	assert_int_equal(acc.c[4].family, AF_INET6);
}

static void test_refused_specs(void **state)
{
	static const char *bad[] = {
	    "",
	    "(rw)",
	    "host.example",            /* names are not resolved */
	    "10.0.0.0/33",
	    "10.0.0.0/255.0.255.0",    /* not contiguous */
	    "*/8",
	    "10.0.0.1(rw",
	    "10.0.0.1(bogus)",
	    "10.0.0.1(anonuid=-1)",
	    "10.0.0.1(anonuid=4294967295)", /* (uid_t)-1 is no identity */
	    "10.0.0.1(anongid=12x)",
	    "2001:db8::/129",
	};

	(void)state;
	reset();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_not_equal(nfsd_access_add(&acc, bad[i]), 0);
	assert_int_equal(acc.n, 0);
}

static void test_bounded(void **state)
{
	(void)state;
	reset();
	for (unsigned int i = 0; i < NFSD_CLIENTS_MAX; i++)
		assert_int_equal(nfsd_access_add(&acc, "*"), 0);
	assert_int_not_equal(nfsd_access_add(&acc, "*"), 0);
	assert_int_equal(acc.n, NFSD_CLIENTS_MAX);
}

static void test_exports_file(void **state)
{
	char dir[] = "/tmp/access-test.XXXXXX", file[64], real[4096];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(dir, real));
	snprintf(file, sizeof(file), "%s/exports", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "# comment\n\n%s 10.0.0.0/8(ro) \\\n  192.0.2.1(insecure) # tail\n%s/ *(rw)\n",
		real, real);
	fclose(f);
	reset();
	assert_int_equal(nfsd_access_load(&acc, file, real), 0);
	assert_int_equal(acc.n, 3);
	assert_true(acc.c[0].flags & NFSD_RO);
	assert_true(acc.c[1].flags & NFSD_INSECURE);
	assert_true(acc.c[2].any);
	/* Another directory: refused (one directory per server). */
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "/ *(rw)\n");
	fclose(f);
	reset();
	assert_int_not_equal(nfsd_access_load(&acc, file, real), 0);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hosts_and_networks),
	    cmocka_unit_test(test_first_match_and_any),
	    cmocka_unit_test(test_host_outranks_network_outranks_any),
	    cmocka_unit_test(test_options_and_defaults),
	    cmocka_unit_test(test_mapped_entries),
	    cmocka_unit_test(test_refused_specs),
	    cmocka_unit_test(test_bounded),
	    cmocka_unit_test(test_exports_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
