import PTKFuzz

#if FUZZING
/// libFuzzer's entry point (built with -DFUZZING and --sanitize=fuzzer; see fuzz/run.sh).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTargets.png(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
import PTKFuzzReplay

/// Without libFuzzer: replays the files and folders named on the command line.
@main
struct Replay {
    static func main() { replayCommandLine(FuzzTargets.png) }
}
#endif
