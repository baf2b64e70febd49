import PTKDoor
import PTKSystem
import PTKTransport

/// The LocalSend receiver's port as a door: each connection served in a session slot on a
/// thread of its own; over the limits its first request is answered 429.
package final class LocalSendEndpointDoor: Door, @unchecked Sendable {
    // Fixed at init.
    package let name = "localsend"
    let endpoint: LocalSendEndpoint
    let admission: Admission

    package init(_ endpoint: LocalSendEndpoint, admission: Admission) {
        self.endpoint = endpoint
        self.admission = admission
    }

    package var listener: Listener { endpoint.listener }

    package func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        let (localSend, admission) = (endpoint, admission)
        let host = peer.host
        admission.admit(
            socket, displacer: displacer, peer: peer, thread: "localsend", kind: "https",
            busy: { id, refusal in
                localSend.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: refusal.reason)
            }
        ) { id, deadline in
            // LocalSend apps retry a 429 on their own: they take a session only from those
            // no sender in line is owed, and do not wait in line.
            let key = "localsend \(host)"
            if admission.withTurns({ $0.take(key, now: .now) }) {
                localSend.serve(socket, peer: peer, id: id, deadline: deadline) { admission.setStage(id, $0) }
                admission.withTurns { $0.release(key) }
            } else {
                let reason =
                    "the receiver is serving its limit of \(admission.maxSessions) sessions, or owes the free ones to senders waiting"
                localSend.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: reason)
            }
        }
    }
}
