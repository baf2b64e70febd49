import Foundation
import Glibc
import PTKSystem
import PTKTestSupport

/// Whether `SambaShare` can run here: root (smbd switches to the user it authenticates), smbd,
/// smbclient, smbpasswd, and the VFS modules the share names (Debian's samba-vfs-modules).
let canRunSamba =
    geteuid() == 0 && haveProgram("/usr/sbin/smbd") && haveProgram("smbclient") && haveProgram("smbpasswd")
    && !sambaVFSModuleDirectories().isEmpty

/// The folders that hold Samba's fruit.so, catia.so and streams_xattr.so.
private func sambaVFSModuleDirectories() -> [String] {
    ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"].map { $0 + "/samba/vfs" }
        .filter { dir in ["fruit.so", "catia.so", "streams_xattr.so"].allSatisfy { access(dir + "/" + $0, R_OK) == 0 } }
}

/// A real smbd serving one share, `[drop]` at `folder`, on a free port of 127.0.0.1 only
/// (`interfaces = lo`, `bind interfaces only`, no NetBIOS, no RPC helpers started), with the
/// share as a drop folder's recipe has it: `vfs objects = catia fruit streams_xattr` for macOS
/// clients, the litter vetoed (`veto files`, `delete veto files`), writable. Its configuration,
/// databases (private, lock, state, cache, pid and ncalrpc folders) and log are in `root`,
/// removed with it. The one Samba user is root, in this server's own passdb (nothing is added
/// to the machine's users): smbd 4.17 accepts it, and so reaches any folder a test gives, and
/// what it writes is root's, as the tests' other files are. Clients: `smbclient` through
/// `put`, `command` and `putInterrupted`.
final class SambaShare: @unchecked Sendable {
    /// The share's temporary folder (configuration, databases, logs); removed by `deinit`.
    let root: String
    /// The shared folder.
    let folder: String
    /// The share's name (`//127.0.0.1/NAME`).
    let share: String
    /// The TCP port smbd listens on, on 127.0.0.1 (and ::1).
    let port: UInt16
    /// The Samba user and its password.
    let user = "root"
    let password: String
    var configPath: String { root + "/smb.conf" }
    var logPath: String { root + "/smbd.log" }
    private var server: ToolProcess?
    private var clientRuns = 0

    /// Writes the configuration, sets the user's Samba password and starts smbd; returns once it
    /// accepts connections.
    init(folder: String, share: String = "drop") throws {
        port = try freeLoopbackPort()
        root = makeTemporaryDirectory("ptk-samba")
        self.folder = folder
        self.share = share
        password = randomBytes(12).map { String(format: "%02x", $0) }.joined()
        var started: ToolProcess?
        do {
            for dir in ["private", "lock", "state", "cache", "pid", "ncalrpc"] {
                try FileManager.default.createDirectory(atPath: root + "/" + dir, withIntermediateDirectories: true)
            }
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try configuration().write(toFile: configPath, atomically: true, encoding: .utf8)
            try "username = \(user)\npassword = \(password)\n".write(
                toFile: root + "/credentials", atomically: true, encoding: .utf8)
            chmod(root + "/credentials", 0o600)
            // smbpasswd reads the new password twice from standard input (-s).
            let added = runTool([
                "sh", "-c", #"printf '%s\n%s\n' "$1" "$1" | smbpasswd -c "$2" -a -s "$3""#, "sh", password, configPath,
                user,
            ])
            guard added.status == 0 else { throw HarnessError("smbpasswd -a \(user): \(added.output)") }
            let smbd = try ToolProcess(
                [
                    "/usr/sbin/smbd", "--foreground", "--no-process-group", "--debug-stdout", "--debuglevel=1",
                    "--configfile=\(configPath)",
                ], log: root + "/smbd.log")
            started = smbd
            let address = SocketAddress(numericHost: "127.0.0.1", port: port)!
            let up = eventually(20) {
                // Polled: refused until smbd listens.
                if let s = try? Socket.connect(to: address, deadline: .now + .seconds(1)) {
                    s.close()
                    return true
                }
                return smbd.hasEnded
            }
            guard up, !smbd.hasEnded else {
                throw HarnessError("smbd did not start\n\(lastLines(smbd.log))")
            }
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

    /// Stops smbd and every worker it started (SIGTERM to its process group, SIGKILL after 5 s).
    func stop() { server?.stop() }

    /// smbd's log, its last lines.
    var log: String { lastLines((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "(no log)") }

    /// smbd and its workers.
    var processIDs: [pid_t] { server?.processTree ?? [] }

    /// The path in `folder` of a name in the share ("DCIM/a.jpg").
    func path(_ remote: String) -> String { folder + "/" + remote }

    /// `smbclient //127.0.0.1/SHARE -c COMMANDS` as root: its exit status (nil when it did not
    /// end within `timeout` seconds) and what it printed.
    func command(_ commands: String, timeout: Double = 60) -> (status: Int32?, output: String) {
        runTool(clientArguments(commands), timeout: timeout)
    }

    /// `put LOCAL REMOTE` (REMOTE relative to the share; its folder must exist: `mkdir`).
    func put(local: String, remote: String, timeout: Double = 60) throws -> (status: Int32?, output: String) {
        command("put \(try toolQuoted(local)) \(try toolQuoted(remote))", timeout: timeout)
    }

    /// Starts `put LOCAL REMOTE` and kills smbclient (SIGKILL) once the file in the share holds
    /// at least `bytes` bytes (the client runs in slices of 2 ms, stopped in between, so that it
    /// cannot finish unseen), then waits until smbd has closed the file. What is left is a
    /// truncated file under its final name, as a laptop closed mid-copy leaves: a prefix of
    /// LOCAL, `bytes` long or a few MiB more (what was on its way: smbclient writes up to 8 MiB
    /// a request). Returns its size. REMOTE must not exist yet (its size is how the cut is
    /// timed); LOCAL should be `bytes` + 16 MiB long or more, or the cut may come too late.
    func putInterrupted(local: String, remote: String, after bytes: Int) throws -> Int {
        let target = path(remote)
        guard fileSize(target) == nil else {
            throw HarnessError("\(target) exists: an interrupted put needs a new name")
        }
        clientRuns += 1
        let client = try ToolProcess(
            clientArguments("put \(try toolQuoted(local)) \(try toolQuoted(remote))", smallBuffer: true),
            log: root + "/smbclient-\(clientRuns).log")
        try client.cut(when: target, holds: bytes)
        guard waitUntilClosed(target) else {
            throw HarnessError("\(target) still open after smbclient was killed: \(processesHolding(target))\n\(log)")
        }
        return fileSize(target) ?? 0
    }

    /// smbclient's arguments; `smallBuffer` gives its socket a send buffer of 128 KiB, so that
    /// little is still on its way to smbd when a stopped client is killed.
    private func clientArguments(_ commands: String, smallBuffer: Bool = false) -> [String] {
        [
            "smbclient", "//127.0.0.1/\(share)", "--port=\(port)", "--configfile=\(configPath)",
            "--authentication-file=\(root)/credentials",
        ] + (smallBuffer ? ["--socket-options=SO_SNDBUF=131072"] : []) + ["--command=\(commands)"]
    }

    private func configuration() -> String {
        """
        # Written by the tests' SambaShare: one share on a port of loopback, everything in \(root).
        [global]
            server role = standalone server
            smb ports = \(port)
            interfaces = lo
            bind interfaces only = yes
            disable netbios = yes
            private dir = \(root)/private
            lock directory = \(root)/lock
            state directory = \(root)/state
            cache directory = \(root)/cache
            pid directory = \(root)/pid
            ncalrpc dir = \(root)/ncalrpc
            passdb backend = tdbsam:\(root)/private/passdb.tdb
            rpc start on demand helpers = no
            load printers = no
            printing = bsd
            printcap name = /dev/null
            disable spoolss = yes
            map to guest = never
            restrict anonymous = 2
            server min protocol = SMB2_10
            client min protocol = SMB2_10
            log level = 1

        [\(share)]
            path = \(folder)
            read only = no
            vfs objects = catia fruit streams_xattr
            veto files = /._*/.DS_Store/Thumbs.db/desktop.ini/
            delete veto files = yes

        """
    }
}
