// The few Linux calls and constants that Swift's Glibc module does not export: epoll, eventfd, accept4.
// Kept deliberately tiny; everything else is used from Glibc directly.
#ifndef FLAGSTAFF_CSYSTEM_H
#define FLAGSTAFF_CSYSTEM_H

#ifdef __linux__

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/types.h>

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
static inline int csystem_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

// A TCP socket that is non-blocking and close-on-exec from the start.
static inline int csystem_tcp_socket(int domain) {
    return socket(domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

// An eventfd used to wake an event loop from other threads.
static inline int csystem_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

#endif // __linux__

#endif // FLAGSTAFF_CSYSTEM_H
