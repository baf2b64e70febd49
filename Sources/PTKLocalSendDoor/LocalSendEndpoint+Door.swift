import PTKDoor
import PTKSystem
import PTKTransport

extension LocalSendEndpoint {
    /// The LocalSend receiver's port as a door (a `ServedDoor`): each connection served in a session slot on a
    /// thread of its own; over the limits its first request is answered 429.
    package func door(admission: Admission) -> ServedDoor {
        ServedDoor(name: "localsend", listener: listener) { [self] socket, displacer, peer in
            let localSend = self
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
}
