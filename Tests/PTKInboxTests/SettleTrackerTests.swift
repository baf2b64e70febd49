import PTKInbox
import PTKTestTags
import PTKTime
import Testing

/// An observation of a file of `size` bytes written at `written` (seconds), inode `inode`.
private func seen(
    _ size: Int64 = 1000, written: Int64 = 1, inode: UInt64 = 7, device: UInt64 = 2049, open: Bool? = false
) -> SettleTracker.Observation {
    SettleTracker.Observation(
        size: size, modified: written * 1_000_000_000, changed: written * 1_000_000_000 + 5, device: device,
        inode: inode, openForWriting: open)
}

/// The instant `s` seconds after the tests' start.
private func at(_ s: Double) -> Instant { Instant(seconds: 1000 + s) }

@Suite("Settling: a file is checked once still, taken once whole", .tags(.unit))
struct SettleTrackerTests {
    @Test("the defaults: 5 s to settle, a day before a truncated file is reported")
    func defaults() {
        let tracker = SettleTracker()
        #expect(tracker.settle == .seconds(5))
        #expect(tracker.reportAfter == .seconds(86_400))
        #expect(SettleTracker(settle: .seconds(-3), reportAfter: .seconds(-1)).settle == .zero)
    }

    @Test("first seen: wait the settle time; unchanged after it: check; whole and unchanged: take")
    func happyPath() {
        var tracker = SettleTracker()
        #expect(tracker.observe(seen(), at: at(0)) == .wait(until: at(5)))
        #expect(tracker.observe(seen(), at: at(3)) == .wait(until: at(5)), "an early look still waits for the same end")
        #expect(tracker.observe(seen(), at: at(5)) == .check)
        #expect(tracker.observe(seen(), at: at(5.5)) == .check, "asked again while the check is pending")
        #expect(tracker.checked(.whole, observed: seen(), at: at(6)) == .take)
        #expect(tracker.observe(seen(), at: at(700)) == .waitForChange, "a rescan takes nothing twice")
    }

    @Test("the settle time is configurable")
    func configurableSettle() {
        var tracker = SettleTracker(settle: .seconds(30))
        #expect(tracker.observe(seen(), at: at(0)) == .wait(until: at(30)))
        #expect(tracker.observe(seen(), at: at(29.9)) == .wait(until: at(30)))
        #expect(tracker.observe(seen(), at: at(30)) == .check)
        var immediate = SettleTracker(settle: .zero)
        #expect(immediate.observe(seen(), at: at(0)) == .check)
    }

    @Test(
        "any change of size, mtime, ctime, device or inode restarts the settle",
        arguments: [
            seen(2000), seen(500), seen(written: 2), seen(inode: 8), seen(device: 2050),
            SettleTracker.Observation(
                size: 1000, modified: 1_000_000_000, changed: 9_000_000_000, device: 2049, inode: 7,
                openForWriting: false),
        ])
    func changesRestart(_ changed: SettleTracker.Observation) {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(), at: at(0))
        #expect(tracker.observe(changed, at: at(4)) == .wait(until: at(9)))
        #expect(tracker.observe(changed, at: at(8)) == .wait(until: at(9)))
        #expect(tracker.observe(changed, at: at(9)) == .check)
    }

    @Test("whether it is open is no change: only the contents and the file are")
    func openIsNoChange() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(open: nil), at: at(0))
        #expect(tracker.observe(seen(open: false), at: at(2)) == .wait(until: at(5)))
        #expect(tracker.observe(seen(open: nil), at: at(5)) == .check, "cannot tell: the settle alone decides")
    }

    @Test("open for writing keeps it waiting a settle time at a time; closed, it is checked at once")
    func openForWriting() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(open: true), at: at(0))
        #expect(tracker.observe(seen(open: true), at: at(5)) == .wait(until: at(10)))
        #expect(tracker.observe(seen(open: true), at: at(10)) == .wait(until: at(15)))
        #expect(tracker.observe(seen(open: false), at: at(12)) == .check)
        #expect(tracker.checked(.whole, observed: seen(open: false), at: at(12)) == .take)
    }

    @Test("open for writing with no settle time: looked at again a second later, not in a loop")
    func openWithoutSettle() {
        var tracker = SettleTracker(settle: .zero)
        #expect(tracker.observe(seen(open: true), at: at(0)) == .wait(until: at(1)))
    }

    @Test("a file changed while it was checked is not taken, whatever the check said")
    func changedDuringCheck() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(), at: at(0))
        #expect(tracker.observe(seen(), at: at(5)) == .check)
        #expect(tracker.checked(.whole, observed: seen(1500, written: 6), at: at(6)) == .wait(until: at(11)))
        #expect(tracker.observe(seen(1500, written: 6), at: at(11)) == .check)
        #expect(tracker.checked(.whole, observed: seen(1500, written: 6), at: at(11)) == .take)
    }

    @Test("a check's outcome not asked for is only an observation: never a take")
    func unaskedOutcome() {
        var tracker = SettleTracker()
        #expect(tracker.checked(.whole, observed: seen(), at: at(0)) == .wait(until: at(5)))
        #expect(tracker.checked(.whole, observed: seen(), at: at(5)) == .check)
        var stale = SettleTracker()
        _ = stale.observe(seen(), at: at(0))
        #expect(stale.observe(seen(), at: at(5)) == .check)
        #expect(stale.observe(seen(2000), at: at(6)) == .wait(until: at(11)), "changed before the check answered")
        #expect(stale.checked(.whole, observed: seen(2000), at: at(7)) == .wait(until: at(11)))
    }

    @Test("time going backwards is a change: the settle starts again from the earlier now")
    func clockBackwards() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(), at: at(100))
        #expect(tracker.observe(seen(), at: at(50)) == .wait(until: at(55)))
        #expect(tracker.observe(seen(), at: at(55)) == .check)
        #expect(tracker.checked(.whole, observed: seen(), at: at(40)) == .wait(until: at(45)), "backwards mid-check")
        #expect(tracker.observe(seen(), at: at(45)) == .check)
    }

    @Test("truncated: waits for a change, checked again once settled, taken when whole")
    func truncatedThenCompleted() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(), at: at(0))
        _ = tracker.observe(seen(), at: at(5))
        #expect(tracker.checked(.incomplete, observed: seen(), at: at(5)) == .waitForChange)
        #expect(tracker.observe(seen(), at: at(600)) == .waitForChange)
        #expect(tracker.observe(seen(5000, written: 700), at: at(700)) == .wait(until: at(705)))
        #expect(tracker.observe(seen(5000, written: 700), at: at(705)) == .check)
        #expect(tracker.checked(.whole, observed: seen(5000, written: 700), at: at(706)) == .take)
    }

    @Test("truncated for a day: reported once, then waiting silently; the time is configurable")
    func truncatedReport() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(2_500_000), at: at(0))
        _ = tracker.observe(seen(2_500_000), at: at(5))
        #expect(tracker.checked(.incomplete, observed: seen(2_500_000), at: at(5)) == .waitForChange)
        #expect(tracker.observe(seen(2_500_000), at: at(5 + 86_399)) == .waitForChange)
        #expect(
            tracker.observe(seen(2_500_000), at: at(5 + 86_400))
                == .report("still truncated after 24 h (2.5 MB): not taken until it changes and is whole"))
        #expect(tracker.observe(seen(2_500_000), at: at(5 + 86_401)) == .waitForChange)
        #expect(tracker.observe(seen(2_500_000), at: at(5 + 999_999)) == .waitForChange)
        var quick = SettleTracker(settle: .seconds(1), reportAfter: .seconds(90))
        _ = quick.observe(seen(), at: at(0))
        _ = quick.observe(seen(), at: at(1))
        #expect(quick.checked(.incomplete, observed: seen(), at: at(1)) == .waitForChange)
        #expect(
            quick.observe(seen(), at: at(91))
                == .report("still truncated after 90 s (1.0 kB): not taken until it changes and is whole"))
    }

    @Test("a day counts from the first truncated check, across changes that leave it truncated; reported once")
    func truncatedAcrossChanges() {
        var tracker = SettleTracker(settle: .seconds(5), reportAfter: .seconds(3600))
        _ = tracker.observe(seen(100), at: at(0))
        _ = tracker.observe(seen(100), at: at(5))
        #expect(tracker.checked(.incomplete, observed: seen(100), at: at(5)) == .waitForChange)
        _ = tracker.observe(seen(200, written: 2), at: at(3600))
        #expect(tracker.observe(seen(200, written: 2), at: at(3605)) == .check)
        #expect(
            tracker.checked(.incomplete, observed: seen(200, written: 2), at: at(3605))
                == .report("still truncated after 1 h (200 B): not taken until it changes and is whole"))
        _ = tracker.observe(seen(300, written: 3), at: at(9000))
        _ = tracker.observe(seen(300, written: 3), at: at(9005))
        #expect(tracker.checked(.incomplete, observed: seen(300, written: 3), at: at(9005)) == .waitForChange)
    }

    @Test("another inode under the name is another file: its own day before a report")
    func replacedInodeResetsReport() {
        var tracker = SettleTracker(settle: .seconds(5), reportAfter: .seconds(3600))
        _ = tracker.observe(seen(100), at: at(0))
        _ = tracker.observe(seen(100), at: at(5))
        _ = tracker.checked(.incomplete, observed: seen(100), at: at(5))
        #expect(tracker.observe(seen(100), at: at(3605)) != .waitForChange)
        #expect(tracker.observe(seen(100, inode: 9), at: at(4000)) == .wait(until: at(4005)))
        #expect(tracker.observe(seen(100, inode: 9), at: at(4005)) == .check)
        #expect(tracker.checked(.incomplete, observed: seen(100, inode: 9), at: at(4005)) == .waitForChange)
        #expect(tracker.observe(seen(100, inode: 9), at: at(7604)) == .waitForChange)
        #expect(tracker.observe(seen(100, inode: 9), at: at(7605)) != .waitForChange)
    }

    @Test("not a photo: refused once, silent while unchanged, checked again after a change")
    func notAPhoto() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(), at: at(0))
        _ = tracker.observe(seen(), at: at(5))
        #expect(
            tracker.checked(.notAPhoto("not a JPEG, PNG or HEIC"), observed: seen(), at: at(5))
                == .refuse("not a JPEG, PNG or HEIC"))
        #expect(tracker.observe(seen(), at: at(600)) == .waitForChange)
        #expect(tracker.observe(seen(), at: at(1200)) == .waitForChange)
        #expect(tracker.observe(seen(3000, written: 1300), at: at(1300)) == .wait(until: at(1305)))
        #expect(tracker.observe(seen(3000, written: 1300), at: at(1305)) == .check)
        #expect(
            tracker.checked(.notAPhoto("still not"), observed: seen(3000, written: 1300), at: at(1305))
                == .refuse("still not"))
    }

    @Test("taken, then rewritten: the new contents settle and are checked again (a new photo)")
    func takenThenRewritten() {
        var tracker = SettleTracker()
        _ = tracker.observe(seen(), at: at(0))
        _ = tracker.observe(seen(), at: at(5))
        #expect(tracker.checked(.whole, observed: seen(), at: at(5)) == .take)
        #expect(tracker.observe(seen(1000, written: 50), at: at(50)) == .wait(until: at(55)))
        #expect(tracker.observe(seen(1000, written: 50), at: at(55)) == .check)
    }

    @Test("hostile: a file that shrinks, grows and is replaced in turn is never checked until it is still")
    func hostileSequence() {
        var tracker = SettleTracker()
        var now = 0.0
        let sizes: [Int64] = [100, 50, 0, 5000, 4999, 5000]
        for (i, size) in sizes.enumerated() {
            now = Double(i) * 4.5
            let decision = tracker.observe(seen(size, written: Int64(i), inode: UInt64(7 + i % 2)), at: at(now))
            #expect(decision == .wait(until: at(now + 5)))
        }
        #expect(tracker.observe(seen(5000, written: 5, inode: 8), at: at(now + 4.5)) == .wait(until: at(now + 5)))
        #expect(tracker.observe(seen(5000, written: 5, inode: 8), at: at(now + 5)) == .check)
    }
}
