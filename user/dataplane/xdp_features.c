// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The netdev family's xdp-features over generic netlink.  See xdp_features.h. */
#include "dataplane/xdp_features.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* linux/netdev.h (6.3+): the family, its command and attributes. */
#define NETDEV_FAMILY_NAME       "netdev"
#define NETDEV_CMD_DEV_GET       1
#define NETDEV_A_DEV_IFINDEX     1
#define NETDEV_A_DEV_XDP_FEATURES 3

struct genl_req {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[64];
};

static void put_attr(struct genl_req *r, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Send r and walk the answer's attributes: found(type, data, len) for each
 * top-level attribute of the first reply.  0 or -errno. */
static int transact(struct sl_genl_netdev *g, struct genl_req *r,
		    void (*found)(void *ctx, uint16_t type, const void *data, uint16_t len),
		    void *ctx)
{
	char buf[4096];
	struct pollfd pfd = {.fd = g->fd, .events = POLLIN};
	ssize_t n;

	r->nh.nlmsg_flags = NLM_F_REQUEST;
	r->nh.nlmsg_seq = ++g->seq;
	if (send(g->fd, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		if (poll(&pfd, 1, 100) <= 0)
			return -ETIMEDOUT;
		n = recv(g->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != g->seq)
				continue; /* an answer we gave up on */
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				return e->error ? e->error : -ENOMSG;
			}
			const struct genlmsghdr *gh = NLMSG_DATA(nh);
			const char *p = (const char *)(gh + 1);
			const char *end = (const char *)nh + nh->nlmsg_len;

			while (p + NLA_HDRLEN <= end) {
				const struct nlattr *a = (const struct nlattr *)p;

				if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
					break;
				found(ctx, a->nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN,
				      (uint16_t)(a->nla_len - NLA_HDRLEN));
				p += NLA_ALIGN(a->nla_len);
			}
			return 0;
		}
	}
}

static void family_id(void *ctx, uint16_t type, const void *data, uint16_t len)
{
	if (type == CTRL_ATTR_FAMILY_ID && len >= 2)
		memcpy(ctx, data, 2);
}

int sl_genl_netdev_open(struct sl_genl_netdev *g)
{
	struct genl_req r = {0};
	int err;

	memset(g, 0, sizeof(*g));
	g->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (g->fd < 0)
		return -errno;
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = GENL_ID_CTRL;
	r.gh.cmd = CTRL_CMD_GETFAMILY;
	r.gh.version = 1;
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME, sizeof(NETDEV_FAMILY_NAME));
	err = transact(g, &r, family_id, &g->family);
	if (err == -ENOENT) {
		g->family = 0; /* a kernel before 6.3 */
		return 0;
	}
	if (err) {
		sl_genl_netdev_close(g);
		return err;
	}
	return 0;
}

void sl_genl_netdev_close(struct sl_genl_netdev *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	g->family = 0;
}

struct features_answer {
	uint64_t v;
	int seen;
};

static void features(void *ctx, uint16_t type, const void *data, uint16_t len)
{
	struct features_answer *a = ctx;

	if (type == NETDEV_A_DEV_XDP_FEATURES && len >= 8) {
		memcpy(&a->v, data, 8);
		a->seen = 1;
	}
}

int sl_xdp_features(struct sl_genl_netdev *g, int ifindex, uint64_t *out)
{
	struct genl_req r = {0};
	struct features_answer a = {0};
	uint32_t idx = (uint32_t)ifindex;
	int err;

	if (g->fd < 0 || !g->family)
		return -ENOTSUP;
	r.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.nh.nlmsg_type = g->family;
	r.gh.cmd = NETDEV_CMD_DEV_GET;
	r.gh.version = 1;
	put_attr(&r, NETDEV_A_DEV_IFINDEX, &idx, sizeof(idx));
	err = transact(g, &r, features, &a);
	if (err)
		return err;
	if (!a.seen)
		return -ENOMSG;
	*out = a.v;
	return 0;
}
