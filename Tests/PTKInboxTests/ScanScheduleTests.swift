import PTKInbox
import PTKTestTags
import PTKTime
import Testing

/// The instant `s` seconds after the tests' start.
private func at(_ s: Double) -> Instant { Instant(seconds: 5000 + s) }

@Suite("Full scans: at start, every interval, at once after lost events", .tags(.unit))
struct ScanScheduleTests {
    @Test("the first scan is due at start; the next one an interval (10 min by default) after it ends")
    func regular() {
        var schedule = ScanSchedule(startingAt: at(0))
        #expect(schedule.interval == .seconds(600))
        #expect(schedule.due == at(0))
        #expect(schedule.isDue(at: at(0)))
        #expect(schedule.record(.scanStarted, at: at(0)) == at(600))
        #expect(!schedule.isDue(at: at(1)))
        #expect(schedule.record(.scanFinished, at: at(42)) == at(642))
        #expect(!schedule.isDue(at: at(641.9)))
        #expect(schedule.isDue(at: at(642)))
    }

    @Test("the interval is configurable, and never shorter than a second")
    func interval() {
        var schedule = ScanSchedule(interval: .seconds(60), startingAt: at(0))
        schedule.record(.scanStarted, at: at(0))
        #expect(schedule.record(.scanFinished, at: at(1)) == at(61))
        #expect(ScanSchedule(interval: .zero, startingAt: at(0)).interval == .seconds(1))
        #expect(ScanSchedule(interval: .seconds(-5), startingAt: at(0)).interval == .seconds(1))
    }

    @Test(
        "an overflow or a parse error between scans makes one due at once",
        arguments: [ScanSchedule.Event.overflow, .parseError])
    func urgentBetweenScans(_ event: ScanSchedule.Event) {
        var schedule = ScanSchedule(startingAt: at(0))
        schedule.record(.scanStarted, at: at(0))
        schedule.record(.scanFinished, at: at(10))
        #expect(schedule.record(event, at: at(200)) == at(200))
        #expect(schedule.isDue(at: at(200)))
        #expect(schedule.record(event, at: at(201)) == at(200), "a second one asks for no more")
        #expect(schedule.record(.scanStarted, at: at(202)) == at(802))
        #expect(schedule.record(.scanFinished, at: at(250)) == at(850), "that scan covered it: the interval again")
    }

    @Test("an overflow during a scan makes the next scan due right after it ends")
    func urgentDuringScan() {
        var schedule = ScanSchedule(startingAt: at(0))
        schedule.record(.scanStarted, at: at(0))
        #expect(schedule.record(.overflow, at: at(5)) == at(5))
        #expect(schedule.record(.scanFinished, at: at(30)) == at(5))
        #expect(schedule.isDue(at: at(30)))
        schedule.record(.scanStarted, at: at(30))
        #expect(schedule.record(.scanFinished, at: at(40)) == at(640))
    }

    @Test("an overflow before a scan due later anyway brings it forward, never back")
    func neverLater() {
        var schedule = ScanSchedule(startingAt: at(0))
        #expect(schedule.record(.overflow, at: at(3)) == at(0), "the first scan is due already")
        schedule.record(.scanStarted, at: at(4))
        #expect(schedule.record(.scanFinished, at: at(9)) == at(609))
    }

    @Test("no events at all (a network mount): the interval's scans are all there is")
    func noEvents() {
        var schedule = ScanSchedule(interval: .seconds(100), startingAt: at(0))
        var starts: [Double] = []
        var now = 0.0
        for _ in 0..<4 {
            now = schedule.due.seconds - 5000
            starts.append(now)
            schedule.record(.scanStarted, at: at(now))
            schedule.record(.scanFinished, at: at(now + 2))
        }
        #expect(starts == [0, 102, 204, 306])
    }
}
