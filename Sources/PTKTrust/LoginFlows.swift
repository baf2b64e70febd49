import PTKDigest
import PTKSystem
import PTKVocabulary

/// What the approval page shows of a device asking to log in (login flow v2).
public struct LoginFlowRequest: Sendable, Equatable {
    /// The device as its User-Agent names it (`LoginFlows.deviceName`): no controls, capped.
    public var device: String
    /// The address the flow was started from.
    public var address: String
    /// "https://HOST[:PORT]", as the device named this receiver when it started the flow.
    public var server: String

    /// The fields as `LoginFlows.start` keeps them.
    public init(device: String, address: String, server: String) {
        self.device = device
        self.address = address
        self.server = server
    }
}

/// What the device collects once the flow is approved: the fields of the poll's JSON answer.
public struct LoginFlowCredentials: Sendable, Equatable {
    /// "https://HOST[:PORT]", as the device named this receiver.
    public var server: String
    /// The app password's name (the user name of its Basic auth).
    public var loginName: String
    /// The app password itself, handed out once.
    public var appPassword: String

    /// The three fields of an approved flow.
    public init(server: String, loginName: String, appPassword: String) {
        self.server = server
        self.loginName = loginName
        self.appPassword = appPassword
    }
}

/// The login flows (Nextcloud's "login flow v2") under way, in memory only: a device starts a
/// flow and gets two secrets, a poll token (kept by the device, which polls with it) and a
/// login secret (in the address it opens in a browser); a person logged in to the web pages
/// approves it (an `upload` app password is made) or denies it; the device's next poll
/// collects the password, once, and the flow is gone.
///
/// pending → approving → approved → (collected) gone; pending → denied: gone; any state →
/// expired (`Limits.lifetime` after the start): gone. An approval whose flow expired meanwhile
/// is refused (`finishApproval` false: the caller removes the password it made); a flow that
/// expires approved but not collected leaves its password's name in `takeOrphans()`, for the
/// caller to remove: a password no device holds is not left working.
///
/// Bounded: at most `Limits.total` flows in all and `Limits.perAddress` from one address (as
/// `addressKey` counts them). A start beyond an address's share is refused (`StartRefusal`);
/// one that finds the table full takes the place of the oldest waiting flow of the address
/// with the most waiting (at least two), so that a device holding many addresses cannot keep
/// everyone else out, and is refused only when no address waits twice. Secrets
/// come from the kernel's random generator (`randomBytes`): a poll token of 512 bits, a login
/// secret of 256, as lower-case hex; every flow's secret is compared with the one given, in
/// constant time (`constantTimeEqual`), so the time taken tells nothing of a secret. Nothing
/// here is written anywhere: ptkd's restart ends every flow.
public final class LoginFlows: @unchecked Sendable {
    /// The table's bounds.
    public struct Limits: Sendable {
        /// Flows under way, in all.
        public var total: Int
        /// Flows under way started from one address.
        public var perAddress: Int
        /// A flow ends this long after it started, whatever its state.
        public var lifetime: Duration

        /// 64 in all, 8 from one address, 20 minutes (Nextcloud's own flows last 20 minutes).
        public init(total: Int = 64, perAddress: Int = 8, lifetime: Duration = .seconds(20 * 60)) {
            self.total = total
            self.perAddress = perAddress
            self.lifetime = lifetime
        }
    }

    /// Why a flow was not started.
    public enum StartRefusal: Error, Equatable {
        /// `Limits.total` flows are under way.
        case full
        /// `Limits.perAddress` flows from this address are under way.
        case fullForAddress
    }

    /// A flow's two secrets, as `start` hands them out (lower-case hex).
    public struct Started: Sendable, Equatable {
        /// What the device polls with (128 hex digits).
        public var pollToken: String
        /// What the browser's address holds (64 hex digits).
        public var loginSecret: String
    }

    /// What a poll finds.
    public enum PollAnswer: Sendable, Equatable {
        /// No flow has this token (never made, expired, denied or collected).
        case none
        /// The flow waits for a person to approve it.
        case pending
        /// Approved: the credentials, handed out this once (the flow is gone).
        case approved(LoginFlowCredentials)
    }

    private enum State: Equatable {
        case pending, approving
        case approved(LoginFlowCredentials, passwordID: String)
    }

    private struct Flow {
        let poll: [UInt8]
        let login: [UInt8]
        let request: LoginFlowRequest
        let started: Instant
        var state: State
    }

    /// Poll tokens are this many random bytes (128 hex digits).
    public static let pollTokenBytes = 64
    /// Login secrets are this many random bytes (64 hex digits).
    public static let loginSecretBytes = 32
    /// A device name is cut to this many characters.
    public static let deviceNameLimit = 100

    /// The table's bounds, fixed at init.
    public let limits: Limits
    private let clock: @Sendable () -> Instant
    private let addressKey: @Sendable (String) -> String
    // `flows` and `orphans` are guarded by `lock`.
    private let lock = Lock()
    private var flows: [Flow] = []
    private var orphans: [(name: String, id: String)] = []

    /// An empty table with `limits`, reading the time from `clock` (the monotonic clock unless a
    /// test gives its own); flows count against `Limits.perAddress` under `addressKey` of their
    /// address (the web door gives `Guesses.addressKey`: an IPv6 /64 is one address).
    public init(
        limits: Limits = Limits(), clock: @escaping @Sendable () -> Instant = { .now },
        addressKey: @escaping @Sendable (String) -> String = { $0 }
    ) {
        self.limits = limits
        self.clock = clock
        self.addressKey = addressKey
    }

    /// Flows under way (expired ones left out).
    public var count: Int {
        lock.withLock {
            prune()
            return flows.count
        }
    }

    /// Starts a flow for `request` (its address counts against `Limits.perAddress`), or says why not.
    public func start(_ request: LoginFlowRequest) -> Result<Started, StartRefusal> {
        let poll = hex(randomBytes(Self.pollTokenBytes))
        let login = hex(randomBytes(Self.loginSecretBytes))
        return lock.withLock {
            prune()
            let key = addressKey(request.address)
            guard flows.count(where: { addressKey($0.request.address) == key }) < limits.perAddress else {
                return .failure(.fullForAddress)
            }
            if flows.count >= limits.total {
                // Full: a few addresses holding many flows each (one device with several
                // addresses) must not shut everyone else out. The oldest waiting flow of the
                // address with the most waiting goes, when it has more than one; else refused.
                guard let victim = busiestOldest(), victim.key != key else { return .failure(.full) }
                flows.remove(at: victim.index)
            }
            flows.append(
                Flow(
                    poll: Array(poll.utf8), login: Array(login.utf8), request: request, started: clock(),
                    state: .pending))
            return .success(Started(pollToken: poll, loginSecret: login))
        }
    }

    /// The pending flow whose login secret is `secret` (nil when none is, or it is being approved or approved).
    public func pending(login secret: String) -> LoginFlowRequest? {
        lock.withLock {
            prune()
            guard let i = index(login: secret), flows[i].state == .pending else { return nil }
            return flows[i].request
        }
    }

    /// Takes the pending flow whose login secret is `secret` for approval (pending → approving:
    /// a second approval at the same time finds none); nil when there is none. The caller makes
    /// the password, then calls `finishApproval`, or `abandonApproval` when it could not.
    public func beginApproval(login secret: String) -> LoginFlowRequest? {
        lock.withLock {
            prune()
            guard let i = index(login: secret), flows[i].state == .pending else { return nil }
            flows[i].state = .approving
            return flows[i].request
        }
    }

    /// Approving → approved, with the password made for it (`passwordID`: its `AppPassword.id`);
    /// false when the flow is gone (expired meanwhile): the caller removes the password, which
    /// no device will collect.
    public func finishApproval(login secret: String, loginName: String, appPassword: String, passwordID: String)
        -> Bool
    {
        lock.withLock {
            prune()
            guard let i = index(login: secret), flows[i].state == .approving else { return false }
            flows[i].state = .approved(
                LoginFlowCredentials(server: flows[i].request.server, loginName: loginName, appPassword: appPassword),
                passwordID: passwordID)
            return true
        }
    }

    /// Approving → pending again: the password could not be made (the person may try again).
    public func abandonApproval(login secret: String) {
        lock.withLock {
            prune()
            if let i = index(login: secret), flows[i].state == .approving { flows[i].state = .pending }
        }
    }

    /// Ends the pending flow whose login secret is `secret` (its device's polls find nothing
    /// from now on); the flow's request, nil when there was no pending flow.
    public func deny(login secret: String) -> LoginFlowRequest? {
        lock.withLock {
            prune()
            guard let i = index(login: secret), flows[i].state == .pending else { return nil }
            return flows.remove(at: i).request
        }
    }

    /// A device's poll with `token`: the credentials once the flow is approved (and the flow
    /// is gone: a second poll finds none), else whether it is still waiting.
    public func poll(token: String) -> PollAnswer {
        lock.withLock {
            prune()
            guard let i = index(poll: token) else { return .none }
            guard case .approved(let credentials, _) = flows[i].state else { return .pending }
            flows.remove(at: i)
            return .approved(credentials)
        }
    }

    /// The passwords (name and `AppPassword.id`) made for flows that expired approved but not
    /// collected, since the last call: the caller removes them.
    public func takeOrphans() -> [(name: String, id: String)] {
        lock.withLock {
            prune()
            defer { orphans = [] }
            return orphans
        }
    }

    // MARK: Helpers

    /// The oldest pending flow of the address (by `addressKey`) with the most pending flows,
    /// when it has at least two (ties: the address whose oldest came first). Call under `lock`.
    private func busiestOldest() -> (index: Int, key: String)? {
        var byAddress: [String: [Int]] = [:]
        for (i, flow) in flows.enumerated() where flow.state == .pending {
            byAddress[addressKey(flow.request.address), default: []].append(i)
        }
        let best = byAddress.filter { $0.value.count >= 2 }.max { a, b in
            a.value.count != b.value.count
                ? a.value.count < b.value.count : a.value[0] > b.value[0]
        }
        return best.map { (index: $0.value[0], key: $0.key) }
    }

    /// Drops the flows whose lifetime is over (an approved one's password goes to `orphans`). Call under `lock`.
    private func prune() {
        let now = clock()
        flows.removeAll { flow in
            guard now - flow.started >= limits.lifetime || now < flow.started else { return false }
            if case .approved(let credentials, let id) = flow.state { orphans.append((credentials.loginName, id)) }
            return true
        }
    }

    /// The flow whose login secret is `secret`, every flow's compared in constant time. Call under `lock`.
    private func index(login secret: String) -> Int? { find(secret) { $0.login } }

    /// The flow whose poll token is `token`, every flow's compared in constant time. Call under `lock`.
    private func index(poll token: String) -> Int? { find(token) { $0.poll } }

    private func find(_ given: String, _ secret: (Flow) -> [UInt8]) -> Int? {
        // Longer than any secret: nothing to compare (its length is no secret).
        guard given.utf8.count <= 2 * Self.pollTokenBytes else { return nil }
        let bytes = Array(given.utf8)
        var found: Int?
        for (i, flow) in flows.enumerated() where constantTimeEqual(bytes, secret(flow)) && found == nil {
            found = i
        }
        return found
    }
}
