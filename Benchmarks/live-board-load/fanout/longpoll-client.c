// longpoll-client: many light readers of one view of live-board over HTTP, for the fan-out run's --http mode.
//
// Each reader keeps one HTTP/1.1 connection to nginx and long-polls `/read` with a read token, from the
// offset and with the cursor its last answer gave (Stream-Next-Offset, Stream-Cursor). It does the least a
// reader can: it reads a response's head for those two headers and its length, and scans the body for
// `"type":"batch"` (a message) and `ts:<CLOCK_MONOTONIC ns>` (a write's title: the delay is now minus it).
// It never decodes JSON, so the figures measured are the server's and the proxy's.
//
//   longpoll-client --port 8090 --clients N --token TOKEN --offset OFFSET [--host 127.0.0.1]
//
// Standard input drives it, one line each: `go` (start counting), `stop LAST` (LAST is the timestamp of the
// last write: finish once every reader has it, or after 20 s). It prints `ready` once every reader's first
// request was sent, then one JSON object at the end.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct reader {
  int fd;
  int connected;
  char *buffer;  // the response being read
  size_t used, capacity;
  char offset[512];
  long cursor;
  int64_t newest;  // the newest write timestamp it received
};

static struct {
  int64_t *values;
  size_t count, capacity;
} delays;

static const char *host = "127.0.0.1";
static char token[512];
static int counting = 0;
static long messages = 0, body_bytes = 0, requests = 0, ok = 0, no_change = 0, other = 0, failures = 0;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void record(int64_t delay) {
  if (delays.count == delays.capacity) {
    delays.capacity = delays.capacity ? delays.capacity * 2 : 1 << 16;
    delays.values = realloc(delays.values, delays.capacity * sizeof(int64_t));
  }
  delays.values[delays.count++] = delay;
}

// Appends `text` to `out`, percent-encoding every byte outside the URL's unreserved set.
static size_t encode(char *out, const char *text) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
      out[n++] = (char)*p;
    } else {
      n += (size_t)sprintf(out + n, "%%%02X", *p);
    }
  }
  return n;
}

static void send_request(struct reader *r) {
  char request[4096];
  size_t n = (size_t)sprintf(request, "GET /read?token=");
  n += encode(request + n, token);
  n += (size_t)sprintf(request + n, "&offset=");
  n += encode(request + n, r->offset);
  n += (size_t)sprintf(request + n, "&live=long-poll");
  if (r->cursor >= 0) n += (size_t)sprintf(request + n, "&cursor=%ld", r->cursor);
  n += (size_t)sprintf(request + n, " HTTP/1.1\r\nHost: %s\r\n\r\n", host);
  if (write(r->fd, request, n) != (ssize_t)n) failures++;
  requests++;
}

// The value of header `name` in `head` (NUL-terminated), copied to `out`; 0 when absent.
static int header(const char *head, const char *name, char *out, size_t size) {
  size_t length = strlen(name);
  for (const char *line = strstr(head, "\r\n"); line && line[2]; line = strstr(line + 2, "\r\n")) {
    if (strncasecmp(line + 2, name, length) == 0 && line[2 + length] == ':') {
      const char *value = line + 3 + length;
      while (*value == ' ') value++;
      size_t n = strcspn(value, "\r");
      if (n >= size) n = size - 1;
      memcpy(out, value, n);
      out[n] = 0;
      return 1;
    }
  }
  return 0;
}

// Takes every whole response in the reader's buffer; returns 0 when the connection must close.
static int take_responses(struct reader *r) {
  for (;;) {
    char *end = memmem(r->buffer, r->used, "\r\n\r\n", 4);
    if (!end) return 1;
    size_t head_length = (size_t)(end - r->buffer) + 4;
    char head[8192];
    size_t copied = head_length < sizeof head ? head_length : sizeof head - 1;
    memcpy(head, r->buffer, copied);
    head[copied] = 0;
    int status = atoi(head + 9);
    char value[512];
    size_t length = header(head, "Content-Length", value, sizeof value) ? strtoul(value, NULL, 10) : 0;
    if (header(head, "Transfer-Encoding", value, sizeof value)) return 0;  // never sent by the service
    if (r->used < head_length + length) return 1;
    char *body = r->buffer + head_length;
    header(head, "Stream-Next-Offset", r->offset, sizeof r->offset);
    if (header(head, "Stream-Cursor", value, sizeof value)) r->cursor = strtol(value, NULL, 10);
    if (status == 200) {
      ok++;
      int64_t arrived = now_ns();
      for (char *p = body; (p = memmem(p, (size_t)(body + length - p), "\"type\":\"batch\"", 14)); p += 14) {
        if (counting) messages++;
      }
      for (char *p = body; (p = memmem(p, (size_t)(body + length - p), "ts:", 3)); p += 3) {
        int64_t stamp = strtoll(p + 3, NULL, 10);
        if (stamp > r->newest) r->newest = stamp;
        if (counting) record(arrived - stamp);
      }
      if (counting) body_bytes += (long)length;
    } else if (status == 204) {
      no_change++;
    } else {
      other++;
    }
    memmove(r->buffer, r->buffer + head_length + length, r->used - head_length - length);
    r->used -= head_length + length;
    send_request(r);
  }
}

static int compare(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int port = 8090, count = 100;
  const char *offset = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--port")) port = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--clients")) count = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--token")) snprintf(token, sizeof token, "%s", argv[i + 1]);
    else if (!strcmp(argv[i], "--offset")) offset = argv[i + 1];
    else if (!strcmp(argv[i], "--host")) host = argv[i + 1];
  }
  if (!offset || !token[0]) {
    fprintf(stderr, "usage: longpoll-client --port P --clients N --token T --offset O\n");
    return 2;
  }
  struct reader *readers = calloc((size_t)count, sizeof *readers);
  int epoll = epoll_create1(0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, host, &address.sin_addr);
  for (int i = 0; i < count; i++) {
    struct reader *r = &readers[i];
    r->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&address, sizeof address) != 0) {
      perror("connect");
      return 1;
    }
    int one = 1;
    setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(r->fd, F_SETFL, O_NONBLOCK);
    r->capacity = 1 << 12;
    r->buffer = malloc(r->capacity);
    r->cursor = -1;
    r->connected = 1;
    snprintf(r->offset, sizeof r->offset, "%s", offset);
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = r};
    epoll_ctl(epoll, EPOLL_CTL_ADD, r->fd, &event);
    send_request(r);
  }
  printf("ready\n");
  fflush(stdout);
  fcntl(0, F_SETFL, O_NONBLOCK);
  struct epoll_event input = {.events = EPOLLIN, .data.ptr = NULL};
  epoll_ctl(epoll, EPOLL_CTL_ADD, 0, &input);
  char line[256];
  size_t line_used = 0;
  int64_t last = -1, deadline = 0;
  struct epoll_event events[256];
  for (;;) {
    if (last >= 0) {
      int all = 1;
      for (int i = 0; i < count && all; i++) all = !readers[i].connected || readers[i].newest >= last;
      if (all || now_ns() > deadline) break;
    }
    int ready = epoll_wait(epoll, events, 256, 100);
    for (int e = 0; e < ready; e++) {
      struct reader *r = events[e].data.ptr;
      if (!r) {
        ssize_t n = read(0, line + line_used, sizeof line - 1 - line_used);
        if (n <= 0) continue;
        line_used += (size_t)n;
        line[line_used] = 0;
        char *newline;
        while ((newline = strchr(line, '\n'))) {
          *newline = 0;
          if (!strcmp(line, "go")) counting = 1;
          else if (!strncmp(line, "stop ", 5)) {
            last = strtoll(line + 5, NULL, 10);
            deadline = now_ns() + 20000000000LL;
          }
          memmove(line, newline + 1, strlen(newline + 1) + 1);
          line_used = strlen(line);
        }
        continue;
      }
      for (;;) {
        if (r->used == r->capacity) {
          r->capacity *= 2;
          r->buffer = realloc(r->buffer, r->capacity);
        }
        ssize_t n = read(r->fd, r->buffer + r->used, r->capacity - r->used);
        if (n > 0) {
          r->used += (size_t)n;
          continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
          failures++;
          r->connected = 0;
          epoll_ctl(epoll, EPOLL_CTL_DEL, r->fd, NULL);
          close(r->fd);
        }
        break;
      }
      if (r->connected && !take_responses(r)) {
        failures++;
        r->connected = 0;
        epoll_ctl(epoll, EPOLL_CTL_DEL, r->fd, NULL);
        close(r->fd);
      }
    }
  }
  int connected = 0, missing = 0;
  for (int i = 0; i < count; i++) {
    connected += readers[i].connected;
    missing += readers[i].newest < last;
  }
  qsort(delays.values, delays.count, sizeof(int64_t), compare);
  double p50 = delays.count ? delays.values[delays.count / 2] / 1e6 : 0;
  double p99 = delays.count ? delays.values[delays.count * 99 / 100] / 1e6 : 0;
  printf("{\"connected\": %d, \"messages\": %ld, \"bytes\": %ld, \"requests\": %ld, \"answers_200\": %ld, "
         "\"answers_204\": %ld, \"answers_other\": %ld, \"failures\": %ld, \"missing_last_write\": %d, "
         "\"p50_ms\": %.2f, \"p99_ms\": %.2f}\n",
         connected, messages, body_bytes, requests, ok, no_change, other, failures, missing, p50, p99);
  return 0;
}
