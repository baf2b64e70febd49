/// The picture size an HEVC sequence parameter set declares (ITU-T H.265 section 7.3.2.2:
/// `pic_width_in_luma_samples`, `pic_height_in_luma_samples`), which is what a decoder
/// allocates, whatever the HEIF's `ispe` says. Only the fields before the size are read.
public enum HEVCPictureSize {
    /// An `hvcC` box's content (ISO/IEC 14496-15 section 8.3.3): the length of the NAL unit
    /// length fields it declares for the item's data (1, 2 or 4), and every NAL unit of its
    /// arrays that libheif 1.15 hands the decoder, in order: all but empty ones, whatever type
    /// their array claims (the decoder goes by each unit's own header).
    public static func configuration(_ hvcC: ArraySlice<UInt8>) throws(FormatError) -> (
        lengthSize: Int, units: [ArraySlice<UInt8>]
    ) {
        let b = Array(hvcC)
        var r = ByteReader(b, 0..<b.count, box: "hvcC")
        _ = try r.take(21)
        let lengthSize = Int(try r.u8() & 3) + 1
        let arrays = Int(try r.u8())
        var units: [ArraySlice<UInt8>] = []
        for _ in 0..<arrays {
            _ = try r.u8()  // array_completeness, reserved, NAL_unit_type: not what the decoder reads
            let count = Int(try r.u16())
            for _ in 0..<count {
                let nal = try r.take(Int(try r.u16()))
                if !nal.isEmpty { units.append(nal) }
            }
        }
        return (lengthSize, units)
    }

    /// The width and height an SPS NAL unit (from its 2-byte header on, escaped as in the
    /// file) declares, read as libde265 reads it (`HEVCUnit`).
    public static func of(sps nal: ArraySlice<UInt8>) throws(FormatError) -> (width: UInt64, height: UInt64) {
        try of(sps: HEVCUnit(nal))
    }

    /// The width and height the unescaped SPS `unit` declares.
    public static func of(sps unit: HEVCUnit) throws(FormatError) -> (width: UInt64, height: UInt64) {
        var bits = BitReader(unit.payload)
        _ = try bits.read(4)  // sps_video_parameter_set_id
        let subLayers = Int(try bits.read(3))  // sps_max_sub_layers_minus1
        _ = try bits.read(1)  // sps_temporal_id_nesting_flag
        // profile_tier_level(1, sps_max_sub_layers_minus1), section 7.3.3.
        _ = try bits.read(88)  // general profile: space, tier, idc, compatibility flags, constraint flags
        _ = try bits.read(8)  // general_level_idc
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<subLayers {
            profilePresent.append(try bits.read(1) == 1)
            levelPresent.append(try bits.read(1) == 1)
        }
        if subLayers > 0 { for _ in subLayers..<8 { _ = try bits.read(2) } }
        for i in 0..<subLayers {
            if profilePresent[i] { _ = try bits.read(88) }
            if levelPresent[i] { _ = try bits.read(8) }
        }
        _ = try bits.exponentialGolomb()  // sps_seq_parameter_set_id
        let chroma = try bits.exponentialGolomb()  // chroma_format_idc
        if chroma == 3 { _ = try bits.read(1) }  // separate_colour_plane_flag
        return (try bits.exponentialGolomb(), try bits.exponentialGolomb())
    }
}

/// Reads bits, most significant first, from unescaped bytes.
struct BitReader {
    private let bytes: ArraySlice<UInt8>
    private var bit = 0

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    mutating func read(_ count: Int) throws(FormatError) -> UInt64 {
        guard bit + count <= bytes.count * 8 else { throw FormatError("a sequence parameter set ends early") }
        var v: UInt64 = 0
        for _ in 0..<count {
            v = v << 1 | UInt64(bytes[bytes.startIndex + (bit >> 3)] >> (7 - UInt8(bit & 7)) & 1)
            bit += 1
        }
        return v
    }

    /// ue(v): leading zeros, a one, then as many bits; at most 32 leading zeros.
    mutating func exponentialGolomb() throws(FormatError) -> UInt64 {
        var zeros = 0
        while try read(1) == 0 {
            zeros += 1
            guard zeros <= 32 else { throw FormatError("a sequence parameter set holds a number over 32 bits") }
        }
        return (UInt64(1) << zeros) - 1 + (try read(zeros))
    }
}
