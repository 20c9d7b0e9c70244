// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* etcd's JSON gateway over HTTP(S).  See etcd_http.h. */
#include "daemon/etcd_http.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An answer larger than this is no answer of etcd's to us. */
#define MAX_ANSWER (1u << 20)

struct sl_etcd_http {
	CURL *curl;
	struct curl_slist *headers;
	char **endpoints;
	size_t n, current;
	char url[256];
};

struct buf {
	char *p;
	size_t len;
};

static size_t collect(char *data, size_t size, size_t nmemb, void *arg)
{
	struct buf *b = arg;
	size_t n = size * nmemb;
	char *p;

	if (b->len + n > MAX_ANSWER || !(p = realloc(b->p, b->len + n + 1)))
		return 0; /* curl fails the transfer */
	memcpy(p + b->len, data, n);
	b->p = p;
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

int sl_etcd_http_open(struct sl_etcd_http **out, const char *const *endpoints, size_t n,
		      uint64_t timeout_ns, const struct sl_etcd_tls *tls)
{
	struct sl_etcd_http *h;
	long ms = (long)(timeout_ns / 1000000);

	*out = NULL;
	if (!n)
		return -EINVAL;
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return -EIO;
	h = calloc(1, sizeof(*h));
	if (!h || !(h->endpoints = calloc(n, sizeof(*h->endpoints))))
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!(h->endpoints[h->n++] = strdup(endpoints[i])))
			goto nomem;
	h->curl = curl_easy_init();
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (!h->curl || !h->headers)
		goto nomem;
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L); /* a thread of a daemon: no SIGALRM */
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
	curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, ms > 0 ? ms : 1L);
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (tls && tls->ca_file) {
		curl_easy_setopt(h->curl, CURLOPT_CAINFO, tls->ca_file);
		curl_easy_setopt(h->curl, CURLOPT_SSLCERT, tls->cert_file);
		curl_easy_setopt(h->curl, CURLOPT_SSLKEY, tls->key_file);
	}
	*out = h;
	return 0;
nomem:
	sl_etcd_http_close(h);
	return -ENOMEM;
}

static int errno_of(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT: return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT: return -ECONNREFUSED;
	case CURLE_OUT_OF_MEMORY: return -ENOMEM;
	default: return -EIO;
	}
}

int sl_etcd_http_post(struct sl_etcd_http *h, const char *path, const char *body, char **answer)
{
	struct buf b = {0};
	long status = 0;
	CURLcode rc;

	*answer = NULL;
	snprintf(h->url, sizeof(h->url), "%s%s", h->endpoints[h->current], path);
	curl_easy_setopt(h->curl, CURLOPT_URL, h->url);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(h->curl);
	if (rc != CURLE_OK) {
		free(b.p);
		h->current = (h->current + 1) % h->n; /* the next request tries another */
		return errno_of(rc);
	}
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	*answer = b.p ? b.p : strdup("");
	if (!*answer)
		return -ENOMEM;
	return status == 200 ? 0 : -EPROTO;
}

void sl_etcd_http_close(struct sl_etcd_http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	for (size_t i = 0; i < h->n; i++)
		free(h->endpoints[i]);
	free(h->endpoints);
	free(h);
}
