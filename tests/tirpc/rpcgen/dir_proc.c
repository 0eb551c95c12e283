/* The procedures of dir.x, as a user writes them beside rpcgen -m's dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dir.h"

#define DIR_MAX_PEOPLE 8

static dir_person people[DIR_MAX_PEOPLE];
static int npeople;

int *dir_add_1_svc(dir_person *p, struct svc_req *rq)
{
	static int result;
	dir_person *to = &people[npeople];
	(void)rq;

	result = -1;
	if (npeople == DIR_MAX_PEOPLE)
		return &result;
	to->name = strdup(p->name);
	to->age = p->age;
	to->scores.scores_len = p->scores.scores_len;
	to->scores.scores_val = calloc(p->scores.scores_len + 1, sizeof(int));
	if (!to->name || !to->scores.scores_val)
		return &result;
	memcpy(to->scores.scores_val, p->scores.scores_val, p->scores.scores_len * sizeof(int));
	result = ++npeople;
	return &result;
}

dir_find_res *dir_find_1_svc(dir_name *n, struct svc_req *rq)
{
	static dir_find_res r;
	(void)rq;

	for (int i = 0; i < npeople; i++)
		if (strcmp(people[i].name, *n) == 0) {
			r.status = 0;
			r.dir_find_res_u.who = people[i];
			return &r;
		}
	r.status = 2;
	return &r;
}

/* Sleeps @ms milliseconds before answering: the client's time-out. */
int *dir_slow_1_svc(int *ms, struct svc_req *rq)
{
	static int result;
	(void)rq;

	usleep((useconds_t)*ms * 1000);
	result = *ms;
	return &result;
}

int dir_prog_1_freeresult(SVCXPRT *xp, xdrproc_t proc, caddr_t res)
{
	(void)xp;
	(void)proc;
	(void)res;
	return 1;
}

int *dir_count_2_svc(void *v, struct svc_req *rq)
{
	static int count;
	(void)v;
	(void)rq;

	count = npeople;
	return &count;
}

dir_cred *dir_whoami_2_svc(void *v, struct svc_req *rq)
{
	static dir_cred c;
	const struct authunix_parms *aup = (const void *)rq->rq_clntcred;
	(void)v;

	c.flavor = (int)rq->rq_cred.oa_flavor;
	c.uid = c.gid = 0xffffffffu;
	if (rq->rq_cred.oa_flavor == AUTH_SYS && aup) {
		c.uid = aup->aup_uid;
		c.gid = aup->aup_gid;
	}
	return &c;
}

int dir_prog_2_freeresult(SVCXPRT *xp, xdrproc_t proc, caddr_t res)
{
	(void)xp;
	(void)proc;
	(void)res;
	return 1;
}

dir_name *echo_1_svc(dir_name *n, struct svc_req *rq)
{
	static char buf[DIR_NAME_MAX + 1];
	static dir_name out;
	(void)rq;

	snprintf(buf, sizeof(buf), "echo:%s", *n);
	out = buf;
	return &out;
}

int echo_prog_1_freeresult(SVCXPRT *xp, xdrproc_t proc, caddr_t res)
{
	(void)xp;
	(void)proc;
	(void)res;
	return 1;
}
