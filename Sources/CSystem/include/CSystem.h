// The few Linux calls and constants that Swift's Glibc module does not export: epoll, eventfd, accept4.
// Kept deliberately tiny; everything else is used from Glibc directly.
//
// `_GNU_SOURCE` (needed for accept4) is defined in CSystem.c only: defining it here would change the system
// headers' structs (e.g. `fd_set`) as Swift sees them and conflict with the SwiftGlibc module.
#ifndef FLAGSTAFF_CSYSTEM_H
#define FLAGSTAFF_CSYSTEM_H

#ifdef __linux__

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// `struct epoll_event` is packed and its `data` is a union, which Swift imports awkwardly: these helpers build and
// read it with the 64-bit `u64` member, the only one FlagServer uses.
static inline struct epoll_event csystem_epoll_event(uint32_t events, uint64_t data) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = data;
    return event;
}

static inline uint64_t csystem_epoll_event_data(const struct epoll_event *event) { return event->data.u64; }

static inline uint32_t csystem_epoll_event_events(const struct epoll_event *event) { return event->events; }

// The epoll flags as plain unsigned values (Glibc's enum constants import with inconsistent types).
static const uint32_t CSYSTEM_EPOLLIN = EPOLLIN;
static const uint32_t CSYSTEM_EPOLLOUT = EPOLLOUT;
static const uint32_t CSYSTEM_EPOLLRDHUP = EPOLLRDHUP;
static const uint32_t CSYSTEM_EPOLLHUP = EPOLLHUP;
static const uint32_t CSYSTEM_EPOLLERR = EPOLLERR;

// accept4 with the new socket non-blocking and close-on-exec, so no extra fcntl calls are needed per connection.
int csystem_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length);

// A TCP socket that is non-blocking and close-on-exec from the start.
int csystem_tcp_socket(int domain);

// An eventfd used to wake an event loop from other threads.
int csystem_eventfd(void);

// Names the calling thread (at most 15 bytes are kept), so loop threads are recognisable in `top -H` and gdb.
void csystem_set_thread_name(const char *name);

#endif // __linux__

#endif // FLAGSTAFF_CSYSTEM_H
