import PTKHTTP
import PTKLocalSend
import PTKLog
import PTKSystem
import PTKVocabulary

/// The receiver's one budget of wrong guesses (web passwords, LocalSend PINs, app passwords):
/// at most `GuessBudget.limit` a minute whatever addresses they come from. Once spent, every
/// guess is answered "too many" (429) unchecked until the minute passes; that is logged once.
public final class Guesses: @unchecked Sendable {
    // `budget` is guarded by `lock`.
    private let lock = Lock()
    private var budget: GuessBudget

    /// A budget of `limit` wrong guesses per `window`.
    public init(limit: Int = 10, window: Duration = .seconds(60)) {
        budget = GuessBudget(limit: limit, window: window)
    }

    /// The key an address is counted under (an IPv6 address by its /64, an IPv4-mapped one as
    /// IPv4), for a door that bounds something per address as the guesses are (a phone app's
    /// login flows, `LoginFlows`).
    public static func addressKey(_ address: String) -> String { PTKLocalSend.addressKey(address) }

    /// Whether guesses are refused now, for everyone.
    public var isSpent: Bool { lock.withLock { budget.isSpent(now: .now) } }

    /// Counts a wrong guess (`what`: "password", "PIN"); says so in the log when it spends the budget.
    public func failed(_ what: String, from address: String) {
        let spent = lock.withLock { budget.failed(now: .now) }
        if spent {
            Log.warning(
                "\(budget.limit) wrong passwords or PINs within \(formatSeconds(budget.window)) (the last a \(what) from \(address)): every guess is refused until the oldest is a minute old"
            )
        }
    }
}

/// The bytes of large request bodies (a LocalSend prepare-upload over 64 KiB from a sender
/// not on the trust list) that may be read and decoded at once: a flood of them waits its
/// turn (503) instead of taking the receiver's memory.
public final class LargeBodies: @unchecked Sendable {
    /// Two of the largest (4 MiB) bodies at once.
    public static let capacity = 8 << 20
    // `used` is guarded by `lock`.
    private let lock = Lock()
    private var used = 0

    /// None taken.
    public init() {}

    /// Takes `bytes` of the budget; false (nothing taken) when they are not free.
    public func take(_ bytes: Int) -> Bool {
        lock.withLock {
            guard used + bytes <= Self.capacity else { return false }
            used += bytes
            return true
        }
    }

    /// Gives back `bytes` taken.
    public func give(_ bytes: Int) { lock.withLock { used -= bytes } }
}

/// The wrong-guess counter the doors' `FailureThrottle`s keep (passwords, app passwords).
extension TryLimiter: FailureLimiter {}

/// Wrong passwords counted per address for a door's logins: 3 tries, then 5 minutes' wait.
public typealias PasswordThrottle = FailureThrottle<TryLimiter>

extension FailureThrottle where Limiter == TryLimiter {
    /// 3 tries per address, then 5 minutes' wait.
    public convenience init() { self.init(TryLimiter(tries: 3, lockout: .seconds(300))) }
}
