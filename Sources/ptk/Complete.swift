import PTKConfiguration
import PTKLibrary
import PTKSystem
import PTKTrust
import PTKVocabulary

/// Prints the values shell completion offers for `words` ("photos", "devices pending",
/// "devices trusted", "app-passwords"), one a line. Errors print nothing: a Tab must never print an error.
/// `directory` is the photos directory as root's ptk opened it (nil when not run as root).
func complete(_ words: [String], configuration: DaemonConfiguration, directory: FileDescriptor?) {
    switch words.first {
    case "photos":
        // No library (yet, or not readable by this user): nothing to offer.
        // A Tab waits at most two seconds for a lock another process holds, and says nothing.
        guard
            let library = try? PhotoLibrary(
                directory: configuration.effectiveDirectory, opened: directory, create: false,
                lockPatience: LockPatience(limit: .seconds(2))),
            let names = try? library.names()
        else { return }  // an index being rebuilt: nothing now
        // A name with a terminal control (one the service user planted in the index) is not offered.
        writeStandardOutput(
            names.filter { !$0.unicodeScalars.contains(where: isTerminalControl) }.map { $0 + "\n" }.joined())
    case "devices":
        let trust = TrustStore(directory: configuration.effectiveStateDirectory)
        // A trust file that cannot be read offers nothing.
        let ids =
            words.dropFirst().first == "trusted"
            ? trust.trusted().map(\.id.description) : ((try? trust.pending()) ?? []).map(\.id.description)
        writeStandardOutput(ids.map { $0 + "\n" }.joined())
    case "app-passwords":
        // A file that cannot be read offers nothing. Names are of A-Z a-z 0-9 . _ - only.
        let names = ((try? AppPasswords(directory: configuration.webDirectory).list()) ?? []).map(\.name)
        writeStandardOutput(names.map { $0 + "\n" }.joined())
    default:
        return
    }
}
