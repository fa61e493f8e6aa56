import CSystem
import Glibc

/// Accepting connections: the caps, the slot table and the listener's pause when descriptors run out.
extension EventLoop {
    func acceptConnections() {
        // Bounded per event so that a connection storm cannot starve the connections already open.
        for _ in 0..<64 {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    csystem_accept_nonblocking(listenFD, $0, &length)
                }
            }
            guard fd >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Out of descriptors: stop polling the listener for a moment instead of spinning on it.
                    shared.metrics.count("accept_failed")
                    pauseListener()
                    return
                default:
                    return
                }
            }
            shared.metrics.acceptedConnections.add(1, ordering: .relaxed)
            let open = shared.metrics.openConnections.add(1, ordering: .relaxed).newValue
            guard open <= shared.configuration.maxConnections, drainDeadline == nil else {
                shared.metrics.openConnections.subtract(1, ordering: .relaxed)
                refuse(fd, .overCapacity())
                continue
            }
            var origin = RequestOrigin(remoteAddress: Socket.describe(address))
            var counted: IPAddress?
            if let peer = IPAddress(address) {
                origin.peer = peer
                origin.peerText = peer.description
                if let proxies = shared.trustedProxies, proxies.contains(peer) {
                    // Counted per client once its requests say who that is (`ConnectionStateMachine.attribute`).
                    origin.proxies = proxies
                } else if let table = shared.connectionsPerAddress {
                    guard table.withLock({ $0.open(peer) }) else {
                        shared.metrics.openConnections.subtract(1, ordering: .relaxed)
                        refuse(fd, .overCapacityPerAddress(shared.connectionConfiguration.maxConnectionsPerAddress))
                        continue
                    }
                    counted = peer
                }
            }
            Socket.setNoDelay(fd)
            register(fd: fd, origin: origin, countedAddress: counted)
        }
    }

    private func register(fd: Int32, origin: RequestOrigin, countedAddress: IPAddress?) {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = connections.count
            connections.append(nil)
            generations.append(0)
        }
        let id = ConnectionID(slot: UInt32(slot), generation: generations[slot])
        let connection = Connection(loop: self, fd: fd, id: id, origin: origin, countedAddress: countedAddress)
        var event = csystem_epoll_event(Connection.epollEvents(connection.machine.interest), id.token)
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            close(fd)
            shared.metrics.openConnections.subtract(1, ordering: .relaxed)
            uncount(countedAddress)
            freeSlots.append(slot)
            return
        }
        connections[slot] = connection
        liveConnections += 1
    }

    /// Called by `Connection.close`: frees the slot; the generation bump makes queued messages for it stale.
    func remove(_ connection: Connection) {
        let slot = Int(connection.id.slot)
        connections[slot] = nil
        generations[slot] &+= 1
        freeSlots.append(slot)
        liveConnections -= 1
        shared.metrics.openConnections.subtract(1, ordering: .relaxed)
        uncount(connection.machine.countedAddress)
    }

    private func uncount(_ address: IPAddress?) {
        guard let address, let table = shared.connectionsPerAddress else { return }
        table.withLock { $0.close(address) }
    }

    /// The answer to a refused connection (over a cap), written once without waiting, then the socket is closed.
    private func refuse(_ fd: Int32, _ rejection: HTTPRejection) {
        let bytes = refusal(rejection).flatMap { $0 }
        _ = bytes.withUnsafeBytes {
            send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
        shutdown(fd, Int32(SHUT_WR))
        close(fd)
    }

    /// The encoded response to `rejection`, as the application renders it, with `Connection: close` (and
    /// `Retry-After` when the refusal is for load); the rejection is counted.
    func refusal(_ rejection: HTTPRejection) -> [[UInt8]] {
        shared.metrics.count(rejection.metricsReason)
        var response = shared.configuration.renderRejection(rejection)
        if rejection.isRetryable { response.headers.replaceOrAdd(name: "Retry-After", value: "1") }
        let context = HTTPResponseEncoder.Context(isHeadRequest: false, version: .http1_1, close: true)
        let encoded = HTTPResponseEncoder.encode(response, context, date: dateCache.line)
        return [encoded.head] + (encoded.body.map { [$0] } ?? [])
    }

    private func pauseListener() {
        guard listenFD >= 0, listenerPausedUntil == nil else { return }
        var event = csystem_epoll_event(0, Self.listenerToken)
        epoll_ctl(epollFD, EPOLL_CTL_MOD, listenFD, &event)
        listenerPausedUntil = now + 100_000_000
    }

    func resumeListener() {
        listenerPausedUntil = nil
        guard listenFD >= 0 else { return }
        var event = csystem_epoll_event(CSYSTEM_EPOLLIN, Self.listenerToken)
        epoll_ctl(epollFD, EPOLL_CTL_MOD, listenFD, &event)
    }

    func closeListener() {
        guard listenFD >= 0 else { return }
        epoll_ctl(epollFD, EPOLL_CTL_DEL, listenFD, nil)
        close(listenFD)
        listenFD = -1
        listenerPausedUntil = nil
    }
}
