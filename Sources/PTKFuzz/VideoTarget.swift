import PTKStore

extension FuzzTargets {
    /// The video checks over arbitrary bytes: the streaming box walk (`MP4Validator`), fed in
    /// pieces whose sizes come from the input's first byte, must agree with a whole-buffer run;
    /// the `moov` walk (`MP4Check`) of the same bytes must end, without a crash, in a refusal or
    /// a report within its limits.
    public static func video(_ data: UnsafeRawBufferPointer) {
        agreesHoweverSplit(data, "MP4") { MP4Validator(totalSize: $0) }
        guard data.count > 1 else { return }
        let bytes = Array(data[1...])
        let checked = Result { () throws(FormatError) -> MP4Check.Report in
            try MP4Check.check(size: Int64(bytes.count)) { (offset, count) throws(FormatError) -> [UInt8] in
                guard offset >= 0, offset <= Int64(bytes.count), count <= bytes.count - Int(offset) else {
                    throw FormatError("read past the end")
                }
                return Array(bytes[Int(offset)..<Int(offset) + count])
            }
        }
        if case .success(let report) = checked {
            precondition((1...MP4Limits.tracks).contains(report.tracks), "a movie passed with \(report.tracks) tracks")
            precondition([0, 90, 180, 270].contains(report.rotation), "a rotation of \(report.rotation) degrees")
        }
    }
}
