import PTKTestTags
import Testing

@testable import PTKStore

@Suite("The format checks' shared cursor", .tags(.unit))
struct StreamCursorTests {
    @Test("a field gathered across any split of the bytes, the offset counted once per byte")
    func gatherAcrossSplits() {
        let bytes: [UInt8] = Array(1...10)
        for cut in 0...bytes.count {
            var cursor = StreamCursor(totalSize: nil, fieldCapacity: 4)
            var taken = 0
            var whole = false
            for piece in [Array(bytes[..<cut]), Array(bytes[cut...])] where !whole {
                piece.withUnsafeBytes { b in
                    var i = 0
                    if i < b.count { whole = cursor.gather(b, &i, until: 6) }
                    taken += i
                }
            }
            #expect(whole, "cut at \(cut)")
            #expect(taken == 6, "cut at \(cut): no byte past the field is taken")
            #expect(cursor.field == [1, 2, 3, 4, 5, 6])
            #expect(cursor.position == 6)
        }
    }

    @Test("a body passed in pieces: what is left, what was passed, kept only when asked")
    func passBodies() {
        var cursor = StreamCursor(totalSize: 100, fieldCapacity: 4)
        let bytes: [UInt8] = [9, 8, 7, 6, 5]
        bytes.withUnsafeBytes { b in
            var i = 1
            let (passed, left) = cursor.pass(b, &i, remaining: 10, keep: true)
            #expect(Array(passed) == [8, 7, 6, 5])
            #expect(left == 6)
            #expect(i == 5)
            var j = 0
            let second = cursor.pass(b, &j, remaining: 2, keep: false)
            #expect(Array(second.passed) == [9, 8])
            #expect(second.left == 0)
            #expect(j == 2)
        }
        #expect(cursor.field == [8, 7, 6, 5])
        #expect(cursor.position == 6)
        cursor.clearField()
        #expect(cursor.field.isEmpty)
        #expect(cursor.position == 6)
    }

    @Test("fits: within the announced size, never an overflow for a size near Int64.max")
    func fits() {
        let cursor = StreamCursor(totalSize: 1000, fieldCapacity: 0)
        #expect(cursor.fits(from: 0, count: 1000))
        #expect(!cursor.fits(from: 1, count: 1000))
        #expect(!cursor.fits(from: 24, count: Int64.max))
        #expect(!cursor.fits(from: 1001, count: 0))
        #expect(StreamCursor(totalSize: nil, fieldCapacity: 0).fits(from: 24, count: Int64.max))
    }
}
