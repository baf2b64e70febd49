import PTKDoor
import PTKSystem
import PTKTransport

extension WebEndpoint {
    /// The web interface's port as a door (a `ServedDoor`) (its WebDAV door is on the same port, at /dav/): a
    /// browser's connection is served in a session slot (counted in the limits like any
    /// sender's, so slow or idle browsers cannot take more than their share) on a thread of its
    /// own; over the limits its first request is answered 429.
    package func door(admission: Admission) -> ServedDoor {
        ServedDoor(name: "web", listener: listener) { [self] socket, displacer, peer in
            let web = self
            admission.admit(
                socket, displacer: displacer, peer: peer, thread: "web", kind: "https",
                busy: { id, refusal in
                    web.serve(socket, peer: peer, id: id, deadline: .now + .seconds(1), busy: refusal.reason)
                }
            ) { id, deadline in
                web.serve(
                    socket, peer: peer, id: id, deadline: deadline, stage: { admission.setStage(id, $0) },
                    claim: { admission.claimSlot(id, for: $0) })
            }
        }
    }
}
