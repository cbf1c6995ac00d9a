/* SPDX-License-Identifier: MIT */
/*
 * rbd_longid - conf's "id=NAME": lpc_rbd.h says it "connects as
 * client.NAME (default client.admin)".  rbd.c's conf_id copies NAME into a
 * 256-byte buffer and silently skips an id that does not fit, so an id of
 * 300 characters connects as client.admin: with cephx that is another
 * identity and other capabilities than the caller named (here, auth none,
 * the monitor's session list shows the name the client used).  A short id
 * is the control: its session is client.<id>.
 * Fixed: the long id's open either connects as client.<that id> or fails
 * (-EINVAL, -ENAMETOOLONG); never as client.admin.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_longid &&
 *   LPC_CEPH_DIR=/tmp/c LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_longid
 */
#include "rbd.h"

/* Whether the monitor has a session of entity `who` (ceph daemon mon.a sessions). */
static int mon_has(const char *who)
{
	char cmd[4400], line[8192];
	const char *dir = getenv("LPC_CEPH_DIR");
	int found = 0;

	if (!dir) {
		fprintf(stderr, "skipped: set LPC_CEPH_DIR too\n");
		exit(77);
	}
	snprintf(cmd, sizeof(cmd), "ceph --admin-daemon %s/run/mon.a.asok sessions 2>/dev/null", dir);
	FILE *p = popen(cmd, "r");
	CHECK(p);
	while (fgets(line, sizeof(line), p))
		if (strstr(line, "\"entity_name\"") && strstr(line, who))
			found = 1;
	pclose(p);
	return found;
}

int main(void)
{
	char img[128], name[256], opts[8192], longid[301], who[400];
	struct lpc_cache *c;
	struct lpc_file *f;
	int r, bad = 0;

	att_rbd_init();
	att_image("longid", 1 << 20, img, name);
	c = att_cache();

	snprintf(opts, sizeof(opts), "conf=%s;id=attshortid", att_conf);
	r = lpc_rbd_open(c, name, opts, O_RDONLY, &f);
	int short_seen = r == 0 && mon_has("client.attshortid");
	printf("id=attshortid: open=%d, monitor session client.attshortid: %s\n", r,
	       short_seen ? "yes" : "no");
	if (r == 0)
		lpc_file_close(f);
	CHECK(short_seen); /* the control */

	memset(longid, 'q', 300);
	longid[300] = '\0';
	snprintf(opts, sizeof(opts), "conf=%s;id=%s", att_conf, longid);
	snprintf(who, sizeof(who), "client.%s", longid);
	int admin_before = mon_has("client.admin"); /* this program's oracle is client.admin */
	r = lpc_rbd_open(c, name, opts, O_RDWR, &f);
	int long_seen = r == 0 && mon_has(who);
	printf("id=<300 x q>: open=%d, monitor session client.qqq...: %s (client.admin already there: %s)\n",
	       r, long_seen ? "yes" : "no", admin_before ? "yes" : "no");
	if (r == 0 && !long_seen) {
		printf("DEFECT: the open with a 300-character id succeeded under another identity (client.admin)\n");
		bad = 1;
	}
	if (r == 0)
		lpc_file_close(f);
	lpc_cache_destroy(c);
	rbd_remove(att_io, img);
	return bad;
}
