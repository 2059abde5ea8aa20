// The kernel's floor for the fan-out run: a server that does nothing but write() one message to each of N
// loopback TCP clients per round, at a fixed rate, and the CPU it uses per message. The same shape as one
// live-board instance in fanout-load.sh (its clients, its writes per second, the mean message size), so
// the instance's CPU per message can be read against what the kernel alone costs on this machine.
//
//   write-floor --clients N --rounds R --rate PER_SECOND --bytes SIZE [--server-cpu 0] [--reader-cpu 1]
//   write-floor --read PORT --clients N --rounds R --bytes SIZE [--reader-cpu 1]
//
// With --read, it is only the reader, of another server on 127.0.0.1:PORT (nio-floor, the same floor through
// SwiftNIO): it connects N clients, prints "connected", and exits 0 once it has read N * R * SIZE bytes.
//
// Prints one JSON object: clients, messages, bytes, cpu_us_per_message (the server's user + system time).
// The reader (a child process) reads with epoll, as fanout-client does; it must receive every byte.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what) {
  perror(what);
  exit(1);
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) fail("sched_setaffinity");
}

static double cpu_us(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

// Reads everything the server writes to `clients` connections; exits 0 once it has `expected` bytes. With
// `announce`, it prints "connected" once every client is connected (for a server in another process).
static void read_all(struct sockaddr_in address, int clients, long long expected, int cpu, int announce) {
  pin(cpu);
  int poll = epoll_create1(0);
  for (int i = 0; i < clients; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(poll, EPOLL_CTL_ADD, fd, &event);
  }
  if (announce) {
    printf("connected\n");
    fflush(stdout);
  }
  static char buffer[1 << 16];
  struct epoll_event events[512];
  long long received = 0;
  while (received < expected) {
    int ready = epoll_wait(poll, events, 512, 10000);
    if (ready <= 0) break;
    for (int i = 0; i < ready; i++) {
      ssize_t count = read(events[i].data.fd, buffer, sizeof buffer);
      if (count > 0) received += count;
    }
  }
  _exit(received == expected ? 0 : 1);
}

int main(int argc, char **argv) {
  int clients = 333, rounds = 200, rate = 20, bytes = 300, server_cpu = 0, reader_cpu = 1, read_port = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    int value = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--clients")) clients = value;
    else if (!strcmp(argv[i], "--rounds")) rounds = value;
    else if (!strcmp(argv[i], "--rate")) rate = value;
    else if (!strcmp(argv[i], "--bytes")) bytes = value;
    else if (!strcmp(argv[i], "--server-cpu")) server_cpu = value;
    else if (!strcmp(argv[i], "--reader-cpu")) reader_cpu = value;
    else if (!strcmp(argv[i], "--read")) read_port = value;
    else {
      fprintf(stderr, "usage: write-floor [--read PORT] --clients N --rounds R --rate R --bytes B [--server-cpu C] "
                      "[--reader-cpu C]\n");
      return 2;
    }
  }
  if (clients < 1 || rounds < 1 || rate < 1 || bytes < 1) return 2;
  if (read_port > 0) {
    struct sockaddr_in server = {.sin_family = AF_INET, .sin_port = htons(read_port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    read_all(server, clients, (long long)clients * rounds * bytes, reader_cpu, 1);
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof address;
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0) fail("bind");
  getsockname(listener, (struct sockaddr *)&address, &length);
  if (listen(listener, 4096) != 0) fail("listen");
  pid_t reader = fork();
  if (reader == 0) read_all(address, clients, (long long)clients * rounds * bytes, reader_cpu, 0);
  pin(server_cpu);
  int *sockets = malloc(clients * sizeof *sockets);
  for (int i = 0; i < clients; i++) {
    if ((sockets[i] = accept(listener, NULL, NULL)) < 0) fail("accept");
    setsockopt(sockets[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as NIO does
  }
  char *message = malloc(bytes);
  memset(message, 'x', bytes);
  double before = cpu_us();
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (int round = 0; round < rounds; round++) {
    for (int i = 0; i < clients; i++) {
      if (write(sockets[i], message, bytes) != bytes) fail("write");
    }
    next.tv_nsec += 1000000000L / rate;
    if (next.tv_nsec >= 1000000000L) {
      next.tv_sec += 1;
      next.tv_nsec -= 1000000000L;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  double used = cpu_us() - before;
  int status;
  waitpid(reader, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "write-floor: the reader did not receive every byte\n");
    return 1;
  }
  long long messages = (long long)clients * rounds;
  printf("{\"clients\": %d, \"messages\": %lld, \"bytes\": %d, \"cpu_us_per_message\": %.2f}\n", clients, messages,
         bytes, used / messages);
  return 0;
}
