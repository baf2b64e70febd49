import Foundation
import Glibc
import PTKSystem
import PTKTestSupport

/// Whether `SFTPServer` can run here: root (sshd's privilege separation, root's login), sshd,
/// sftp, scp and ssh-keygen.
let canRunSFTP =
    geteuid() == 0 && haveProgram("/usr/sbin/sshd") && haveProgram("sftp") && haveProgram("scp")
    && haveProgram("ssh-keygen")

/// A real sshd on a free port of 127.0.0.1 only (`ListenAddress 127.0.0.1:PORT`) that lets one
/// key in, as root, for sftp alone (`Subsystem sftp internal-sftp`; no password, no PAM, no
/// forwarding). Its host key, the client's key, `authorized_keys`, `known_hosts` (the host key
/// for `[127.0.0.1]:PORT`, checked strictly), the configuration and the log are generated in
/// `root`, removed with it; nothing of the machine's ssh configuration is read (`-f` for sshd,
/// `-F /dev/null` for the clients). Clients: `sftp -b BATCH` (`put`, `reput`, `batch`,
/// `putInterrupted`) and `scp`. Remote names are relative to `folder`.
final class SFTPServer: @unchecked Sendable {
    /// The server's temporary folder (keys, configuration, log); removed by `deinit`.
    let root: String
    /// The folder remote names are in (the drop folder).
    let folder: String
    /// The TCP port sshd listens on, on 127.0.0.1.
    let port: UInt16
    /// The user the clients log in as.
    let user = "root"
    var logPath: String { root + "/sshd.log" }
    /// The client's private key (ed25519, no passphrase).
    var clientKey: String { root + "/client_key" }
    private var server: ToolProcess?
    private var clientRuns = 0

    /// Generates the keys and configuration and starts sshd; returns once it accepts
    /// connections. Makes /run/sshd (sshd's privilege separation folder) if missing.
    init(folder: String) throws {
        port = try freeLoopbackPort()
        root = makeTemporaryDirectory("ptk-sftp")
        self.folder = folder
        var started: ToolProcess?
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (key, comment) in [("host_key", "ptk-test-host"), ("client_key", "ptk-test-client")] {
                let made = runTool([
                    "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", root + "/" + key,
                ])
                guard made.status == 0 else { throw HarnessError("ssh-keygen: \(made.output)") }
            }
            guard let clientPublic = readFile(root + "/client_key.pub"),
                let hostPublic = readFile(root + "/host_key.pub")
            else { throw HarnessError("ssh-keygen wrote no public keys in \(root)") }
            writeFile(root + "/authorized_keys", clientPublic)
            writeFile(root + "/known_hosts", Array("[127.0.0.1]:\(port) ".utf8) + hostPublic)
            try configuration().write(toFile: root + "/sshd_config", atomically: true, encoding: .utf8)
            if !isDirectory("/run/sshd") {
                try FileManager.default.createDirectory(
                    atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            }
            let checked = runTool(["/usr/sbin/sshd", "-t", "-f", root + "/sshd_config"])
            guard checked.status == 0 else { throw HarnessError("sshd -t: \(checked.output)") }
            // sshd re-executes itself for each connection: it needs its absolute path.
            let sshd = try ToolProcess(["/usr/sbin/sshd", "-D", "-e", "-f", root + "/sshd_config"], log: logPath)
            started = sshd
            let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
            let up = eventually(20) {
                // Polled: refused until sshd listens.
                if let s = try? Socket.connect(to: address, deadline: .now + .seconds(1)) {
                    s.close()
                    return true
                }
                return sshd.hasEnded
            }
            guard up, !sshd.hasEnded else { throw HarnessError("sshd did not start\n\(lastLines(sshd.log))") }
        } catch {
            started?.kill()
            removeTree(root)
            throw error
        }
        server = started
    }

    deinit {
        stop()
        removeTree(root)
    }

    /// Stops sshd and the sessions it started (each a process group of its own, so killed one
    /// by one first: sshd leaves them running when it ends).
    func stop() {
        guard let server else { return }
        for session in descendants(of: server.pid) { kill(session, SIGKILL) }
        server.stop()
    }

    /// sshd's log, its last lines.
    var log: String { lastLines((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "(no log)") }

    /// sshd and its sessions.
    var processIDs: [pid_t] { server?.processTree ?? [] }

    /// The path in `folder` of a remote name ("DCIM/a.jpg").
    func path(_ remote: String) -> String { folder + "/" + remote }

    /// `sftp -b` with `commands` (one a line; a failing one ends the batch): its exit status
    /// (nil when it did not end within `timeout` seconds) and what it printed.
    func batch(_ commands: [String], timeout: Double = 60) throws -> (status: Int32?, output: String) {
        runTool(try sftpArguments(commands), timeout: timeout)
    }

    /// `put LOCAL REMOTE`: the whole file, from its first byte.
    func put(local: String, remote: String) throws -> (status: Int32?, output: String) {
        try batch(["put \(try toolQuoted(local)) \(try toolQuoted(path(remote)))"])
    }

    /// `reput LOCAL REMOTE` (`put -a`): resumes, sending what the remote file lacks past its size.
    func reput(local: String, remote: String) throws -> (status: Int32?, output: String) {
        try batch(["reput \(try toolQuoted(local)) \(try toolQuoted(path(remote)))"])
    }

    /// `scp LOCAL root@127.0.0.1:REMOTE` (OpenSSH's scp speaks SFTP to the server).
    func scp(local: String, remote: String, timeout: Double = 60) -> (status: Int32?, output: String) {
        runTool(
            ["scp", "-q", "-F", "/dev/null", "-P", String(port)] + clientOptions + [
                local, "\(user)@127.0.0.1:" + path(remote),
            ],
            timeout: timeout)
    }

    /// Starts `put LOCAL REMOTE` and kills sftp and its ssh (SIGKILL to their group) once the
    /// file in `folder` holds at least `bytes` bytes (the client runs in slices of 2 ms, stopped
    /// in between, so that it cannot finish unseen), then waits until the server has closed the
    /// file. What is left is a truncated file under its final name, as a connection cut midway
    /// leaves: a prefix of LOCAL, `bytes` long or a few MiB more (what was on its way). Returns
    /// its size. REMOTE must not exist yet (its size is how the cut is timed); LOCAL should be
    /// `bytes` + 16 MiB long or more, or the cut may come too late.
    func putInterrupted(local: String, remote: String, after bytes: Int) throws -> Int {
        let target = path(remote)
        guard fileSize(target) == nil else {
            throw HarnessError("\(target) exists: an interrupted put needs a new name")
        }
        let client = try ToolProcess(
            try sftpArguments(["put \(try toolQuoted(local)) \(try toolQuoted(target))"]),
            log: root + "/sftp-\(clientRuns).log")
        try client.cut(when: target, holds: bytes)
        guard waitUntilClosed(target) else {
            throw HarnessError("\(target) still open after sftp was killed: \(processesHolding(target))\n\(log)")
        }
        return fileSize(target) ?? 0
    }

    /// What sftp and scp are given: this server's key and known host only.
    private var clientOptions: [String] {
        [
            "-i", clientKey, "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\(root)/known_hosts",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
        ]
    }

    private func sftpArguments(_ commands: [String]) throws -> [String] {
        clientRuns += 1
        let batchFile = root + "/batch-\(clientRuns)"
        try commands.map { $0 + "\n" }.joined().write(toFile: batchFile, atomically: true, encoding: .utf8)
        return ["sftp", "-F", "/dev/null", "-P", String(port)] + clientOptions + ["-b", batchFile, "\(user)@127.0.0.1"]
    }

    private func configuration() -> String {
        """
        # Written by the tests' SFTPServer: sftp for one key, as root, on a port of loopback.
        ListenAddress 127.0.0.1:\(port)
        HostKey \(root)/host_key
        PidFile \(root)/sshd.pid
        AuthorizedKeysFile \(root)/authorized_keys
        AllowUsers \(user)
        PermitRootLogin prohibit-password
        PubkeyAuthentication yes
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        UsePAM no
        StrictModes no
        UseDNS no
        Subsystem sftp internal-sftp
        AllowTcpForwarding no
        AllowStreamLocalForwarding no
        AllowAgentForwarding no
        X11Forwarding no
        PermitTunnel no
        PermitUserRC no
        PrintMotd no
        LogLevel VERBOSE

        """
    }
}
