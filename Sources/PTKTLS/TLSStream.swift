import CTLS
import PTKProtocol
import PTKSystem
import PTKTransport

/// The ALPN protocol ID of ptk v1 (protocol §6), in ALPN's wire form (length-prefixed).
let alpnWire: [UInt8] = [5] + Array("ptk/1".utf8)

/// An OpenSSL context for one side of ptk's TLS (protocol §6): TLS 1.3 only, this device's
/// certificate presented, the peer's certificate requested and never verified (a peer is known
/// by its device ID alone), ALPN `ptk/1`.
public final class TLSContext: @unchecked Sendable {
    // SSL_CTX is safe to share between threads once set up, which init finishes.
    let context: OpaquePointer
    /// True for the receiver's side: it requests the peer's certificate and runs the server handshake.
    public let isServer: Bool

    /// Which protocol a context is for.
    public enum Flavor: Sendable {
        /// ptk v1 (protocol §6): TLS 1.3 only, ALPN `ptk/1`.
        case ptk
        /// HTTPS for LocalSend apps: TLS 1.2 or 1.3, no ALPN. A server asks for (never
        /// requires) the client's certificate.
        case https
        /// HTTPS for browsers (the web interface): TLS 1.2 or 1.3, no client certificate asked
        /// for (a browser would offer the user its certificates to pick from).
        case web
    }

    /// `identity` nil presents no certificate (tests of a sender without one). `tls12Only`
    /// (TLS 1.2 and nothing else) is only for tests of refusals.
    public init(server: Bool, identity: Identity?, tls12Only: Bool = false, flavor: Flavor = .ptk) throws(IdentityError)
    {
        guard let ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw IdentityError(description: "cannot make a TLS context: \(openSSLErrors())")
        }
        context = ctx
        isServer = server
        let version = tls12Only ? ptk_tls1_2_version() : ptk_tls1_3_version()
        _ = ptk_ctx_set_min_proto(ctx, flavor == .ptk ? version : ptk_tls1_2_version())
        _ = ptk_ctx_set_max_proto(ctx, version)
        _ = ptk_ctx_set_mode(ctx, ptk_mode_partial_write())
        // An EOF without close_notify reads as end of stream: the framing finds a cut frame.
        _ = SSL_CTX_set_options(ctx, ptk_op_ignore_eof_no_ticket())
        // The suites, for every flavor (TLSContext+CipherSuites.swift): TLS 1.3's, and TLS 1.2's
        // where a flavor allows it (ECDHE with an AEAD only).
        guard SSL_CTX_set_ciphersuites(ctx, Self.tls13CipherSuites) == 1,
            SSL_CTX_set_cipher_list(ctx, Self.tls12CipherList) == 1
        else {
            throw IdentityError(description: "cannot set the cipher suites: \(openSSLErrors())")
        }
        // Read whole socket buffers at a time instead of one record header, then its body.
        ptk_ctx_set_read_ahead(ctx)
        SSL_CTX_set_default_read_buffer_len(ctx, 256 << 10)
        if let identity {
            guard SSL_CTX_use_certificate(ctx, identity.certificate) == 1,
                SSL_CTX_use_PrivateKey(ctx, identity.key) == 1
            else {
                throw IdentityError(description: "cannot use the identity: \(openSSLErrors())")
            }
        }
        if server {
            _ = SSL_CTX_set_num_tickets(ctx, 0)
            if flavor == .web { return }
            // Ask for the sender's certificate; accept any (or none): the device ID decides.
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, { _, _ in 1 })
            if flavor == .https { return }
            SSL_CTX_set_alpn_select_cb(
                ctx,
                { _, out, outLength, offered, offeredLength, _ in
                    // Select ptk/1 if offered; a sender that offers other protocols only, or none, is
                    // served without ALPN.
                    guard let offered, let out, let outLength else { return ptk_alpn_noack() }
                    var i = 0
                    let n = Int(offeredLength)
                    while i < n {
                        let length = Int(offered[i])
                        if i + 1 + length <= n, length == 5,
                            (0..<5).allSatisfy({ offered[i + 1 + $0] == alpnWire[1 + $0] })
                        {
                            out.pointee = offered + i + 1
                            outLength.pointee = 5
                            return ptk_alpn_ok()
                        }
                        i += 1 + length
                    }
                    return ptk_alpn_noack()
                }, nil)
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
            if flavor != .ptk { return }
            _ = SSL_CTX_set_alpn_protos(ctx, alpnWire, UInt32(alpnWire.count))
        }
    }

    deinit { SSL_CTX_free(context) }
}

/// A `ByteStream` of TLS over a connected non-blocking TCP socket, which it owns.
public final class TLSStream: ByteStream, @unchecked Sendable {
    // One session thread uses a stream at a time, as with TCPStream.
    /// The connected socket under TLS; the stream owns it and closes it in `close()`.
    public let socket: FileDescriptor
    /// The peer's address, for logs.
    public let peer: SocketAddress?
    private let ssl: OpaquePointer
    private let interrupt: FileDescriptor?
    private var closed = false
    /// Who the peer is, from its certificate (after the handshake).
    public private(set) var peerIdentity: DeviceIdentity = .none
    /// The SHA-256 of the peer's certificate (64 upper-case hex digits), if it showed one.
    public private(set) var peerCertificateFingerprint: String?
    /// The ALPN protocol the handshake agreed on, if any.
    public private(set) var alpn: String?

    /// Runs the handshake on `socket` as `context`'s side, by `deadline`. On failure the socket
    /// is closed and the error says why. A client also checks that the first byte the peer sends
    /// starts a TLS record, so a receiver that answers in plaintext is named as such.
    public init(
        socket: FileDescriptor, peer: SocketAddress?, context: TLSContext, interrupt: FileDescriptor? = nil,
        deadline: Instant
    ) throws(TransportError) {
        self.socket = socket
        self.peer = peer
        self.interrupt = interrupt
        guard let ssl = SSL_new(context.context) else {
            socket.close()
            throw .tls("cannot start TLS: \(openSSLErrors())")
        }
        self.ssl = ssl
        _ = SSL_set_fd(ssl, socket.rawValue)
        do {
            try handshake(server: context.isServer, deadline: deadline)
        } catch {
            closed = true
            SSL_free(ssl)
            socket.close()
            throw error
        }
        if let cert = SSL_get1_peer_certificate(ssl) {
            if let key = X509_get0_pubkey(cert) { peerIdentity = deviceID(ofKey: key) }
            peerCertificateFingerprint = certificateFingerprint(cert)
            X509_free(cert)
        }
        var selected: UnsafePointer<UInt8>? = nil
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &selected, &length)
        if let selected, length > 0 {
            alpn = String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self)
        }
    }

    private func handshake(server: Bool, deadline: Instant) throws(TransportError) {
        var checkedFirstByte = server
        while true {
            ERR_clear_error()
            let r = server ? SSL_accept(ssl) : SSL_connect(ssl)
            if r == 1 { return }
            let error = SSL_get_error(ssl, r)
            switch error {
            case SSL_ERROR_WANT_READ:
                try wait(.readable, until: deadline, interruptible: true)
                if !checkedFirstByte {
                    checkedFirstByte = true
                    var byte: UInt8 = 0
                    // A peek that fails tells nothing: the handshake goes on and meets the failure itself.
                    let n = try? withUnsafeMutableBytes(of: &byte) { try Socket.receive(socket, into: $0, peek: true) }
                    // A TLS server's first record is a handshake (0x16) or an alert (0x15).
                    if n == 1 && byte != 0x16 && byte != 0x15 {
                        throw .notTLS("the receiver does not speak TLS (it answered in plaintext)")
                    }
                }
            case SSL_ERROR_WANT_WRITE:
                try wait(.writable, until: deadline, interruptible: true)
            default:
                let f = failure(error, during: "handshake")
                // Bytes that are not TLS records at all: the peer answered in something else.
                if !server, case .tls(let m) = f,
                    ["wrong version number", "packet length too long", "record layer failure", "http request"].contains(
                        where: m.contains)
                {
                    throw .notTLS("the receiver does not speak TLS (it answered with something else: \(m))")
                }
                throw f
            }
        }
    }

    private func failure(_ error: Int32, during what: String) -> TransportError {
        let systemErrno = Errno(rawValue: currentErrno())
        let reason = openSSLErrors()
        if error == SSL_ERROR_SYSCALL {
            if systemErrno == .connectionReset || systemErrno == .brokenPipe || systemErrno.rawValue == 0 {
                return .peerClosed
            }
            return .system(SystemError(call: "TLS \(what)", errno: systemErrno.rawValue))
        }
        if error == SSL_ERROR_ZERO_RETURN { return .peerClosed }
        return .tls("\(what) failed: \(reason)")
    }

    private func wait(_ events: PollEvents, until deadline: Instant, interruptible: Bool) throws(TransportError) {
        var fds: [(FileDescriptor, PollEvents)] = [(socket, events)]
        if interruptible, let interrupt { fds.append((interrupt, .readable)) }
        let revents: [PollEvents]
        do { revents = try poll(fds, until: deadline) } catch { throw .system(error) }
        if revents.count > 1 && !revents[1].isEmpty { throw .interrupted }
        if revents[0].isEmpty { throw .timedOut }
    }

    /// The socket: a session polls it, but checks `hasPendingInput` first, since TLS may hold bytes already read.
    public var readinessDescriptor: FileDescriptor? { socket }

    /// Records read off the socket and not yet returned (processed or not).
    public var hasPendingInput: Bool { SSL_has_pending(ssl) == 1 }

    /// Decrypts up to `buffer.count` bytes, waiting as the handshake or records need; a
    /// close_notify or a reset reads as 0, end of stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Instant, interruptible: Bool)
        throws(TransportError) -> Int
    {
        while true {
            ERR_clear_error()
            var n = 0
            if SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &n) == 1 { return n }
            let error = SSL_get_error(ssl, 0)
            switch error {
            case SSL_ERROR_WANT_READ: try wait(.readable, until: deadline, interruptible: interruptible)
            case SSL_ERROR_WANT_WRITE: try wait(.writable, until: deadline, interruptible: interruptible)
            case SSL_ERROR_ZERO_RETURN: return 0
            default:
                let f = failure(error, during: "read")
                if case .peerClosed = f { return 0 }
                throw f
            }
        }
    }

    /// Encrypts and sends all of `bytes` by `deadline`; shutdown does not interrupt it, only the deadline does.
    public func write(_ bytes: UnsafeRawBufferPointer, deadline: Instant) throws(TransportError) {
        var done = 0
        while done < bytes.count {
            ERR_clear_error()
            var n = 0
            if SSL_write_ex(ssl, bytes.baseAddress! + done, bytes.count - done, &n) == 1 {
                done += n
                continue
            }
            let error = SSL_get_error(ssl, 0)
            switch error {
            case SSL_ERROR_WANT_WRITE: try wait(.writable, until: deadline, interruptible: false)
            case SSL_ERROR_WANT_READ: try wait(.readable, until: deadline, interruptible: false)
            default: throw failure(error, during: "write")
            }
        }
    }

    /// Sends TLS close_notify, then shuts down the socket's sending side.
    public func shutdownWrite() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
        Socket.shutdownWrite(socket)
    }

    /// Frees the TLS state and closes the socket, without close_notify (`shutdownWrite` sends it); once only.
    public func close() {
        precondition(!closed, "TLSStream closed twice")
        closed = true
        SSL_free(ssl)
        socket.close()
    }

    deinit {
        assert(closed, "TLSStream dropped without close()")
    }
}
