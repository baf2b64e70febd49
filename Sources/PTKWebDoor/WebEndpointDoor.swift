import PTKDoor
import PTKSystem
import PTKTransport

/// The web interface's port as a door (its WebDAV door is on the same port, at /dav/): a
/// browser's connection is served in a session slot (counted in the limits like any
/// sender's, so slow or idle browsers cannot take more than their share) on a thread of its
/// own; over the limits its first request is answered 429.
package final class WebEndpointDoor: Door, @unchecked Sendable {
    // Fixed at init.
    package let name = "web"
    let endpoint: WebEndpoint
    let admission: Admission

    package init(_ endpoint: WebEndpoint, admission: Admission) {
        self.endpoint = endpoint
        self.admission = admission
    }

    package var listener: Listener { endpoint.listener }

    package func serve(_ socket: FileDescriptor, displacer: FileDescriptor, peer: SocketAddress) {
        let (web, admission) = (endpoint, admission)
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
