// accept4 is a GNU extension: it needs _GNU_SOURCE before the first system header.
#define _GNU_SOURCE
#include "CSystem.h"

#include <pthread.h>

#ifdef __linux__

int csystem_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int csystem_tcp_socket(int domain) { return socket(domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }

int csystem_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void csystem_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

#endif // __linux__
