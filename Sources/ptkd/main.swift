import PTKCLI
import PTKDaemon
import PTKConfiguration
import PTKSystem

let invocation = DaemonOptions.table.parseOrExit()
let configuration: DaemonConfiguration
do { configuration = try DaemonOptions.configuration(from: invocation) } catch {
    exitWithUsageError(error.message, program: "ptkd")
}

let daemon: Daemon
do {
    daemon = try Daemon(configuration: configuration)
} catch {
    exitWithError(error.description, code: error.exitCode.rawValue)
}

// The first SIGINT or SIGTERM only writes a byte to the shutdown pipe (async-signal-safe); the
// accept loop and every waiting session see the pipe become readable. A second one exits at once.
ignoreBrokenPipeSignal()
handleTerminationSignals(wake: daemon.shutdown.pipe,
                         secondMessage: "second signal: exiting at once; unfinished uploads are kept for resume",
                         secondExitCode: 0)

// The signal handler cannot take the lock that `isRequested` reads, so a watcher thread turns
// the pipe becoming readable into a proper request. Without it the first SIGTERM would be
// ignored (and the readable pipe would keep the accept loop's poll spinning): ptkd does not start.
do {
    try startThread {
        // A failed wait is taken as the signal: stopping is safer than never stopping.
        _ = try? daemon.shutdown.pipe.waitUntilReadable()
        Log.info("shutting down (a second SIGTERM or SIGINT exits at once)")
        daemon.shutdown.request()
    }
} catch {
    exitWithError("cannot start the thread that watches for SIGTERM and SIGINT: \(error)", code: DaemonExitStatus.cannotStart.rawValue)
}
let failure = daemon.run()
Log.flush(until: .now + .seconds(2))
let status = (failure?.exitCode ?? .stopped).rawValue
// Leave without the C library's exit handlers: sessions still open after the grace period may be
// anywhere, and even a thread that has said it is done (a session, the indexer) may still be
// running OpenSSL's clean-up of the thread as it ends, which OpenSSL's exit handler would pull
// from under it (seen in ptk-send; openssl/openssl#6214).
exitProcessNow(status)
