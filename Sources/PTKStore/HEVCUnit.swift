/// The start of one HEVC NAL unit as libde265 1.0 reads it (ITU-T H.265 section 7.3.1): its
/// emulation prevention bytes (0x03 after two zero bytes) taken out from its first byte on,
/// the 2-byte header included (libde265's `remove_stuffing_bytes`; a reader that starts
/// counting zeros after the header would read another unit when the header's second byte is
/// zero), then its type and, for a slice segment, whether it starts a picture.
public struct HEVCUnit {
    /// The unit's bytes, unescaped, as far as they were given.
    public let bytes: [UInt8]

    /// `prefix`: the unit's first bytes (all of it, or enough for what is asked of it).
    public init(_ prefix: ArraySlice<UInt8>) {
        var out: [UInt8] = []
        out.reserveCapacity(prefix.count)
        var zeros = 0
        for b in prefix {
            if zeros >= 2 && b == 3 {
                zeros = 0
                continue
            }
            zeros = b == 0 ? zeros + 1 : 0
            out.append(b)
        }
        bytes = out
    }

    /// nal_unit_type (six bits after the forbidden zero bit); nil without a header.
    public var type: UInt8? { bytes.count >= 2 ? bytes[0] >> 1 & 0x3F : nil }

    /// The NAL unit type of a sequence parameter set.
    public static let spsType: UInt8 = 33

    /// A slice segment (types 0 to 31, reserved ones included: libde265 reads each as one).
    public var isSlice: Bool { (type ?? 255) < 32 }

    /// first_slice_segment_in_pic_flag, the first bit after a slice segment's header: a new
    /// picture starts with it. Nil when the unit is not a slice or its payload is empty.
    public var startsPicture: Bool? {
        guard isSlice, bytes.count >= 3 else { return nil }
        return bytes[2] & 0x80 != 0
    }

    /// The payload after the 2-byte header.
    public var payload: ArraySlice<UInt8> { bytes.dropFirst(2) }
}
