import FoundationEssentials
import PTKClient
import PTKProtocol
import PTKSystem
import PTKVocabulary

/// One receiver as `ptk-send --list` shows it.
public struct ReceiverListing: Sendable, Equatable, Encodable {
    /// The mDNS instance name, which `ptk-send` takes as `<peer>`.
    public var name: String
    /// The host's mDNS name ("livingroom.local").
    public var host: String
    /// Numeric addresses, IPv6 link-local ones with their "%interface" scope.
    public var addresses: [String]
    /// The port the receiver listens on.
    public var port: Int
    /// The protocol version its TXT record gives ("" when none).
    public var version: String
    /// Its advertised device ID, compact ("" when it advertises none: no TLS).
    public var id: String
    /// "known", "new", "CHANGED" (the advertised ID is not the remembered one) or "no TLS".
    public var status: String

    /// `txt` is the service's TXT record; `known` the receivers this sender remembers.
    public init(
        name: String, host: String, addresses: [String], port: Int, txt: [String: String], known: KnownReceivers
    ) {
        self.name = name
        self.host = host
        self.addresses = addresses
        self.port = port
        self.version = txt["v"] ?? ""
        let advertised = txt["id"].flatMap { DeviceID(parsing: $0) }
        self.id = advertised?.compact ?? ""
        if let advertised {
            if let entry = known.entry(named: name) {
                status = entry.id == advertised ? "known" : "CHANGED"
            } else {
                status = "new"
            }
        } else {
            status = "no TLS"
        }
    }

    /// The list as JSON: an array of objects with sorted keys, on one line.
    public static func json(_ receivers: [ReceiverListing]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and integers cannot fail.
        // A name, host or TXT value holding U+2028, DEL, C1 or a bidi control gets a JSON escape.
        return escapingTerminalControlsInJSON(
            String(decoding: (try? encoder.encode(receivers)) ?? Data("[]".utf8), as: UTF8.self))
    }

    /// The list as aligned text, one receiver per line: name, first address and port, protocol
    /// version, short device ID, status. What the receivers advertise (names, addresses, the
    /// version) is written with its control characters escaped (`escapedForTerminal`).
    public static func text(_ receivers: [ReceiverListing]) -> String {
        let width = receivers.map { escapedForTerminal($0.name).count }.max() ?? 0
        return receivers.map { r in
            let name = escapedForTerminal(r.name)
            let address = escapedForTerminal(r.addresses.first.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "?")
            let id = DeviceID(parsing: r.id)?.short ?? "-"
            let version = r.version.isEmpty ? "?" : escapedForTerminal(r.version)
            return name + String(repeating: " ", count: width - name.count)
                + "  \(address):\(r.port)  protocol v\(version)  \(id)  \(r.status)"
        }.joined(separator: "\n")
    }
}
