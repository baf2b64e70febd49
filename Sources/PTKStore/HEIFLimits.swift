/// The most a HEIF may hold before libheif is asked to open it (`HEIFCheck`). libheif 1.15
/// has no limits of its own but the image side: opening a file costs it time that grows with
/// the square of its items (1,024 tiles 0.3 s, 4,096 tiles 3.4 s, 12,996 tiles 9.4 s on one
/// core of the machine these were measured on) and memory for every box. An iPhone's 48 MP
/// HEIC is a grid of 192 tiles of 512x512 (16 x 12) with some 250 items in all (a gain map's
/// and a depth map's grids, a thumbnail, EXIF, XMP); its 12 MP one 48 tiles; a 200 MP photo in
/// 512x512 tiles needs 768. The limits leave room over those (docs/SECURITY.md).
public enum HEIFLimits {
    /// Boxes at the top level of the file (ftyp, meta, mdat and a few others in real files):
    /// libheif keeps every one, 8 bytes of file making some 130 bytes of memory.
    public static let topLevelBoxes = 256
    /// Boxes read inside the meta box, at every level (item infos, references, properties).
    public static let metaBoxes = 16_384
    /// Items (`iinf` entries; also what `iloc` and `ipma` may list).
    public static let items = 2_048
    /// Item references, summed over `iref` (each tile is one `dimg` reference of its grid).
    public static let references = 4_096
    /// Properties in `ipco` (real files have a few dozen).
    public static let properties = 4_096
    /// Data extents of all items (each tile has one).
    public static let extents = 8_192
    /// Tiles of one grid, or images of one overlay.
    public static let tiles = 1_024
    /// NAL units read in one image's data (a tile has a few: its parameter sets and its
    /// slice), and in the file.
    public static let nalUnitsPerImage = 4_096
    /// NAL units read in the whole file, all images together.
    public static let nalUnits = 65_536
    /// How far a coded image's sequence parameter set may declare it larger than its `ispe`
    /// on each side (coded sizes round up to the coding block; a 300x200 image is coded 304x200).
    public static let codedMargin: UInt64 = 64
    /// Slice segments of one coded image that a thumbnail is still decoded from. libde265
    /// decodes each segment from where it says it starts to where its data says it ends, over
    /// what others decoded before: each may cost a decode of the whole picture (a 1 MP picture
    /// followed by 200 segments that start it again took 200 times one). x265, as heif-enc
    /// uses it, codes a picture in one; encoders that cut one in several use a few per
    /// picture or tile. A file over the limit is kept, but gets no thumbnail.
    public static let slicesPerImage = 16
}
