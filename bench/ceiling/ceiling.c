/*
 * ceiling: the physical limit of this machine's loopback and syscalls.
 *
 * A minimal epoll responder that answers every request with one canned HTTP
 * response and never parses the request: it only counts "\r\n\r\n" head
 * terminators in the byte stream, so pipelined requests get one response each.
 * Request bodies are not framed, so a body must not itself contain
 * "\r\n\r\n" (the harness's 1 KiB echo body does not).
 *
 * Usage:
 *   ceiling -addr 127.0.0.1:8080 [-profile bench] [-threads N]
 *           [-body TEXT | -size N [-fill PATTERN]] [-type CONTENT-TYPE] [-close]
 *
 *   -addr     listen address host:port (port 0 picks a free port); the
 *             chosen address is printed as "listening on HOST:PORT".
 *   -profile  only "bench" is accepted: the ceiling has no routes.
 *   -threads  worker threads, each with its own epoll set (default: online CPUs).
 *   -body     canned response body (default "Hello, World!").
 *   -size     canned body of N bytes instead of -body, PATTERN repeated.
 *   -fill     the -size body's repeated pattern (default "x").
 *   -type     Content-Type of the canned response (default text/plain).
 *   -close    send "Connection: close" and close after one response.
 *
 * Build: cc -O2 -o ceiling ceiling.c -lpthread
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 65536
#define READ_BUF 65536
#define MAX_IOV 64
#define MAX_EVENTS 256

struct conn {
	unsigned char state; /* bytes of "\r\n\r\n" matched so far */
	unsigned char want_out; /* EPOLLOUT armed */
	size_t owed; /* responses not yet fully written */
	size_t off; /* bytes of the first owed response already written */
};

static char *resp;
static size_t resp_len;
static int close_after;
static int listen_fd;
static struct conn *conns;

static void die(const char *what) {
	perror(what);
	exit(1);
}

/* count_heads advances the terminator matcher over buf and returns how many
 * "\r\n\r\n" sequences completed. */
static size_t count_heads(struct conn *c, const char *buf, size_t n) {
	size_t heads = 0;
	unsigned char st = c->state;
	const char *p = buf, *end = buf + n;
	while (p < end) {
		if (st == 0) {
			p = memchr(p, '\r', (size_t)(end - p));
			if (p == NULL)
				break;
			st = 1;
			p++;
			continue;
		}
		char ch = *p++;
		if (ch == '\r')
			st = (st == 2) ? 3 : 1;
		else if (ch == '\n' && st == 1)
			st = 2;
		else if (ch == '\n' && st == 3) {
			heads++;
			st = 0;
		} else
			st = 0;
	}
	c->state = st;
	return heads;
}

static void drop(int ep, int fd) {
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	memset(&conns[fd], 0, sizeof conns[fd]);
	close(fd);
}

/* flush writes owed responses with writev; returns -1 if the connection was
 * closed. */
static int flush(int ep, int fd) {
	struct conn *c = &conns[fd];
	while (c->owed > 0) {
		struct iovec iov[MAX_IOV];
		size_t k = 0;
		iov[k].iov_base = resp + c->off;
		iov[k].iov_len = resp_len - c->off;
		for (k = 1; k < MAX_IOV && k < c->owed; k++) {
			iov[k].iov_base = resp;
			iov[k].iov_len = resp_len;
		}
		ssize_t w = writev(fd, iov, (int)k);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				if (!c->want_out) {
					struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.fd = fd};
					epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
					c->want_out = 1;
				}
				return 0;
			}
			drop(ep, fd);
			return -1;
		}
		size_t n = (size_t)w;
		while (n > 0) {
			size_t left = resp_len - c->off;
			size_t take = n < left ? n : left;
			c->off += take;
			n -= take;
			if (c->off == resp_len) {
				c->off = 0;
				c->owed--;
				if (close_after) {
					shutdown(fd, SHUT_WR);
					drop(ep, fd);
					return -1;
				}
			}
		}
	}
	if (c->want_out) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
		epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
		c->want_out = 0;
	}
	return 0;
}

static void on_readable(int ep, int fd, char *buf) {
	for (;;) {
		ssize_t r = read(fd, buf, READ_BUF);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			break;
		if (r <= 0) {
			drop(ep, fd);
			return;
		}
		conns[fd].owed += count_heads(&conns[fd], buf, (size_t)r);
		if (r < READ_BUF)
			break; /* drained: level-triggered epoll reports more data */
	}
	flush(ep, fd);
}

static void on_accept(int ep) {
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or another thread took it */
		if (fd >= MAX_FDS) {
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		memset(&conns[fd], 0, sizeof conns[fd]);
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
			close(fd);
	}
}

static void *worker(void *arg) {
	(void)arg;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	struct epoll_event lev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.fd = listen_fd};
	if (epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &lev) < 0)
		die("epoll_ctl listener");
	char *buf = malloc(READ_BUF);
	if (buf == NULL)
		die("malloc");
	struct epoll_event evs[MAX_EVENTS];
	for (;;) {
		int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == listen_fd) {
				on_accept(ep);
				continue;
			}
			if (evs[i].events & (EPOLLERR | EPOLLHUP)) {
				drop(ep, fd);
				continue;
			}
			if (evs[i].events & EPOLLIN)
				on_readable(ep, fd, buf);
			else if (evs[i].events & EPOLLOUT)
				flush(ep, fd);
		}
	}
	return NULL;
}

static void usage(void) {
	fprintf(stderr, "usage: ceiling -addr host:port [-profile bench] [-threads N] "
	                "[-body TEXT | -size N [-fill PATTERN]] [-type CONTENT-TYPE] [-close]\n");
	exit(2);
}

int main(int argc, char **argv) {
	const char *addr = "127.0.0.1:8080", *body = "Hello, World!";
	const char *ctype = "text/plain", *fill = "x";
	long size = -1, threads = sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] == '-' && a[1] == '-')
			a++; /* accept --flag like Go's flag package */
		if (strcmp(a, "-close") == 0) {
			close_after = 1;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (strcmp(a, "-addr") == 0)
			addr = v;
		else if (strcmp(a, "-profile") == 0) {
			if (strcmp(v, "bench") != 0) {
				fprintf(stderr, "ceiling serves no routes: only -profile bench is supported\n");
				exit(2);
			}
		} else if (strcmp(a, "-threads") == 0)
			threads = atol(v);
		else if (strcmp(a, "-body") == 0)
			body = v;
		else if (strcmp(a, "-size") == 0)
			size = atol(v);
		else if (strcmp(a, "-fill") == 0 && v[0] != 0)
			fill = v;
		else if (strcmp(a, "-type") == 0)
			ctype = v;
		else
			usage();
	}
	if (threads < 1)
		threads = 1;

	size_t blen = size >= 0 ? (size_t)size : strlen(body);
	char head[256];
	int hlen = snprintf(head, sizeof head,
	                    "HTTP/1.1 200 OK\r\nServer: ceiling\r\nContent-Type: %s\r\n"
	                    "Content-Length: %zu\r\n%s\r\n",
	                    ctype, blen, close_after ? "Connection: close\r\n" : "");
	if (hlen < 0 || (size_t)hlen >= sizeof head)
		usage();
	resp_len = (size_t)hlen + blen;
	resp = malloc(resp_len);
	if (resp == NULL)
		die("malloc");
	memcpy(resp, head, (size_t)hlen);
	if (size >= 0) {
		size_t flen = strlen(fill);
		for (size_t i = 0; i < blen; i++)
			resp[(size_t)hlen + i] = fill[i % flen];
	} else
		memcpy(resp + hlen, body, blen);

	conns = calloc(MAX_FDS, sizeof *conns);
	if (conns == NULL)
		die("calloc");
	signal(SIGPIPE, SIG_IGN);

	char host[128];
	const char *colon = strrchr(addr, ':');
	if (colon == NULL || (size_t)(colon - addr) >= sizeof host)
		usage();
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(colon + 1))};
	if (host[0] == 0)
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		usage();

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		die("socket");
	int one = 1;
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		die("bind");
	if (listen(listen_fd, 4096) < 0)
		die("listen");
	socklen_t sl = sizeof sa;
	getsockname(listen_fd, (struct sockaddr *)&sa, &sl);
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
	printf("listening on %s:%d\n", ip, ntohs(sa.sin_port));
	fflush(stdout);

	for (long t = 1; t < threads; t++) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, NULL) != 0)
			die("pthread_create");
	}
	worker(NULL);
	return 0;
}
