// A view read over HTTP: the changes after the reader's offset, or a long poll for the next ones, answered
// with the same bytes for every reader of the same read, so that a cache in front does the fan-out.

public import Foundation
import SimpleSourceCore

/// How a ``WireService`` answers reads over HTTP (``WireService/read(_:scope:origin:ifNoneMatch:policy:)``):
/// the secret its read tokens are signed with, how long a long poll waits, and how long caches keep answers.
///
/// **Tokens.** A read token names one view (a query with its parameters in canonical form, or the whole
/// scope) of one scope of one service's stream, until an end time: `payload.code`, where the payload is the
/// view and the end time in JSON (base64url) and the code is HMAC-SHA-256 under ``secret`` of the payload,
/// the stream and the scope (its `String(reflecting:)`), truncated to 128 bits (base64url). The origin checks
/// every read by token against the scope of the reader's credentials, which the transport reads as for a
/// WebSocket: a token made for another scope, altered, or forged without the secret is refused
/// (``WireError/Code-swift.struct/readTokenInvalid``); one past its end time with
/// ``WireError/Code-swift.struct/readTokenExpired``. Tokens are issued per period of ``tokenLifetime``: every
/// token of a view and scope issued in one period is the same string, ending two periods after the one it
/// was issued in, so a view's readers share at most two tokens, and with them the cache's entries.
///
/// **What a cache may keep.** A read by token is a URL with the token in it, so a cache key holds it: a
/// cache hands an answer only to a reader that holds the token, which only a reader of that scope was given.
/// A token is a capability for its life, as a signed URL is: whoever holds it reads the view until it ends,
/// from the cache, without credentials; the origin's check refuses it to another scope only on a miss. So
/// answers are kept no longer than the token lives (``maxAge`` and ``staleWhileRevalidate`` are cut to its
/// end), and reads by query, whose URL carries no secret, are `private, no-store`. Use the same ``secret``
/// on every instance of a service (tokens are checked anywhere), keep it out of logs, and change it to
/// revoke every token.
public struct WireReadPolicy: Sendable {
  /// The key tokens are signed with: at least 16 bytes, the same on every instance.
  public var secret: [UInt8]
  /// The period tokens are issued for, in seconds: a token lives between one and two of them.
  public var tokenLifetime: Int
  /// How long a long poll at the newest version waits for the next one before a 204, in seconds.
  public var hold: Double
  /// The period a long poll's cursor counts, in seconds: a 204's cursor is the current period's number, and
  /// always past the one the reader sent.
  public var cursorInterval: Int
  /// How long a shared cache may keep an answer by token (`max-age`, seconds).
  public var maxAge: Int
  /// How long after ``maxAge`` a cache may still serve it while it fetches a new one
  /// (`stale-while-revalidate`, seconds).
  public var staleWhileRevalidate: Int
  /// The time in seconds since 1970, the same on every instance (wall clock): tokens' ends and cursors.
  package var now: @Sendable () -> Double = { Date().timeIntervalSince1970 }

  /// A policy.
  /// - Parameters:
  ///   - secret: The key tokens are signed with; at least 16 bytes.
  ///   - tokenLifetime: The period tokens are issued for, in seconds; 600 (10 minutes) by default.
  ///   - hold: How long a long poll waits, in seconds; 20 by default (keep a proxy's lock and read
  ///     timeouts longer).
  ///   - cursorInterval: The period of a long poll's cursor, in seconds; 20 by default.
  ///   - maxAge: How long a cache keeps an answer by token; 60 seconds by default.
  ///   - staleWhileRevalidate: How long past that it may serve it while fetching; 300 seconds by default.
  public init(
    secret: some Collection<UInt8>, tokenLifetime: Int = 600, hold: Double = 20, cursorInterval: Int = 20,
    maxAge: Int = 60, staleWhileRevalidate: Int = 300
  ) {
    precondition(secret.count >= 16, "SimpleSource: a read policy's secret is at least 16 bytes")
    precondition(tokenLifetime >= 1 && cursorInterval >= 1 && hold >= 0)
    self.secret = Array(secret)
    self.tokenLifetime = tokenLifetime
    self.hold = hold
    self.cursorInterval = cursorInterval
    self.maxAge = maxAge
    self.staleWhileRevalidate = staleWhileRevalidate
  }

  /// What a token names: its view and its end time (seconds since 1970).
  struct TokenPayload: Codable, Equatable {
    var end: Int
    var view: WireQueryRequest?
  }

  /// The token of `view` for `scope` of `stream`, issued now.
  /// - Complexity: O(size of the view and the scope's description).
  func token(for view: WireQueryRequest?, scope: some Hashable & Sendable, stream: String) -> String {
    let period = tokenLifetime
    let end = (Int(now()) / period + 2) * period
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let payload = (try? encoder.encode(TokenPayload(end: end, view: view))) ?? Data()
    return Self.base64URL(payload) + "." + Self.base64URL(code(payload, scope: scope, stream: stream))
  }

  /// The view `token` names and its end time, when the service issued it for `scope` of `stream` and it
  /// has not ended.
  /// - Throws: ``WireError/Code-swift.struct/readTokenInvalid`` or
  ///   ``WireError/Code-swift.struct/readTokenExpired``.
  /// - Complexity: O(size of the token and the scope's description).
  func verify(_ token: String, scope: some Hashable & Sendable, stream: String) throws(WireError)
    -> TokenPayload
  {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 2, let payload = Self.bytes(base64URL: parts[0]),
      let given = Self.bytes(base64URL: parts[1]),
      Self.equalInConstantTime(given, code(payload, scope: scope, stream: stream)),
      let read = try? JSONDecoder().decode(TokenPayload.self, from: payload)
    else {
      throw WireError(.readTokenInvalid, "the read token is not this service's for this view and scope")
    }
    guard Double(read.end) > now() else {
      throw WireError(.readTokenExpired, "the read token ended; read by view for a new one")
    }
    return read
  }

  private func code(_ payload: Data, scope: some Hashable & Sendable, stream: String) -> [UInt8] {
    let signed = Array(payload) + [0] + Array(stream.utf8) + [0] + Array(String(reflecting: scope).utf8)
    return Array(SHA256.authenticationCode(signed, key: secret).prefix(16))
  }

  /// The cursor of a long poll's answer: the current period's number, past `sent`.
  func cursor(after sent: Int?) -> Int {
    let current = Int(now()) / cursorInterval
    return max(current, (sent ?? -1) + 1)
  }

  /// The URL-safe Base64 alphabet (RFC 4648, section 5).
  static let base64URLAlphabet = Array(
    ("ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "abcdefghijklmnopqrstuvwxyz" + "0123456789-_").utf8)

  /// Each byte's value in ``base64URLAlphabet``, or `0xFF` for a byte outside it.
  static let base64URLValues: [UInt8] = {
    var values = [UInt8](repeating: 0xFF, count: 256)
    for (value, byte) in base64URLAlphabet.enumerated() { values[Int(byte)] = UInt8(value) }
    return values
  }()

  /// `bytes` in URL-safe Base64 without padding.
  /// - Complexity: O(*n*) in the number of bytes, in one pass.
  static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
    let input = Array(bytes)
    var text: [UInt8] = []
    text.reserveCapacity((input.count * 4 + 2) / 3)
    var index = 0
    while index < input.count {
      let count = min(3, input.count - index)
      var group = UInt32(input[index]) << 16
      if count > 1 { group |= UInt32(input[index + 1]) << 8 }
      if count > 2 { group |= UInt32(input[index + 2]) }
      // Three bytes make four characters; one makes two, two make three.
      var shift: UInt32 = 18
      for _ in 0...count {
        text.append(base64URLAlphabet[Int((group >> shift) & 0x3F)])
        shift &-= 6
      }
      index += count
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// The bytes `text` spells in URL-safe Base64 without padding, or `nil` when it is not that bytes'
  /// only spelling there (a character outside the alphabet, padding, a length no bytes make, or bits set
  /// past the last byte).
  /// - Complexity: O(*n*) in the length of `text`, in one pass.
  static func bytes(base64URL text: Substring) -> Data? {
    let characters = Array(text.utf8)
    guard characters.count % 4 != 1 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(characters.count * 3 / 4)
    var index = 0
    while index < characters.count {
      let count = min(4, characters.count - index)
      var group: UInt32 = 0
      for offset in 0..<4 {
        var value: UInt8 = 0
        if offset < count {
          value = base64URLValues[Int(characters[index + offset])]
          guard value != 0xFF else { return nil }
        }
        group = group << 6 | UInt32(value)
      }
      // Four characters make three bytes, three make two, two make one; what is left must be zero.
      let made = count - 1
      guard made == 3 || group & (0xFF_FFFF >> (8 * made)) == 0 else { return nil }
      var shift: UInt32 = 16
      for _ in 0..<made {
        bytes.append(UInt8(truncatingIfNeeded: group >> shift))
        shift &-= 8
      }
      index += count
    }
    return Data(bytes)
  }

  static func equalInConstantTime(_ lhs: some Collection<UInt8>, _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    return zip(lhs, rhs).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
  }
}

extension WireService {
  /// Answers one read of a view over HTTP (<doc:RunningOnSeveralMachines>): the changes after the reader's
  /// offset, in the wire format, one message per line (`resumed`, then each `batch`), or the view's state
  /// (`reset`) for a reader that holds nothing, another stream, or a version no longer retained; a long
  /// poll at the newest version waits up to ``WireReadPolicy/hold`` for the next version and is answered
  /// 204 with a new cursor when none came. See ``WireReadAnswer`` for every status and what a cache may keep.
  ///
  /// Every read of the same view, offset, liveness and cursor made at the same moment is answered with the
  /// same bytes (messages are encoded once per batch and format; the answer's tag is its digest), so a cache
  /// in front (``WireReadPolicy``) collapses them into one read of the origin.
  ///
  /// ```swift
  /// // In an HTTP handler: the scope from the request's credentials, as for a WebSocket.
  /// let read = try WireRead(queryItems: request.queryItems)
  /// let answer = await service.read(read, scope: user, policy: policy)
  /// ```
  ///
  /// A read is a subscription of the scope for as long as it runs: it counts against
  /// ``WireLimits/subscriptionsPerScope`` and makes views against ``WireLimits/freshViews``, but not against
  /// ``WireLimits/subscribes``: behind a cache, the origin's reads follow the versions, not the readers.
  /// Limit reads per address in the transport.
  /// - Parameters:
  ///   - read: The read.
  ///   - scope: The reader's scope, from its credentials: a token is checked against it.
  ///   - origin: Where the reader connects from, whose views ``WireLimits`` counts.
  ///   - ifNoneMatch: The request's `If-None-Match`: an answer whose tag it lists (weak or strong), or any
  ///     answer when it is `*`, is a 304 (``WireEntityTag/matches(ifNoneMatch:)``).
  ///   - policy: The tokens' secret, the hold, and what caches may keep.
  /// - Returns: The answer; never throws: a refusal is an answer with its status and `error` message.
  /// - Complexity: O(*k*) for *k* changes after a retained offset (the view's first read projects it:
  ///   O(*n*)), O(*n*) for a reset, besides the wait of a long poll; O(body) for its tag.
  public nonisolated func read(
    _ read: WireRead, scope: Scope, origin: String? = nil, ifNoneMatch: String? = nil, policy: WireReadPolicy
  ) async -> WireReadAnswer {
    let query: WireQueryRequest?
    var shareable = false
    var tokenEnd: Int?
    do throws(WireError) {
      switch read.view {
      case .token(let token):
        let payload = try policy.verify(token, scope: scope, stream: stream)
        (query, shareable, tokenEnd) = (payload.view, true, payload.end)
      case .query(let asked):
        query = try asked.map { (asked) throws(WireError) in
          guard let declared = queries[asked.name] else {
            throw WireError(.unknownQuery, "no query is named \(asked.name)")
          }
          return try declared.canonicalRequest(for: asked)
        }
      }
    } catch {
      return Self.refusal(error)
    }
    let collected = ReadMessages()
    let session = WireSession(
      service: self, scope: scope, origin: origin, pacing: .immediate, sink: nil, isRead: true
    ) { collected.append($0) }
    await session.receive(
      WireMessage<Section>.subscribe(stream: read.offset?.stream, from: read.offset?.version, query: query))
    // The source's version the answer covers, at least: the session sends everything up to it.
    var covered = await source.version.number
    await session.settled()
    var messages = collected.messages
    var waited = false
    if read.live, messages.count == 1, Self.head(of: messages[0])?.type == "resumed" {
      waited = true
      if await collected.arrival(after: 1, within: policy.hold) { messages = collected.messages }
    }
    await session.close()
    let heads = messages.map { Self.head(of: $0) }
    guard let first = heads.first, let first, first.type != "error" else {
      let error = (try? WireCoder().decode(messages.first ?? Data(), as: Section.self)).flatMap { message in
        if case .error(let error) = message { error } else { nil }
      }
      return Self.refusal(error ?? WireError(.queryFailed, "the view could not be read"))
    }
    // The messages a read sends before a later failure of its view are kept; the failure is the next read's.
    let kept = zip(messages, heads).prefix { $0.1 != nil && $0.1?.type != "error" }
    let stream = first.stream ?? read.offset?.stream ?? self.stream
    let version = kept.reduce(0) { version, message in message.1?.to ?? message.1?.version ?? version }
    covered = max(covered, version)
    var headers: [(name: String, value: String)] = [
      (WireReadAnswer.Header.nextOffset, WireOffset(stream: stream, version: version).description),
      (WireReadAnswer.Header.sourceVersion, String(covered)),
    ]
    let now = Int(policy.now())
    if read.live || waited {
      headers.append((WireReadAnswer.Header.cursor, String(policy.cursor(after: read.cursor))))
    }
    let fresh = policy.token(for: query, scope: scope, stream: self.stream)
    if case .token(let token) = read.view, token == fresh {
      // The reader's token is this period's: nothing to renew.
    } else {
      headers.append((WireReadAnswer.Header.token, fresh))
    }
    if waited, kept.count == 1 {
      // The long poll saw no change.
      let age = max(1, Int(policy.hold) / 4)
      headers.append((WireReadAnswer.Header.upToDate, "true"))
      headers.append(
        (WireReadAnswer.Header.cacheControl, Self.caching(shareable, age, 0, until: tokenEnd, now: now)))
      return WireReadAnswer(status: 204, headers: headers, body: Data())
    }
    // The session sent everything up to the source's version when the read settled: the reader holds the
    // view's newest version once it applied the body.
    headers.append((WireReadAnswer.Header.upToDate, "true"))
    var body = Data()
    for (message, _) in kept {
      body.append(message)
      body.append(UInt8(ascii: "\n"))
    }
    let tag = WireEntityTag(
      checked: SHA256.digest(body).prefix(16).map { String($0, radix: 16).leftPadded(to: 2) }.joined())
    // An answer that nothing changed is kept a second and never served stale: a reader reading it again
    // would stand still.
    let unchanged = kept.count == 1 && first.type == "resumed"
    headers.append(
      (
        WireReadAnswer.Header.cacheControl,
        Self.caching(
          shareable, unchanged ? 1 : policy.maxAge, unchanged ? 0 : policy.staleWhileRevalidate,
          until: tokenEnd,
          now: now)
      ))
    headers.append((WireReadAnswer.Header.entityTag, tag.description))
    if tag.matches(ifNoneMatch: ifNoneMatch) {
      return WireReadAnswer(status: 304, headers: headers, body: Data())
    }
    headers.append((WireReadAnswer.Header.contentType, "application/x-ndjson"))
    return WireReadAnswer(status: 200, headers: headers, body: body)
  }

  /// Answers one edit sent over HTTP (a `POST`), for clients that follow their view by reads: `body` is an
  /// `edit` message of the wire format, made for `scope` as a WebSocket's edit is, once per (scope, edit id).
  ///
  /// - The answer is `200` with one message: `confirmed` with the version that carries the edit, or
  ///   `refused` with why. Either is the edit's answer: a resend of the same edit (a lost response, a page
  ///   reloaded) gets the same one while the service remembers it. Unlike a WebSocket's, a `confirmed`
  ///   comes as soon as the edit is made, before the reader's view shows it: a client keeps showing the edit
  ///   on top of what it holds until its view reaches the version, or a read's
  ///   ``WireReadAnswer/Header/sourceVersion`` does (a view the edit did not change never shows that version).
  /// - A body that is not an edit message is `400` (`malformed`, `unexpectedMessage`, `tooLarge` past
  ///   ``WireCoder/maxClientMessageBytes``), with an `error` message, and changes nothing. Every answer is `Cache-Control: no-store`.
  ///
  /// ```swift
  /// // In an HTTP handler: `body` is the request's bytes, the scope from its credentials, as for a read.
  /// let answer = await service.edit(body, scope: user)
  /// ```
  /// - Complexity: O(*s*) to decode an edit of size *s*, then what ``WireWriter`` takes to make it.
  public nonisolated func edit(_ body: Data, scope: Scope) async -> WireReadAnswer {
    let message: WireMessage<Section>
    let format: Int
    do throws(WireError) {
      (message, format) = try WireCoder(maxMessageBytes: WireCoder.maxClientMessageBytes).read(body)
    } catch {
      return Self.refusal(error)
    }
    guard case .edit(let edit) = message else {
      return Self.refusal(WireError(.unexpectedMessage, "a \(message.typeName) message sent as an edit"))
    }
    let answer: WireMessage<Section> =
      switch await write(edit, scope: scope) {
      case .success(let version): .confirmed(edit: edit.id, version: version)
      case .failure(let error): .refused(edit: edit.id, error: error)
      }
    return WireReadAnswer(
      status: 200,
      headers: [
        (WireReadAnswer.Header.cacheControl, "no-store"),
        (WireReadAnswer.Header.contentType, "application/json"),
      ],
      body: WireCoder(formatVersion: max(format, 2)).encode(answer))
  }

  /// Whether a reader of `scope` may make `read`, answered without reading the view: for a cache in front
  /// to ask on every request before it answers from what it keeps (nginx's `auth_request`), so that a token
  /// taken to another scope, forged, or past its end reads nothing even where the cache holds the view.
  ///
  /// A read by token is answered 204 when the token is the service's for the view and `scope`, with
  /// `X-Accel-Expires` and `Cache-Control: private, max-age` of at most ``WireReadPolicy/maxAge`` and never
  /// past the token's end: a cache keyed by the token and the reader's credentials asks again after it. A
  /// read by query is answered 204, `no-store` (its answers are `private`: the origin reads the view for
  /// it). Refusals are those of ``read(_:scope:origin:ifNoneMatch:policy:)`` (403, `no-store`).
  /// - Complexity: O(size of the token and the scope's description).
  public nonisolated func authorize(_ read: WireRead, scope: Scope, policy: WireReadPolicy) -> WireReadAnswer
  {
    guard case .token(let token) = read.view else {
      return WireReadAnswer(
        status: 204, headers: [(WireReadAnswer.Header.cacheControl, "no-store")], body: Data())
    }
    do throws(WireError) {
      let payload = try policy.verify(token, scope: scope, stream: stream)
      let age = max(0, min(policy.maxAge, payload.end - Int(policy.now())))
      return WireReadAnswer(
        status: 204,
        headers: [
          ("X-Accel-Expires", String(age)), (WireReadAnswer.Header.cacheControl, "private, max-age=\(age)"),
        ], body: Data())
    } catch {
      return Self.refusal(error)
    }
  }

  /// `Cache-Control` for an answer: shared for `age` seconds and stale for `stale` more, cut to the
  /// token's end, or `private, no-store` for a read by query.
  private static func caching(_ shareable: Bool, _ age: Int, _ stale: Int, until end: Int?, now: Int)
    -> String
  {
    guard shareable, let end else { return "private, no-store" }
    let left = max(0, end - now)
    let kept = min(age, left)
    let staleKept = min(stale, left - kept)
    return staleKept > 0
      ? "public, max-age=\(kept), stale-while-revalidate=\(staleKept)" : "public, max-age=\(kept)"
  }

  /// The answer refusing a read for `error`: its status (401 for `unauthorized`, 403 for a token, 429 for
  /// a limit or rate, with `Retry-After`, 500 for `queryFailed`, 400 otherwise), `no-store`, and its
  /// `error` message. A transport answers the reads it refuses itself (credentials, its own limits) with it.
  /// - Complexity: O(size of the error's detail).
  public static func refusal(_ error: WireError) -> WireReadAnswer {
    let status: Int
    switch error.code {
    case .unauthorized: status = 401
    case .readTokenInvalid, .readTokenExpired: status = 403
    case .limitReached, .rateLimited: status = 429
    case .queryFailed: status = 500
    default: status = 400
    }
    var headers: [(name: String, value: String)] = [
      (WireReadAnswer.Header.cacheControl, "no-store"),
      (WireReadAnswer.Header.contentType, "application/json"),
    ]
    if let retryAfter = error.retryAfter {
      headers.append((WireReadAnswer.Header.retryAfter, String(Int(retryAfter.rounded(.up)))))
    }
    return WireReadAnswer(
      status: status, headers: headers, body: WireCoder().encode(WireMessage<Section>.error(error)))
  }

  /// What a read needs of a message it sends: its type, stream and the version the reader holds after it.
  struct Head: Decodable {
    var type: String
    var stream: String?
    var version: Int?
    var to: Int?
  }

  /// The head of `message`; `nil` when it does not read.
  /// - Complexity: O(size of the message): its JSON is scanned, its content not decoded.
  static func head(of message: Data) -> Head? { try? JSONDecoder().decode(Head.self, from: message) }
}

/// The messages a read's session sends, in order, and a wait for the next one.
final class ReadMessages: Sendable {
  // Guard map: `state` (the messages, and the one waiter for more) is read and written only under its lock;
  // the waiter is resumed after it is released.
  private let state = Locked<
    (messages: [Data], waiter: (count: Int, continuation: CheckedContinuation<Bool, Never>)?)
  >(
    ([], nil))

  /// The messages sent so far.
  var messages: [Data] { state.withLock(\.messages) }

  /// Keeps one message, and wakes the wait for it.
  func append(_ message: Data) {
    let woken = state.withLock { state -> CheckedContinuation<Bool, Never>? in
      state.messages.append(message)
      guard let waiter = state.waiter, state.messages.count > waiter.count else { return nil }
      state.waiter = nil
      return waiter.continuation
    }
    woken?.resume(returning: true)
  }

  /// Returns `true` once more than `count` messages were sent, `false` when `seconds` passed first.
  func arrival(after count: Int, within seconds: Double) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
      group.addTask { await self.wait(after: count) }
      group.addTask {
        try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
        return false
      }
      let first = await group.next() ?? false
      group.cancelAll()
      self.cancelWait()
      return first
    }
  }

  private func wait(after count: Int) async -> Bool {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
        let ready = state.withLock { state -> Bool? in
          if state.messages.count > count { return true }
          if Task.isCancelled { return false }
          state.waiter = (count, waiter)
          return nil
        }
        if let ready { waiter.resume(returning: ready) }
      }
    } onCancel: {
      cancelWait()
    }
  }

  private func cancelWait() {
    state.withLock { state in
      defer { state.waiter = nil }
      return state.waiter?.continuation
    }?.resume(returning: false)
  }
}

extension String {
  fileprivate func leftPadded(to length: Int) -> String {
    String(repeating: "0", count: max(0, length - count)) + self
  }
}
