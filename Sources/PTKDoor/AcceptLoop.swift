import PTKLog
import PTKSystem
import PTKTransport

/// ptkd's one accept loop: it waits on the sockets of every door at once, and hands each
/// connection accepted on a socket to the door that socket belongs to (`Door.serve`), with a
/// second descriptor of it for its connection slot. It knows no door by name.
public struct AcceptLoop {
    /// The doors whose sockets it waits on, in the order they are polled.
    public let doors: [any Door]
    private let shutdown: ShutdownSignal
    private let period: Duration
    private let tick: () -> Void
    private let remedy: (Errno) -> String

    /// A loop over `doors` until `shutdown`; `tick` runs every `period` (ptkd's clean-up of
    /// stale partial uploads, hourly); `remedy` ends the log line of an accept error that
    /// lasts with what to do about it.
    public init(
        doors: [any Door], shutdown: ShutdownSignal, every period: Duration = .seconds(3600),
        tick: @escaping () -> Void = {},
        remedy: @escaping (Errno) -> String = { _ in "" }
    ) {
        self.doors = doors
        self.shutdown = shutdown
        self.period = period
        self.tick = tick
        self.remedy = remedy
    }

    /// Every door's listening sockets, each with its door, in the order they are polled (a
    /// door whose listener is closed has none).
    public var sockets: [(socket: FileDescriptor, door: any Door)] {
        doors.flatMap { door in door.listener.sockets.map { (socket: $0, door: door) } }
    }

    /// Accepts connections and hands them on until `shutdown` is requested: nil. Or why the
    /// loop could not go on (waiting on the sockets failed): ptkd then shuts down as if asked,
    /// and exits non-zero so that `Restart=on-failure` restarts it. An accept that fails (out
    /// of descriptors, of memory) is logged once while it lasts, and retried 100 ms later.
    public func run() -> String? {
        var nextTick = Instant.now + period
        // Set while accept keeps failing, so a lasting condition is logged once, not every 100 ms.
        var acceptFailing: Errno? = nil
        while !shutdown.isRequested {
            let polled = sockets
            var fds = polled.map { ($0.socket, PollEvents.readable) }
            fds.append((shutdown.pipe.readEnd, .readable))
            let revents: [PollEvents]
            do { revents = try poll(fds, until: nextTick) } catch {
                return "the accept loop failed: \(error)"
            }
            if Instant.now >= nextTick {
                tick()
                nextTick = .now + period
            }
            for (i, (socket, door)) in polled.enumerated() where !revents[i].isEmpty {
                do throws(SystemError) {
                    while let (connection, peer) = try Socket.accept(socket) {
                        // A second descriptor of it, to end it with should it be displaced
                        // (`ConnectionTable`): without one ptkd is out of descriptors, as if
                        // accept itself had failed.
                        let displacer: FileDescriptor
                        do throws(SystemError) { displacer = try connection.duplicate() } catch {
                            connection.close()
                            throw error
                        }
                        if acceptFailing != nil {
                            Log.info("accepting connections again")
                            acceptFailing = nil
                        }
                        door.serve(connection, displacer: displacer, peer: peer)
                    }
                } catch {
                    if acceptFailing != error.code {
                        acceptFailing = error.code
                        Log.warning("cannot accept connections: \(error)" + remedy(error.code))
                    }
                    // Out of descriptors or memory: back off instead of spinning on a readable socket.
                    sleep(for: .milliseconds(100))
                }
            }
        }
        return nil
    }
}
