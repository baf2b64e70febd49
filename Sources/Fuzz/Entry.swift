import PTKFuzz
import PTKSystem

/// The target `PTK_FUZZ_TARGET` names (fuzz/run.sh sets it), or nil.
private func chosenTarget() -> ((UnsafeRawBufferPointer) -> Void)? {
    environment("PTK_FUZZ_TARGET").flatMap(FuzzTargets.target(named:))
}

#if FUZZING
    nonisolated(unsafe) private var target: ((UnsafeRawBufferPointer) -> Void)?

    /// libFuzzer calls this once, before the first input.
    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzInitialize(
        _ argc: UnsafeMutablePointer<CInt>?,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
    ) -> CInt {
        guard let chosen = chosenTarget() else {
            writeToStandardError("set PTK_FUZZ_TARGET to one of: \(FuzzTargets.names.joined(separator: ", "))")
            exitProcess(64)
        }
        target = chosen
        return 0
    }

    /// libFuzzer's entry point (built with -DFUZZING and --sanitize=fuzzer; see fuzz/run.sh).
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        target?(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
#else
    import PTKFuzzReplay

    /// Without libFuzzer: replays the files and folders named on the command line through the
    /// target PTK_FUZZ_TARGET names.
    @main
    struct Replay {
        static func main() {
            guard let chosen = chosenTarget() else {
                writeToStandardError("set PTK_FUZZ_TARGET to one of: \(FuzzTargets.names.joined(separator: ", "))")
                exitProcess(64)
            }
            replayCommandLine(chosen)
        }
    }
#endif
