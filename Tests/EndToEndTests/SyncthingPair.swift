import Foundation
import Glibc
import PTKSystem
import PTKTestSupport
import PTKTransport

/// Whether Debian's syncthing is there for `SyncthingPair`.
let haveSyncthing = findProgram("syncthing") != nil

/// Two real Syncthing instances on loopback sharing one folder (issue 56): "the phone", whose
/// copy is send-only, and "the inbox", whose copy is receive-only (ptkd's `INBOX/NAME`). Every
/// address is 127.0.0.1 and a port that was free: the REST API, the sync listener (TCP only, so
/// no QUIC and no STUN), and each device's address for the other. Global and local discovery,
/// relays, NAT traversal, usage reporting, crash reporting and upgrades are off in the
/// config.xml written before each start. Their homes (keys, config, database) and logs are in
/// `root`, removed with the pair.
final class SyncthingPair: @unchecked Sendable {
    /// One instance: its home, ports and API key.
    struct Instance {
        var name: String
        var home: String
        var folder: String
        var type: String
        var guiPort: UInt16
        var listenPort: UInt16
        var apiKey: String
        var deviceID: String
        var logPath: String
    }

    /// The pair's own temporary folder (homes, logs); removed by `deinit`.
    let root: String
    /// The shared folder's Syncthing ID.
    let folderID: String
    private(set) var phone: Instance
    private(set) var inbox: Instance
    private var phoneProcess: ToolProcess?
    private var inboxProcess: ToolProcess?
    private let sendLimitKiBps: Int

    /// The phone's copy of the folder (send-only): a test writes its photos here.
    var phoneFolder: String { phone.folder }
    /// The inbox's copy (receive-only): where Syncthing writes what the phone sends.
    var inboxFolder: String { inbox.folder }

    /// Writes both configurations and starts both instances, returning once each answers its
    /// REST API and they are connected. The folders are made if missing, each with Syncthing's
    /// `.stfolder` marker. `sendLimitKiBps` (0: none) limits what the phone sends, loopback
    /// included, so that a test can catch a transfer midway.
    init(phoneFolder: String, inboxFolder: String, folderID: String = "camera", sendLimitKiBps: Int = 0) throws {
        ignoreBrokenPipeSignal()
        root = makeTemporaryDirectory("ptk-syncthing")
        self.folderID = folderID
        self.sendLimitKiBps = sendLimitKiBps
        phone = Instance(
            name: "phone", home: root + "/phone", folder: phoneFolder, type: "sendonly", guiPort: 0, listenPort: 0,
            apiKey: randomKey(), deviceID: "", logPath: root + "/phone.log")
        inbox = Instance(
            name: "inbox", home: root + "/inbox", folder: inboxFolder, type: "receiveonly", guiPort: 0, listenPort: 0,
            apiKey: randomKey(), deviceID: "", logPath: root + "/inbox.log")
        do {
            for keyPath in [\SyncthingPair.phone, \SyncthingPair.inbox] {
                var instance = self[keyPath: keyPath]
                let generated = runTool(
                    ["syncthing", "generate", "--home", instance.home, "--no-default-folder", "--skip-port-probing"])
                let id = runTool(["syncthing", "serve", "--home", instance.home, "--device-id"])
                let deviceID = id.output.trimmingCharacters(in: .whitespacesAndNewlines)
                guard generated.status == 0, id.status == 0, deviceID.count == 63 else {
                    throw HarnessError("syncthing generate: \(generated.output)\n--device-id: \(id.output)")
                }
                instance.deviceID = deviceID
                instance.guiPort = try freeLoopbackPort()
                instance.listenPort = try freeLoopbackPort()
                try FileManager.default.createDirectory(
                    atPath: instance.folder + "/.stfolder", withIntermediateDirectories: true)
                self[keyPath: keyPath] = instance
            }
            try writeConfig(phone, peer: inbox)
            try writeConfig(inbox, peer: phone)
            // The inbox first: the phone, started once the inbox listens, dials it at once (both
            // started together, each may dial the other too early, and wait 20 s to dial again).
            inboxProcess = try start(inbox)
            try waitUntilUp(inbox)
            phoneProcess = try start(phone)
            try waitUntilUp(phone)
            try waitUntilConnected()
        } catch {
            stopAll()
            removeTree(root)
            throw error
        }
    }

    deinit {
        stopAll()
        removeTree(root)
    }

    /// Both logs' last lines, for failure messages.
    var logs: String {
        [phone, inbox].map { instance in
            let text = (try? String(contentsOfFile: instance.logPath, encoding: .utf8)) ?? "(no log)"
            return "--- syncthing \(instance.name) (\(instance.logPath)):\n" + lastLines(text)
        }.joined(separator: "\n")
    }

    /// Every process of both instances (each runs a monitor and its child).
    var processIDs: [pid_t] { (phoneProcess?.processTree ?? []) + (inboxProcess?.processTree ?? []) }

    /// Asks the phone to scan its folder now (REST `POST /rest/db/scan`, which answers once the
    /// scan is done), instead of waiting for its watcher (1 s) or its rescan interval (5 s).
    func rescan() throws {
        let r = try rest(phone, "POST", "/rest/db/scan?folder=\(folderID)")
        guard r.status == 200 else { throw HarnessError("scan of the phone's folder: \(r.status) \(r.text)\n\(logs)") }
    }

    /// The inbox's `/rest/db/status` of the folder (needFiles, state, globalFiles, ...).
    func inboxStatus() throws -> [String: Any] { try json(inbox, "/rest/db/status?folder=\(folderID)") }

    /// Scans the phone's folder, then waits up to `timeout` seconds until the inbox has all of
    /// it: the phone sees the inbox at 100 % with nothing needed, and the inbox needs nothing,
    /// is idle and holds as many files and bytes as the phone's copy.
    func waitUntilInSync(timeout: Double = 30) throws {
        try rescan()
        let deadline = Date() + timeout
        var last = ""
        while Date() < deadline {
            let phoneStatus = try json(phone, "/rest/db/status?folder=\(folderID)")
            let completion = try json(phone, "/rest/db/completion?folder=\(folderID)&device=\(inbox.deviceID)")
            let inboxStatus = try inboxStatus()
            func int(_ object: [String: Any], _ key: String) -> Int { (object[key] as? NSNumber)?.intValue ?? -1 }
            if (completion["completion"] as? NSNumber)?.doubleValue == 100, int(completion, "needItems") == 0,
                int(inboxStatus, "needTotalItems") == 0, inboxStatus["state"] as? String == "idle",
                int(inboxStatus, "globalFiles") == int(phoneStatus, "localFiles"),
                int(inboxStatus, "globalBytes") == int(phoneStatus, "localBytes")
            {
                return
            }
            last = "phone: \(phoneStatus)\ncompletion: \(completion)\ninbox: \(inboxStatus)"
            usleep(100_000)
        }
        throw HarnessError("not in sync after \(timeout) s:\n\(last)\n\(logs)")
    }

    /// Kills the phone's instance (SIGKILL, its monitor and child both), as a phone that dies
    /// or leaves the network mid-file.
    func killPhone() { phoneProcess?.kill() }

    /// Starts the phone's instance again (after `killPhone`), with the same home and ports;
    /// returns once it answers and is connected to the inbox.
    func startPhone() throws {
        phoneProcess?.kill()
        phoneProcess = try start(phone)
        try waitUntilUp(phone)
        try waitUntilConnected()
    }

    /// Stops both instances: REST `POST /rest/system/shutdown`, then SIGTERM and SIGKILL to
    /// whatever is left after a few seconds.
    func stop() { stopAll() }

    private func stopAll() {
        for (instance, process) in [(phone, phoneProcess), (inbox, inboxProcess)] {
            guard let process, !process.hasEnded else { continue }
            // Harness cleanup: whatever the shutdown request met, the signals below follow.
            _ = try? rest(instance, "POST", "/rest/system/shutdown")
            if !process.waitForEnd(timeout: 5) { process.stop(timeout: 2) }
            process.kill()
        }
    }

    private func start(_ instance: Instance) throws -> ToolProcess {
        try ToolProcess(
            [
                "syncthing", "serve", "--home", instance.home, "--no-browser", "--no-restart", "--no-upgrade",
                "--no-default-folder",
            ], log: instance.logPath,
            environment: [
                "HOME": instance.home, "STNOUPGRADE": "1", "STHASHING": "minio", "STNODEFAULTFOLDER": "1",
                "all_proxy": "", "http_proxy": "",
                "https_proxy": "",
            ])
    }

    private func waitUntilUp(_ instance: Instance) throws {
        let process = instance.name == "phone" ? phoneProcess : inboxProcess
        // 90 s: under the whole suite's load a first start's database migrations took over 30 s.
        let up = eventually(90) {
            // Polled: an instance not listening yet answers nothing.
            (try? rest(instance, "GET", "/rest/system/ping"))?.status == 200 || process?.hasEnded != false
        }
        guard up, process?.hasEnded == false else {
            throw HarnessError("syncthing \(instance.name) did not start\n\(logs)")
        }
    }

    private func waitUntilConnected() throws {
        let connected = eventually(30) {
            // Polled: false until the REST answer says so.
            guard let c = try? json(phone, "/rest/system/connections"),
                let all = c["connections"] as? [String: Any], let link = all[inbox.deviceID] as? [String: Any]
            else { return false }
            return link["connected"] as? Bool == true
        }
        guard connected else { throw HarnessError("the phone and the inbox did not connect\n\(logs)") }
    }

    /// One REST request (the API key in X-API-Key) on a new plain HTTP connection to 127.0.0.1.
    private func rest(_ instance: Instance, _ method: String, _ target: String) throws -> (status: Int, text: String) {
        let address = SocketAddress(numericHost: "127.0.0.1", port: instance.guiPort)!
        let socket = try Socket.connect(to: address, deadline: .now + .seconds(5))
        let connection = AppConnection(stream: TCPStream(socket: socket, peer: address))
        defer { connection.close() }
        let r = try connection.request(
            method, target, contentType: nil, extraHeaders: "X-API-Key: \(instance.apiKey)\r\n")
        return (r.status, String(decoding: r.body, as: UTF8.self))
    }

    private func json(_ instance: Instance, _ target: String) throws -> [String: Any] {
        let r = try rest(instance, "GET", target)
        guard r.status == 200, let object = try JSONSerialization.jsonObject(with: Data(r.text.utf8)) as? [String: Any]
        else { throw HarnessError("syncthing \(instance.name) GET \(target): \(r.status) \(r.text)") }
        return object
    }

    private func writeConfig(_ me: Instance, peer: Instance) throws {
        let limit =
            sendLimitKiBps > 0 && me.type == "sendonly"
            ? "<maxSendKbps>\(sendLimitKiBps)</maxSendKbps><limitBandwidthInLan>true</limitBandwidthInLan>" : ""
        let xml = """
            <configuration version="36">
                <folder id="\(xmlEscaped(folderID))" label="\(xmlEscaped(folderID))" path="\(xmlEscaped(me.folder))" type="\(me.type)" rescanIntervalS="5" fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
                    <filesystemType>basic</filesystemType>
                    <device id="\(me.deviceID)" introducedBy=""></device>
                    <device id="\(peer.deviceID)" introducedBy=""></device>
                    <minDiskFree unit="%">0</minDiskFree>
                    <markerName>.stfolder</markerName>
                </folder>
                <device id="\(me.deviceID)" name="\(me.name)" compression="metadata" introducer="false">
                    <address>dynamic</address>
                </device>
                <device id="\(peer.deviceID)" name="\(peer.name)" compression="metadata" introducer="false">
                    <address>tcp://127.0.0.1:\(peer.listenPort)</address>
                </device>
                <gui enabled="true" tls="false" debugging="false">
                    <address>127.0.0.1:\(me.guiPort)</address>
                    <apikey>\(me.apiKey)</apikey>
                    <theme>default</theme>
                </gui>
                <options>
                    <listenAddress>tcp://127.0.0.1:\(me.listenPort)</listenAddress>
                    <globalAnnounceServer></globalAnnounceServer>
                    <globalAnnounceEnabled>false</globalAnnounceEnabled>
                    <localAnnounceEnabled>false</localAnnounceEnabled>
                    <reconnectionIntervalS>1</reconnectionIntervalS>
                    <relaysEnabled>false</relaysEnabled>
                    <startBrowser>false</startBrowser>
                    <natEnabled>false</natEnabled>
                    <urAccepted>-1</urAccepted>
                    <urURL></urURL>
                    <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                    <releasesURL></releasesURL>
                    <crashReportingURL></crashReportingURL>
                    <crashReportingEnabled>false</crashReportingEnabled>
                    <stunServer></stunServer>
                    <announceLANAddresses>false</announceLANAddresses>
                    <setLowPriority>false</setLowPriority>
                    \(limit)
                </options>
            </configuration>

            """
        try xml.write(toFile: me.home + "/config.xml", atomically: true, encoding: .utf8)
    }
}

/// A random API key (32 hex digits).
private func randomKey() -> String {
    randomBytes(16).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
        .joined()
}

/// `text` with XML's five special characters escaped, for an attribute or an element.
private func xmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        .replacingOccurrences(of: "'", with: "&apos;")
}
