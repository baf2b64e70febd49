import PTKCLI
import PTKProtocol
import PTKSystem
import PTKVocabulary

/// The configuration file's text: opened without following a symbolic link or waiting on a
/// FIFO, only a regular file, at most 1 MiB (root's ptk reads it before it takes on the
/// service user). `/dev/null` reads as empty: no settings.
public func readConfigurationFile(_ path: String) throws(SystemError) -> String {
    if path == "/dev/null" { return "" }
    let (fd, _) = try FileDescriptor.openRegularFile(path)
    defer { fd.close() }
    return String(decoding: try fd.readAll(limit: 1 << 20, name: path), as: UTF8.self)
}

extension DaemonConfiguration {
    /// This configuration with the PIN of `localsend-pin-file` read (it overrides `localsend-pin`).
    /// The file must be a regular file, not a symlink (opened without following one, nor
    /// waiting on a FIFO), owned by root or by ptkd's own user, that neither group nor others may
    /// write: a PIN someone else could change is refused. It is read through the descriptor
    /// that was checked, never opened by name again.
    public func readingPINFile() throws(UsageError) -> DaemonConfiguration {
        guard let path = localSendPINFile else { return self }
        var c = self
        let bytes: [UInt8]
        do {
            let (fd, status) = try FileDescriptor.openRegularFile(path)
            defer { fd.close() }
            guard status.owner == 0 || status.owner == geteuidValue() else {
                throw UsageError(
                    "localsend-pin-file \(path) belongs to user \(status.owner), neither root nor ptkd's own: chown it")
            }
            guard status.permissions & 0o022 == 0 else {
                throw UsageError(
                    "localsend-pin-file \(path) may be written by group or others (mode \(String(status.permissions, radix: 8))): chmod go-w it"
                )
            }
            bytes = try fd.readAll(limit: 4096, name: path)
        } catch let error as UsageError {
            throw error
        } catch let error as SystemError where error.code == .tooManySymlinks {
            throw UsageError("localsend-pin-file \(path) is a symlink: give the file itself")
        } catch let error as SystemError where error.code == .noSuchDeviceOrAddress {
            throw UsageError("localsend-pin-file \(path) is not a regular file")
        } catch {
            throw UsageError("cannot read localsend-pin-file: \(error)")
        }
        let line =
            String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
        c.localSendPIN = try checkedPIN(String(line).trimmingSpaces, "localsend-pin-file \(path)")
        return c
    }
}
