import PTKCLI
import PTKConfiguration
import PTKDaemon
import PTKLog
import PTKSystem

let invocation = DaemonOptions.table.parseOrExit()
// The generator ptkd-folders runs this at boot and at every `systemctl daemon-reload`: the
// configuration is read as at start, the drop-in printed, and nothing else is done.
if invocation.has(.unitPaths) {
    let folders: ServiceFolders
    do { folders = ServiceFolders(try DaemonOptions.configuration(from: invocation)) } catch {
        exitWithUsageError(error.message, program: "ptkd")
    }
    for line in folders.refused { writeToStandardError("ptkd: \(line)") }
    print(folders.dropIn, terminator: "")
    exitProcess(0)
}
let configuration: DaemonConfiguration
do { configuration = try DaemonOptions.configuration(from: invocation).readingPINFile() } catch {
    exitWithUsageError(error.message, program: "ptkd")
}
// A secret given as a flag is in /proc/PID/cmdline, which every local user may read.
if invocation.options.contains(where: { $0.key == .setting(.localSendPIN) }) {
    Log.warning(
        "--localsend-pin puts the PIN where local users can read it (ps); use localsend-pin in \(DaemonOptions.defaultConfigFile) or localsend-pin-file"
    )
}

// Under the unit, the folders systemd was told of at the last daemon-reload are the ones it opens.
for warning in ServiceFolders.startWarnings(
    configuration, unitFingerprint: environment(ServiceFolders.environmentVariable))
{
    Log.warning(warning)
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
handleTerminationSignals(
    wake: daemon.shutdown.pipe,
    secondMessage: "second signal: exiting at once; unfinished uploads are kept for resume",
    secondExitCode: 0)

// The signal handler cannot take the lock that `isRequested` reads, so a watcher thread turns
// the pipe becoming readable into a proper request. Without it the first SIGTERM would be
// ignored (and the readable pipe would keep the accept loop's poll spinning): ptkd does not start.
do {
    try startThread(name: "signals") {
        // A failed wait is taken as the signal: stopping is safer than never stopping.
        _ = try? daemon.shutdown.pipe.waitUntilReadable()
        // Already requested: ptkd is stopping by itself (the accept loop failed) and woke this thread.
        guard !daemon.shutdown.isRequested else { return }
        Log.info("shutting down (a second SIGTERM or SIGINT exits at once)")
        daemon.shutdown.request()
    }
} catch {
    exitWithError(
        "cannot start the thread that watches for SIGTERM and SIGINT: \(error)",
        code: DaemonExitStatus.cannotStart.rawValue)
}
let failure = daemon.run()
let status = (failure?.exitCode ?? .stopped).rawValue
// Every service has stopped and joined its threads (or said it could not in time). What is
// left are the watcher (woken here when the accept loop ended by itself) and the log's writer.
daemon.shutdown.request()
Log.stop(until: .now + .seconds(2))
let ownThreadsJoined = ThreadGroup.process.join(until: .now + .seconds(1))
if daemon.lateServices.isEmpty && ownThreadsJoined {
    // No thread is left but this one: the C library's exit handlers (OpenSSL's clean-up among
    // them) run with nothing under them.
    exitProcess(status)
}
// The last resort: a thread still running may be anywhere, OpenSSL included, and OpenSSL's
// exit handler would pull its state from under it (seen in ptk-send; openssl/openssl#6214). So
// the process leaves without the C library's exit handlers; files are safe (a photo is
// published only once flushed).
let running = (ownThreadsJoined ? [] : ["\(ThreadGroup.process.count) thread(s) of ptkd's own"]) + daemon.lateServices
Log.warning("exiting without the C library's clean-up: \(running.joined(separator: ", ")) still running")
exitProcessNow(status)
