import PTKCLI
import PTKDaemon
import PTKSystem

let version = "0.1.0"

let options: [OptionSpec] = [
    OptionSpec("dir", value: "PATH", help: "received-photos directory (default: $STATE_DIRECTORY/received, /var/lib/ptk/received as root, else ~/.local/share/ptk/received)"),
    OptionSpec("port", value: "N", help: "TCP port (default 47850; 0 picks a free port and logs it)"),
    OptionSpec("listen", value: "ADDR", help: "address to listen on; repeatable (default: every IPv6 and IPv4 address)"),
    OptionSpec("name", value: "NAME", help: "display name sent to senders (default: the host name)"),
    OptionSpec("window", value: "N", help: "chunks a sender may have unacknowledged, 1-64 (default 64)"),
    OptionSpec("max-file-size", value: "SIZE", help: "largest photo accepted; K, M, G suffixes (default 512M)"),
    OptionSpec("max-sessions", value: "N", help: "sessions served at once; beyond it ERROR busy (default 32)"),
    OptionSpec("max-sessions-per-address", value: "N", help: "sessions one IP address may hold; beyond it ERROR busy (default 8)"),
    OptionSpec("file-mode", value: "MODE", help: "permission bits of saved photos, octal (default 0644)"),
    OptionSpec("min-free", value: "SIZE", help: "free space to keep on the file system (default 100M)"),
    OptionSpec("idle-timeout", value: "SECONDS", help: "close a session silent this long (default 30)"),
    OptionSpec("handshake-timeout", value: "SECONDS", help: "time a new connection has to send HELLO (default 10)"),
    OptionSpec("partial-max-age", value: "DURATION", help: "delete unfinished uploads older than this; s, m, h, d suffixes (default 24h)"),
    OptionSpec("no-mdns", help: "do not advertise over mDNS"),
    OptionSpec("config", value: "FILE", help: "read settings from FILE ('key = value' lines; flags override it; default /etc/ptk/ptkd.conf if it exists)"),
    OptionSpec("help", short: "h", help: "show this help and exit"),
    OptionSpec("version", help: "show the version and exit"),
]

let usage = """
    Usage: ptkd [OPTIONS]

    Receives PNG photos from ptk-send over protocol v1 and saves them in the
    received-photos directory.

    Options:
    \(helpLines(for: options))

    Exit status: 0 stopped cleanly (SIGINT/SIGTERM), 64 usage or configuration error,
    70 the accept loop failed, 71 cannot listen, 73 received-photos directory not usable.
    """

let parsed = parseCommandLineOrExit(options: options, program: "ptkd", version: version, usage: usage)
if let extra = parsed.positionals.first {
    exitWithUsageError("unexpected argument '\(extra)'", program: "ptkd")
}

var configuration = DaemonConfiguration()
do {
    let defaultConfig = "/etc/ptk/ptkd.conf"
    var configPath = parsed.last("config")
    if configPath == nil && fileExists(defaultConfig) { configPath = defaultConfig }
    if let path = configPath {
        let text: String
        do { text = try readTextFile(path) } catch { exitWithError("cannot read configuration file: \(error)", code: 64) }
        try configuration.apply(configFile: text, path: path)
    }
    for (name, value) in parsed.options where name != "config" {
        try configuration.apply(name, value)
    }
} catch {
    exitWithUsageError(error.message, program: "ptkd")
}

let daemon: Daemon
do {
    daemon = try Daemon(configuration: configuration)
} catch {
    exitWithError(error.description, code: error.exitCode)
}

// The first SIGINT or SIGTERM only writes a byte to the shutdown pipe (async-signal-safe); the
// accept loop and every waiting session see the pipe become readable. A second one exits at once.
ignoreBrokenPipeSignal()
handleTerminationSignals(wake: daemon.shutdown.pipe,
                         secondMessage: "second signal: exiting at once; unfinished uploads are kept for resume",
                         secondExitCode: 0)

// The signal handler cannot take the lock that `isRequested` reads, so a watcher thread turns
// the pipe becoming readable into a proper request.
try? startThread {
    _ = try? daemon.shutdown.pipe.waitUntilReadable()
    Log.info("shutting down (a second SIGTERM or SIGINT exits at once)")
    daemon.shutdown.request()
}
let failure = daemon.run()
Log.flush(until: .now + 2)
let status = failure?.exitCode ?? 0
// Sessions still open after the grace period may be anywhere: leave without the C library's exit
// handlers. Otherwise every thread that used OpenSSL has ended, and a normal exit is safe.
if daemon.activeSessions > 0 { exitProcessNow(status) }
exitProcess(status)
