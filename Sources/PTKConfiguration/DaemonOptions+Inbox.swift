import PTKCLI

extension DaemonOptions {
    /// The settings of the folders ptkd watches (issue 56): inboxes, drop folders, and how
    /// they are watched.
    static let inboxSettings: [DaemonOption] = [
        DaemonOption(
            .inbox, value: "PATH",
            help:
                "a folder another program keeps in sync (Syncthing): its photos are taken in, the sources left as they are; repeatable",
            defaultIsValue: false, default: { _ in "none" }
        ) { c, v throws(UsageError) in
            c.inboxes.append(try Parse.folder(v, .inbox))
        },
        DaemonOption(
            .dropFolder, value: "PATH",
            help:
                "a folder files are dropped into (Samba, sftp): photos are moved in once verified, anything else stays; repeatable",
            defaultIsValue: false, default: { _ in "none" }
        ) { c, v throws(UsageError) in
            c.dropFolders.append(try Parse.folder(v, .dropFolder))
        },
        DaemonOption(
            .inboxScanInterval, value: "DURATION",
            help: "scan every inbox and drop folder this often, besides watching them; s, m, h suffixes",
            default: { durationText($0.inboxScanInterval) }
        ) { c, v throws(UsageError) in
            let d = try Parse.duration(v, .inboxScanInterval, expected: "expected a duration, such as 10m")
            guard d >= .seconds(1) else { throw invalid(v, .inboxScanInterval, "expected at least 1s") }
            c.inboxScanInterval = d
        },
        DaemonOption(
            .inboxSettle, value: "DURATION",
            help: "take a file once unchanged this long and no longer open for writing; s, m suffixes",
            default: { durationText($0.inboxSettle) }
        ) { c, v throws(UsageError) in
            c.inboxSettle = try Parse.duration(v, .inboxSettle, expected: "expected a duration, such as 5s")
        },
        DaemonOption(
            .inboxMounts, value: "yes|no",
            help: "enter a folder below an inbox or drop folder that is a mount point of its own",
            commandLine: false, default: { $0.inboxMounts ? "yes" : "no" }
        ) { c, v throws(UsageError) in
            c.inboxMounts = try Parse.onOff(v, .inboxMounts, expected: "expected yes or no", digits: true)
        },
        DaemonOption(
            .inboxLinks, value: "yes|no",
            help:
                "take an inbox's photos as hard links to their sources (no byte copied): only for a writer that replaces files by rename and never writes in place (Syncthing); else a reflink or a copy",
            default: { $0.inboxLinks ? "yes" : "no" }
        ) { c, v throws(UsageError) in
            c.inboxLinks = try Parse.onOff(v, .inboxLinks, expected: "expected yes or no", digits: true)
        },
    ]
}
