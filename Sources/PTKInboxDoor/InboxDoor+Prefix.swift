import PTKLibrary
import PTKSystem
import PTKVocabulary

extension InboxDoor {
    /// The reason a file is not taken when it is the start of the photo taken from its path
    /// before (`record`): an interrupted copy of a photo already kept, made again over the name
    /// the complete one came from. Nothing of it is stored (the complete file is the photo) and
    /// nothing is replaced; it is left where it is. Nil when it is not such a start: longer,
    /// as long, empty, other bytes, or the photo gone from the photos directory.
    func startOfTakenPhoto(_ fd: FileDescriptor, _ status: FileStatus, _ record: InboxSourceRecord) -> String? {
        guard status.size > 0, status.size < record.size, let photo = record.photo else { return nil }
        // A photo removed since, or unreadable: nothing to compare with, judged as any file.
        guard let (kept, keptStatus) = try? FileDescriptor.openRegularFile(settings.directory + "/" + photo) else {
            return nil
        }
        defer { kept.close() }
        guard keptStatus.size == record.size, startsTheSame(fd, kept, count: status.size) else { return nil }
        return
            "it is the first \(formatBytes(Double(status.size))) of the photo \(quotedForTerminal(photo)), taken from this path before (an interrupted copy?); nothing of it is stored"
    }

    /// True when the first `count` bytes of `a` and `b` are equal (read whole, a MiB at a time).
    func startsTheSame(_ a: FileDescriptor, _ b: FileDescriptor, count: Int64) -> Bool {
        let step = 1 << 20
        var left = [UInt8](repeating: 0, count: step)
        var right = [UInt8](repeating: 0, count: step)
        var position: Int64 = 0
        while position < count {
            if isStopping { return false }
            let want = Int(min(Int64(step), count - position))
            guard let n = read(a, at: position, into: &left, want), n == want,
                let m = read(b, at: position, into: &right, want), m == want, left[..<n] == right[..<m]
            else { return false }
            position += Int64(n)
        }
        return true
    }

    /// Reads `want` bytes at `offset` into `buffer` (fewer at the end of the file); nil when
    /// the read fails.
    private func read(_ fd: FileDescriptor, at offset: Int64, into buffer: inout [UInt8], _ want: Int) -> Int? {
        // A read that fails answers nil: the two files are then judged not to start the same.
        try? buffer.withUnsafeMutableBytes { b throws(SystemError) in
            try fd.readFully(fromAbsoluteOffset: offset, into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]))
        }
    }
}
