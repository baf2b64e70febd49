/// The most a video (MP4, MOV) may hold before it is kept (`MP4Validator` as it streams in,
/// `MP4Check` on the whole file). A phone's video is a handful of top-level boxes (`ftyp`,
/// `wide`, `mdat`, `moov`, sometimes `free` and `uuid`), 2 to 5 tracks (video, audio, Apple's
/// metadata and timecode) and a `moov` of some 100 KB a minute of 4K at 60 frames a second.
/// A fragmented MP4 has a `moof` and an `mdat` per fragment, a few thousand in a long
/// recording. The limits leave room over those and bound what a hostile file costs
/// (docs/SECURITY.md).
public enum MP4Limits {
    /// Boxes at the top level of the file.
    public static let topLevelBoxes = 65_536
    /// The largest `moov` box: it is read whole into memory to be checked.
    public static let moovBytes: Int64 = 64 << 20
    /// The largest `ftyp` box.
    public static let ftypBytes: Int64 = 4096
    /// Boxes walked inside the `moov` box, at every level.
    public static let moovBoxes = 100_000
    /// Nesting of boxes inside `moov` (`moov/trak/mdia/minf/stbl/stco` is 6 deep).
    public static let depth = 16
    /// Tracks (`trak` boxes).
    public static let tracks = 64
    /// Samples of one track that is not sound of a fixed sample size (a video's frames): FFmpeg
    /// builds 24 bytes of index for each, from the count alone (a fixed-size `stsz` declares
    /// 89 million in 8 KB). 4 million is 18 hours at 60 frames a second. Sound of a fixed
    /// sample size (PCM) may declare more, as many as the file has bytes for.
    public static let samplesPerTrack: UInt64 = 4_000_000
    /// Chunk offsets (`stco`, `co64` entries) in all the tracks together: each is read and
    /// checked against the file's size, by the door and by the indexer (a 63 MiB `stco` of 16.5
    /// million entries cost 8 s of a debug build's time a pass). A chunk holds a sample or
    /// more, so a real file has no more chunks than samples.
    public static let chunks = 4_000_000
}
