// fanout-client: many light WebSocket clients of live-board in one process, for the fan-out load run.
//
// The clients do the least a client can: they open `/live`, subscribe, and then only frame, count and
// timestamp what arrives. They do not decode JSON: a write's title is `ts:<CLOCK_MONOTONIC ns>`, and the
// delay of a message is now minus every `ts:` number found in it. So the figure measured is the server's.
//
//   fanout-client --ports 8091,8092,8093 --clients N [--host 127.0.0.1] [--user NAME] [--source 127.0.0.2]
//
// --source binds every client to that local address first: a loopback address of its own per process
// gives each process its own ports (about 28,000 per address and server port).
//
// Standard input drives it, one line each: `go` (start counting), `stop LAST` (LAST is the timestamp of the
// last write: finish once every client has it, or after 20 s). It prints `ready` once every client holds
// its first message, then one JSON object at the end.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum phase { CONNECTING, HANDSHAKE, OPEN, CLOSED };

struct client {
  int fd;
  enum phase phase;
  unsigned char *buffer;  // bytes read and not yet framed
  size_t used, capacity;
  int messages_before_go;
  int64_t newest;  // the newest write timestamp it received
};

static struct {
  int64_t *values;
  size_t count, capacity;
} delays;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void fail(const char *what) {
  perror(what);
  exit(1);
}

static void record(int64_t delay) {
  if (delays.count == delays.capacity) {
    delays.capacity = delays.capacity ? delays.capacity * 2 : 1 << 16;
    delays.values = realloc(delays.values, delays.capacity * sizeof(int64_t));
    if (!delays.values) fail("realloc");
  }
  delays.values[delays.count++] = delay;
}

static int compare(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

// Writes all of `bytes` to a socket that is connected; the messages a client sends are tiny.
static void send_all(int fd, const void *bytes, size_t count) {
  const char *p = bytes;
  while (count > 0) {
    ssize_t n = write(fd, p, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the read side sees the close
    p += n;
    count -= (size_t)n;
  }
}

// A client frame: masked (RFC 6455 5.3), with a zero mask, which is valid and keeps the bytes readable.
static void send_frame(int fd, int opcode, const char *payload, size_t length) {
  unsigned char header[8] = {(unsigned char)(0x80 | opcode)};
  size_t size = 2;
  if (length < 126) {
    header[1] = (unsigned char)(0x80 | length);
  } else {
    header[1] = 0x80 | 126;
    header[2] = (unsigned char)(length >> 8);
    header[3] = (unsigned char)length;
    size = 4;
  }
  memset(header + size, 0, 4);
  send_all(fd, header, size + 4);
  send_all(fd, payload, length);
}

int main(int argc, char **argv) {
  const char *host = "127.0.0.1", *user = NULL, *source = NULL;
  int ports[16], port_count = 0, total = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--host")) host = argv[i + 1];
    else if (!strcmp(argv[i], "--clients")) total = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--user")) user = argv[i + 1];
    else if (!strcmp(argv[i], "--source")) source = argv[i + 1];
    else if (!strcmp(argv[i], "--ports")) {
      for (char *p = strtok(argv[i + 1], ","); p && port_count < 16; p = strtok(NULL, ","))
        ports[port_count++] = atoi(p);
    }
  }
  if (total <= 0 || port_count == 0) {
    fprintf(stderr, "usage: fanout-client --ports P[,P...] --clients N [--host H] [--user NAME] [--source A]\n");
    return 2;
  }
  char request[512];
  snprintf(request, sizeof request,
           "GET /live%s%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
           user ? "?user=" : "", user ? user : "", host);
  const char *subscribe = "{\"format\":\"simplesource\",\"formatVersion\":2,\"type\":\"subscribe\"}";

  int epoll = epoll_create1(0);
  if (epoll < 0) fail("epoll_create1");
  struct epoll_event input = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
  epoll_ctl(epoll, EPOLL_CTL_ADD, 0, &input);
  struct client *clients = calloc((size_t)total, sizeof *clients);
  int started = 0, pending = 0, opened = 0, ready = 0, closed = 0, counting = 0, announced = 0, resets = 0;
  int64_t last = -1, stop_deadline = 0, messages = 0, bytes = 0;
  struct epoll_event events[256];

  for (;;) {
    // At most 128 handshakes in flight, so that the servers' accept backlogs never overflow.
    while (started < total && pending < 128) {
      struct client *c = &clients[started];
      struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)ports[started % port_count])};
      inet_pton(AF_INET, host, &address.sin_addr);
      c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (c->fd < 0) fail("socket");
      int one = 1;
      setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (source) {
        struct sockaddr_in local = {.sin_family = AF_INET};
        inet_pton(AF_INET, source, &local.sin_addr);
        if (bind(c->fd, (struct sockaddr *)&local, sizeof local) < 0) fail("bind");
      }
      if (connect(c->fd, (struct sockaddr *)&address, sizeof address) < 0 && errno != EINPROGRESS) fail("connect");
      c->phase = CONNECTING;
      struct epoll_event event = {.events = EPOLLIN | EPOLLOUT, .data.u64 = (uint64_t)started};
      epoll_ctl(epoll, EPOLL_CTL_ADD, c->fd, &event);
      started++;
      pending++;
    }
    if (!announced && ready + closed == total) {
      printf("ready %d\n", ready);
      fflush(stdout);
      announced = 1;
    }
    if (last >= 0) {
      int have = 0;
      for (int i = 0; i < total; i++) have += clients[i].newest >= last || clients[i].phase == CLOSED;
      if (have == total || now_ns() > stop_deadline) break;
    }
    int count = epoll_wait(epoll, events, 256, 100);
    for (int e = 0; e < count; e++) {
      if (events[e].data.u64 == UINT64_MAX) {  // a command
        char line[128];
        if (!fgets(line, sizeof line, stdin)) { last = 0; stop_deadline = now_ns(); continue; }
        if (!strncmp(line, "go", 2)) counting = 1;
        if (!strncmp(line, "stop ", 5)) {
          last = strtoll(line + 5, NULL, 10);
          stop_deadline = now_ns() + 20 * (int64_t)1000000000;
        }
        continue;
      }
      struct client *c = &clients[events[e].data.u64];
      if (c->phase == CONNECTING) {
        int error = 0;
        socklen_t size = sizeof error;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &size);
        if (error) { c->phase = CLOSED; closed++; pending--; close(c->fd); continue; }
        send_all(c->fd, request, strlen(request));
        c->phase = HANDSHAKE;
        struct epoll_event event = {.events = EPOLLIN, .data.u64 = events[e].data.u64};
        epoll_ctl(epoll, EPOLL_CTL_MOD, c->fd, &event);
        continue;
      }
      if (c->capacity - c->used < 65536) {
        c->capacity = c->capacity ? c->capacity * 2 : 131072;
        c->buffer = realloc(c->buffer, c->capacity);
        if (!c->buffer) fail("realloc");
      }
      ssize_t n = read(c->fd, c->buffer + c->used, c->capacity - c->used);
      if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (c->phase == HANDSHAKE) pending--;
        c->phase = CLOSED;
        closed++;
        close(c->fd);
        continue;
      }
      c->used += (size_t)n;
      size_t at = 0;
      if (c->phase == HANDSHAKE) {
        unsigned char *end = memmem(c->buffer, c->used, "\r\n\r\n", 4);
        if (!end) continue;
        if (memcmp(c->buffer, "HTTP/1.1 101", 12)) {
          fprintf(stderr, "fanout-client: upgrade refused: %.40s\n", c->buffer);
          exit(1);
        }
        at = (size_t)(end + 4 - c->buffer);
        c->phase = OPEN;
        opened++;
        pending--;
        send_frame(c->fd, 1, subscribe, strlen(subscribe));
      }
      int64_t arrived = now_ns();
      while (c->used - at >= 2) {  // server frames are not masked
        unsigned char *frame = c->buffer + at;
        uint64_t length = frame[1] & 0x7f;
        size_t header = 2;
        if (length == 126) {
          if (c->used - at < 4) break;
          length = (uint64_t)frame[2] << 8 | frame[3];
          header = 4;
        } else if (length == 127) {
          if (c->used - at < 10) break;
          length = 0;
          for (int i = 0; i < 8; i++) length = length << 8 | frame[2 + i];
          header = 10;
        }
        if (c->used - at < header + length) break;
        int opcode = frame[0] & 0x0f;
        unsigned char *payload = frame + header;
        if (opcode == 9) send_frame(c->fd, 10, (const char *)payload, (size_t)length);
        if (opcode == 1 || opcode == 2 || opcode == 0) {
          if (!counting) {
            if (c->messages_before_go++ == 0) ready++;
          } else {
            messages++;
            bytes += header + length;
            if (memmem(payload, (size_t)length, "\"reset\"", 7)) resets++;
            for (unsigned char *p = payload; (p = memmem(p, (size_t)(payload + length - p), "ts:", 3));) {
              p += 3;
              int64_t sent = strtoll((const char *)p, NULL, 10);
              record(arrived - sent);
              if (sent > c->newest) c->newest = sent;
            }
          }
        }
        at += header + (size_t)length;
      }
      memmove(c->buffer, c->buffer + at, c->used - at);
      c->used -= at;
    }
  }
  int missing = 0;
  for (int i = 0; i < total; i++) missing += clients[i].newest < last;
  qsort(delays.values, delays.count, sizeof(int64_t), compare);
  double p50 = delays.count ? delays.values[delays.count / 2] / 1e6 : -1;
  double p99 = delays.count ? delays.values[delays.count * 99 / 100] / 1e6 : -1;
  printf("{\"connected\":%d,\"closed\":%d,\"messages\":%lld,\"bytes\":%lld,\"delays\":%zu,\"resets\":%d,"
         "\"missing_last_write\":%d,\"p50_ms\":%.2f,\"p99_ms\":%.2f}\n",
         opened, closed, (long long)messages, (long long)bytes, delays.count, resets, missing, p50, p99);
  return 0;
}
