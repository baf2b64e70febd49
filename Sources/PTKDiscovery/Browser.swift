import CAvahi
import PTKSystem

/// A ptk receiver found over mDNS.
public struct DiscoveredService: Sendable, Equatable {
    /// The instance name ("Living Room").
    public var name: String
    /// The host's mDNS name ("livingroom.local").
    public var hostName: String
    /// Numeric addresses, IPv6 link-local ones with their "%interface" scope.
    public var addresses: [String]
    /// The SRV record's port, where the receiver listens.
    public var port: UInt16
    /// TXT records as key/value pairs (their order is not kept by mDNS).
    public var txt: [String: String]

    /// The protocol version from TXT `v`, if given.
    public var protocolVersion: String? { txt["v"] }
}

/// Why browsing could not be done.
public struct DiscoveryError: Error, Sendable, CustomStringConvertible {
    /// Why, in words for `ptk-send --list`: avahi-daemon not running, say.
    public var description: String
}

/// Browses `_ptk._tcp` through avahi-daemon and resolves what it finds.
public enum Browser {
    /// Collects receivers for up to `timeout` seconds: it returns early once Avahi has reported
    /// everything it knows ("all for now") and each has been resolved, or as soon as
    /// `stopWhen` accepts one. Fails when avahi-daemon cannot be reached.
    public static func browse(timeout: Duration = .seconds(2), stopWhen: (DiscoveredService) -> Bool = { _ in false })
        throws(DiscoveryError) -> [DiscoveredService]
    {
        guard let simple = avahi_simple_poll_new() else {
            throw DiscoveryError(description: "cannot start Avahi's event loop")
        }
        defer { avahi_simple_poll_free(simple) }
        let state = BrowseState()
        let ctx = Unmanaged.passUnretained(state).toOpaque()
        var error: CInt = 0
        guard
            let client = avahi_client_new(
                avahi_simple_poll_get(simple), AvahiClientFlags(0), { _, _, _ in }, nil, &error)
        else {
            throw DiscoveryError(
                description: error == Int32(AVAHI_ERR_NO_DAEMON)
                    ? "avahi-daemon is not running, so receivers cannot be found by name"
                    : "cannot reach avahi-daemon: \(Advertiser.text(error))")
        }
        defer { avahi_client_free(client) }
        state.client = client
        guard
            let browser = avahi_service_browser_new(
                client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC),
                ptkServiceType, nil, AvahiLookupFlags(0),
                { _, iface, proto, event, name, type, domain, _, userdata in
                    let state = Unmanaged<BrowseState>.fromOpaque(userdata!).takeUnretainedValue()
                    switch event {
                    case AVAHI_BROWSER_NEW:
                        // Ask for an address of the protocol the service was seen on, as avahi-browse -r does.
                        guard
                            let r = avahi_service_resolver_new(
                                state.client, iface, proto, name, type, domain,
                                proto, AvahiLookupFlags(0),
                                { r, iface, _, event, name, _, _, host, address, port, txt, _, userdata in
                                    let state = Unmanaged<BrowseState>.fromOpaque(userdata!).takeUnretainedValue()
                                    if event == AVAHI_RESOLVER_FOUND, let name, let address {
                                        state.found(
                                            name: String(cString: name), host: host.map { String(cString: $0) } ?? "",
                                            address: Browser.addressText(address, iface), port: port,
                                            txt: Browser.txtRecords(txt))
                                    }
                                    state.pending -= 1
                                    avahi_service_resolver_free(r)
                                }, userdata)
                        else { return }
                        _ = r
                        state.pending += 1
                    case AVAHI_BROWSER_ALL_FOR_NOW:
                        state.allForNow = true
                    case AVAHI_BROWSER_FAILURE:
                        state.failed = true
                    default:
                        break
                    }
                }, ctx)
        else {
            throw DiscoveryError(description: "cannot browse: \(Advertiser.text(avahi_client_errno(client)))")
        }
        defer { avahi_service_browser_free(browser) }
        let deadline = Instant.now + timeout
        while Instant.now < deadline {
            if state.failed {
                throw DiscoveryError(description: "browsing failed: \(Advertiser.text(avahi_client_errno(client)))")
            }
            if state.allForNow && state.pending == 0 { break }
            if state.services.contains(where: stopWhen) { break }
            if avahi_simple_poll_iterate(simple, max(1, min(100, deadline.pollTimeout))) != 0 { break }
        }
        return state.services
    }

    static func addressText(_ address: UnsafePointer<AvahiAddress>, _ iface: AvahiIfIndex) -> String {
        var buf = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&buf, buf.count, address)
        var text = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if address.pointee.proto == AvahiProtocol(AVAHI_PROTO_INET6), text.lowercased().hasPrefix("fe80") {
            if let name = interfaceName(index: UInt32(iface)) { text += "%" + name }
        }
        return text
    }

    static func txtRecords(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [String: String] {
        var out: [String: String] = [:]
        var p = list
        while let item = p {
            let size = Int(avahi_string_list_get_size(item))
            let text = String(
                decoding: UnsafeBufferPointer(start: avahi_string_list_get_text(item), count: size), as: UTF8.self)
            if let eq = text.firstIndex(of: "=") {
                out[String(text[..<eq])] = String(text[text.index(after: eq)...])
            } else {
                out[text] = ""
            }
            p = avahi_string_list_get_next(item)
        }
        return out
    }
}

/// What one browse has gathered. Used on the calling thread only (simple poll callbacks run
/// inside avahi_simple_poll_iterate).
private final class BrowseState {
    var client: OpaquePointer?
    var services: [DiscoveredService] = []
    var pending = 0
    var allForNow = false
    var failed = false

    func found(name: String, host: String, address: String, port: UInt16, txt: [String: String]) {
        if let i = services.firstIndex(where: { $0.name == name }) {
            if !services[i].addresses.contains(address) { services[i].addresses.append(address) }
            services[i].txt.merge(txt) { a, _ in a }
        } else {
            services.append(DiscoveredService(name: name, hostName: host, addresses: [address], port: port, txt: txt))
        }
    }
}
