import CSystem
import Glibc

/// Interest set, deadlines, draining and closing.
extension Connection {
    // MARK: - Interest and deadlines

    func updateInterest() {
        guard phase != .closed else { return }
        var desired = CSYSTEM_EPOLLRDHUP
        if input != .paused { desired |= CSYSTEM_EPOLLIN }
        if wantsWritable { desired |= CSYSTEM_EPOLLOUT }
        guard desired != registeredEvents else { return }
        var event = csystem_epoll_event(desired, id.token)
        epoll_ctl(loop.epollFD, EPOLL_CTL_MOD, fd, &event)
        registeredEvents = desired
    }

    /// Recomputes the single deadline that applies in the current state.
    func updateDeadline() {
        let shared = loop.shared
        switch phase {
        case .closed, .lingering:
            return
        case .open, .closing:
            break
        }
        if !output.isEmpty {
            (deadline, deadlineReason) = (lastWriteProgress + shared.idleTimeout, .slowReader)
        } else if input == .parsing && !parser.isIdle {
            if parser.isReadingHead {
                (deadline, deadlineReason) = (headStart + shared.headerTimeout, .headerTimeout)
            } else {
                // Each byte resets the idle timeout, so the body also has an overall deadline that grows with
                // what has arrived: a byte every few seconds cannot hold the connection for hours.
                let bodyDeadline = shared.bodyDeadline(requestStart: headStart, bodyBytes: parser.receivedBodyBytes)
                let idleDeadline = lastReadProgress + shared.idleTimeout
                (deadline, deadlineReason) =
                    bodyDeadline < idleDeadline ? (bodyDeadline, .bodyTimeout) : (idleDeadline, .idleTimeout)
            }
        } else if outstanding.isEmpty && phase == .open {
            (deadline, deadlineReason) =
                hasServedRequest
                ? (idleSince + shared.idleTimeout, .idleTimeout) : (idleSince + shared.headerTimeout, .headerTimeout)
        } else {
            deadline = 0
        }
    }

    func deadlineExpired() {
        close(phase == .lingering ? .done : deadlineReason)
    }

    // MARK: - Closing

    /// Shutdown: idle connections close now; in-flight requests may finish (their responses close the
    /// connection); open streams end, so their handlers hear `onClose`.
    func beginDrain() {
        input = .discarding
        if outstanding.isEmpty {
            if output.isEmpty { close(.shutdown) } else { beginClosing() }
            return
        }
        for index in outstanding.indices {
            if case .streaming(let pending, _) = outstanding[index].state {
                outstanding[index].state = .streaming(pending: pending, finished: true)
            }
        }
        advance()
        loop.markDirty(self)
    }

    func beginClosing() {
        guard phase == .open else { return }
        phase = .closing(linger: lingerOnClose && loop.shared.lingerTimeout > 0)
        input = .discarding
        loop.markDirty(self)
    }

    func startLingering() {
        phase = .lingering
        shutdown(fd, Int32(SHUT_WR))
        deadline = loop.now + loop.shared.lingerTimeout
        updateInterest()
    }

    func close(_ reason: CloseReason) {
        guard phase != .closed else { return }
        phase = .closed
        // Counted before the descriptor closes, so a client that sees the close also sees the counts.
        switch reason {
        case .headerTimeout: loop.shared.metrics.count("header_timeout")
        case .bodyTimeout: loop.shared.metrics.count("body_timeout")
        case .idleTimeout: loop.shared.metrics.count("idle_timeout")
        case .slowReader: loop.shared.metrics.count("slow_reader")
        case .done, .peerGone, .shutdown: break
        }
        let entries = outstanding
        for entry in entries {
            if case .streaming = entry.state { loop.shared.metrics.openStreams.subtract(1, ordering: .relaxed) }
        }
        outstanding = []
        output.removeAll()
        parser = HTTPRequestParser(limits: parser.limits)
        loop.remove(self)
        Glibc.close(fd)
        for entry in entries {
            entry.responder?.connectionClosed()
        }
    }
}
