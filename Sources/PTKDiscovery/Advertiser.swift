import CAvahi
import PTKSystem

/// The DNS-SD service type of ptk receivers.
public let ptkServiceType = "_ptk._tcp"

/// Publishes a ptk receiver over mDNS through avahi-daemon, and keeps it published: it waits
/// for avahi-daemon when it is not running (AVAHI_CLIENT_NO_FAIL), publishes again when the
/// daemon restarts, and takes Avahi's alternative name on a collision.
public final class Advertiser: @unchecked Sendable {
    // Invariant: `client`, `group`, `name`, `established` and `warnedWaiting` are touched only
    // on Avahi's poll thread (inside callbacks, where Avahi holds the poll lock) or by another
    // thread holding the poll lock (avahi_threaded_poll_lock). `poll` is fixed at init.
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var group: OpaquePointer?
    private var name: String
    private let port: UInt16
    private let txt: [String]
    private let log: @Sendable (String) -> Void
    private var established = false
    private var warnedWaiting = false
    private var stopped = false

    /// Starts publishing `name` on `port` with TXT records `txt` ("key=value"). Log lines go
    /// to `log`. Returns nil when Avahi's event loop cannot even be created.
    public init?(name: String, port: UInt16, txt: [String] = ["v=1"], log: @escaping @Sendable (String) -> Void) {
        guard let poll = avahi_threaded_poll_new() else { return nil }
        self.poll = poll
        self.name = name
        self.port = port
        self.txt = txt
        self.log = log
        avahi_threaded_poll_lock(poll)
        createClient()
        avahi_threaded_poll_unlock(poll)
        guard avahi_threaded_poll_start(poll) == 0 else {
            if let client { avahi_client_free(client) }
            avahi_threaded_poll_free(poll)
            return nil
        }
    }

    /// The name being advertised now (it changes after a collision).
    public var currentName: String {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return name
    }

    /// True once avahi-daemon confirmed the service is published.
    public var isEstablished: Bool {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return established
    }

    /// Withdraws the advertisement and shuts Avahi's thread down. Never call from a callback.
    public func stop() {
        avahi_threaded_poll_lock(poll)
        if stopped {
            avahi_threaded_poll_unlock(poll)
            return
        }
        stopped = true
        if let group { avahi_entry_group_free(group) }  // withdraws the records (goodbye packets)
        group = nil
        avahi_threaded_poll_unlock(poll)
        avahi_threaded_poll_stop(poll)
        if let client { avahi_client_free(client) }
        client = nil
        avahi_threaded_poll_free(poll)
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ p: UnsafeMutableRawPointer?) -> Advertiser {
        Unmanaged<Advertiser>.fromOpaque(p!).takeUnretainedValue()
    }

    /// Creates the client; its callback may run (RUNNING) before this returns.
    private func createClient() {
        var error: CInt = 0
        let c = avahi_client_new(
            avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL,
            { client, state, userdata in
                Advertiser.from(userdata).clientChanged(client, state)
            }, context, &error)
        client = c
        if c == nil {
            // No D-Bus (or no memory): NO_FAIL cannot wait for avahi-daemon then, so try again later.
            if !warnedWaiting {
                log(
                    "warning: mDNS advertising unavailable (\(Self.text(error))); serving over TCP, retrying every \(Int(Self.retrySeconds)) s"
                )
                warnedWaiting = true
            }
            scheduleRetry()
        }
    }

    /// Seconds between attempts to reach the system bus when it is not there.
    static let retrySeconds = 5.0

    private func scheduleRetry() {
        guard let api = avahi_threaded_poll_get(poll) else { return }
        var tv = timeval()
        avahi_elapse_time(&tv, UInt32(Self.retrySeconds * 1000), 0)
        _ = api.pointee.timeout_new(
            api, &tv,
            { timeout, userdata in
                let me = Advertiser.from(userdata)
                if let api = avahi_threaded_poll_get(me.poll) { api.pointee.timeout_free(timeout) }
                if !me.stopped && me.client == nil { me.createClient() }
            }, context)
    }

    private func clientChanged(_ client: OpaquePointer?, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            warnedWaiting = false
            publish(client)
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name is being (re)registered: our records go back up once RUNNING.
            if let group { avahi_entry_group_reset(group) }
            established = false
        case AVAHI_CLIENT_CONNECTING:
            if !warnedWaiting {
                log(
                    "warning: avahi-daemon is not running; serving over TCP, and will advertise over mDNS when it starts"
                )
                warnedWaiting = true
            }
        case AVAHI_CLIENT_FAILURE:
            let error = avahi_client_errno(client)
            established = false
            if let group { avahi_entry_group_free(group) }
            group = nil
            if let client { avahi_client_free(client) }
            self.client = nil
            if error == Int32(AVAHI_ERR_DISCONNECTED) {
                log("warning: avahi-daemon went away; will advertise again when it returns")
                warnedWaiting = true
            } else {
                log("warning: mDNS client failed (\(Self.text(error))); reconnecting")
            }
            createClient()
        default:
            break
        }
    }

    private func publish(_ client: OpaquePointer?) {
        guard let client, !stopped else { return }
        if group == nil {
            group = avahi_entry_group_new(
                client,
                { g, state, userdata in
                    Advertiser.from(userdata).groupChanged(g, state)
                }, context)
            guard group != nil else {
                log("warning: cannot create an mDNS entry group: \(Self.text(avahi_client_errno(client)))")
                return
            }
        }
        guard avahi_entry_group_is_empty(group) != 0 else { return }
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for record in txt { list = avahi_string_list_add(list, record) }
        defer { avahi_string_list_free(list) }
        let rc = avahi_entry_group_add_service_strlst(
            group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
            AvahiPublishFlags(0), name, ptkServiceType, nil, nil, port, list)
        if rc == Int32(AVAHI_ERR_COLLISION) {
            rename(client)
            return
        }
        guard rc == 0 else {
            log("warning: cannot add the mDNS service: \(Self.text(rc))")
            return
        }
        let commit = avahi_entry_group_commit(group)
        if commit != 0 { log("warning: cannot publish the mDNS service: \(Self.text(commit))") }
    }

    private func groupChanged(_ g: OpaquePointer?, _ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            established = true
            log("advertising \"\(name)\" as \(ptkServiceType) on port \(port) over mDNS")
        case AVAHI_ENTRY_GROUP_COLLISION:
            established = false
            rename(avahi_entry_group_get_client(g))
        case AVAHI_ENTRY_GROUP_FAILURE:
            established = false
            log("warning: mDNS advertisement failed: \(Self.text(avahi_client_errno(avahi_entry_group_get_client(g))))")
        default:
            break
        }
    }

    /// Takes Avahi's alternative for the current name ("name #2") and publishes again.
    private func rename(_ client: OpaquePointer?) {
        if let alternative = avahi_alternative_service_name(name) {
            let old = name
            name = String(cString: alternative)
            avahi_free(alternative)
            log("mDNS name \"\(old)\" is taken on this network; advertising as \"\(name)\"")
        }
        if let group { avahi_entry_group_reset(group) }
        publish(client)
    }

    static func text(_ error: CInt) -> String {
        String(cString: avahi_strerror(error))
    }
}

extension Advertiser: Service {
    /// What the log calls it when it stops.
    public var serviceName: String { "mDNS advertising" }

    /// Withdraws the records and stops Avahi's thread; Avahi joins it, so it is done at once.
    public func stop(until deadline: Instant) -> Bool {
        stop()
        return true
    }
}
