// A `WireService` served over WebSockets: each upgraded connection is one session of the service, its scope
// read from the upgrade request, its batches written as frames shared by every subscriber of a view, and
// the limits per address and per user held before the upgrade (429) and as it opens (1008, 1013).

import Hummingbird
import HummingbirdCore
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import SimpleSource
import Foundation

/// What a WebSocket upgrade asks for, as its scope is read from it: the request's URI and headers, and the
/// client's address.
///
/// The same value is given before the upgrade is made (to refuse one past its user's limit with an HTTP
/// answer) and once it is made (to open its session), so a scope must be a pure function of it.
public struct WebSocketUpgradeRequest: Sendable {
  /// The request's URI: path and query.
  public var uri: URI
  /// The request's headers (a session cookie, an `Authorization` header).
  public var headers: HTTPFields
  /// The client's IP address, as the connection sees it (a proxy's, behind one); `nil` when unknown.
  public var address: String?

  /// A request for `uri` with `headers`, from `address`.
  /// - Complexity: O(1).
  public init(uri: URI, headers: HTTPFields = [:], address: String? = nil) {
    self.uri = uri
    self.headers = headers
    self.address = address
  }
}

/// Serves a `WireService` over WebSockets with Hummingbird: one session of the service per connection.
///
/// ```swift
/// let sockets = WireWebSockets(service: service) { request in
///   try User(verifying: request.headers[.authorization])   // the session's scope; throwing refuses it
/// }
/// let router = Router(context: WireRequestContext.self)   // the application's HTTP routes
/// let app = Application(router: router, server: sockets.server(path: "/live"))
/// try await app.runService()
/// ```
///
/// What each connection gets, so that the service's own code holds none of it:
/// - **One frame per batch.** The service encodes a view's batch once per format; this transport frames
///   it once per event loop and writes the same bytes to every connection of the loop that follows the view,
///   in one task per loop, below the WebSocket encoder (the service's `WireSink`). A connection over its
///   high-water mark refuses the frame, and its session catches up by itself when it drains.
/// - **No task per idle WebSocket.** An upgraded connection is served by its channel's handlers on its
///   event loop: frames are assembled into messages there, and a task gives them to the session only while
///   some wait (reads stop while 8 do). What an idle WebSocket holds is its pipeline, its session and the
///   session's subscription.
/// - **Time limits and pings** (``ConnectionLimits``): a request head, a body, an idle connection, and a
///   WebSocket that does not answer its ping are each closed within their limit. A client's pings are
///   answered, its close frame is answered and the connection closed; the server's own close waits
///   ``ConnectionLimits/webSocketClose`` for the client's answer. When the server shuts down, every
///   WebSocket is closed with 1001.
/// - **Limits before the upgrade.** An upgrade past its address's rate of openings, its address's
///   WebSockets or its user's is answered `429 Too Many Requests` with the reason as body (and
///   `Retry-After` for the rate) and closed: it costs no WebSocket. One that races past that check is closed
///   as it opens: 1013 (try again later) for the rate, 1008 (policy violation) for a count, with the same
///   reason.
/// - **Protocol checks.** A request the decoder cannot read is answered 400 (431 for a head over
///   ``ConnectionLimits/headBytes``), an upgrade to another path or whose scope does not read 400, an
///   unmasked client frame closes the WebSocket with 1002 (as does a fragment out of place), a text message
///   that is not UTF-8 with 1007, a message over `maxMessageBytes` (in one frame or in several) with 1009;
///   a binary message is refused with the wire's `malformed` error and the connection goes on.
/// - **An origin per address.** Sessions are given their address as origin, so the service's
///   `WireLimits` per origin (views, subscribes and fresh views) hold one address to its budget whatever
///   users it spreads its connections over; not behind a proxy (``ConnectionLimits/webSocketsPerAddress``
///   `Int.max`), where every client has the proxy's address.
public final class WireWebSockets<Section: SectionType, Scope: Hashable & Sendable>: Sendable
where Section: Codable, Section.ID: Codable, Section.Item: Codable, Section.Item.ID: Codable {
  /// The scope of a connection's session, read from its upgrade request; throwing refuses the upgrade.
  public typealias ScopeOf = @Sendable (WebSocketUpgradeRequest) throws -> Scope

  let service: WireService<Section, Scope>
  let limits: ConnectionLimits
  let maxMessageBytes: Int
  let scope: ScopeOf
  let user: @Sendable (Scope) -> String?
  let receiving: @Sendable (String) async -> Void
  /// The open WebSockets of each address, against ``ConnectionLimits/webSocketsPerAddress``.
  let sockets = NIOLockedValueBox(AddressCounts())
  /// The open WebSockets of each user, against ``ConnectionLimits/webSocketsPerUser``.
  let userSockets = NIOLockedValueBox(AddressCounts())
  /// The WebSockets each address opened lately, against ``ConnectionLimits/webSocketsOpenedPerAddress``.
  let opened: NIOLockedValueBox<WireRateBuckets<String>>

  /// Serves `service`.
  /// - Parameters:
  ///   - service: The service each connection is a session of.
  ///   - limits: The time limits, pings, and limits per address and per user.
  ///   - maxMessageBytes: The largest message (and frame) a client may send; a larger one closes its
  ///     WebSocket with 1009. Also the most the server buffers of one client's message.
  ///   - user: The key a scope counts under against ``ConnectionLimits/webSocketsPerUser``; `nil` (a guest,
  ///     or by default every scope): not counted per user, only per address.
  ///   - receiving: Runs before each text message is given to its session, with the message: a service
  ///     that follows a log of several instances reads the log there up to a version a client resumes from.
  ///   - scope: The scope of a connection's session, read from its upgrade request (a user verified from a
  ///     cookie or a token); throwing refuses the upgrade. A pure function of the request: it is read before
  ///     the upgrade (for the limit per user) and again as the WebSocket opens.
  /// - Complexity: O(1).
  public init(
    service: WireService<Section, Scope>, limits: ConnectionLimits = ConnectionLimits(),
    maxMessageBytes: Int = 16 * 1024, user: @escaping @Sendable (Scope) -> String? = { _ in nil },
    receiving: @escaping @Sendable (String) async -> Void = { _ in },
    scope: @escaping ScopeOf
  ) {
    self.service = service
    self.limits = limits
    self.maxMessageBytes = maxMessageBytes
    self.scope = scope
    self.user = user
    self.receiving = receiving
    opened = NIOLockedValueBox(
      WireRateBuckets(rate: limits.webSocketsOpenedPerAddress ?? WireRate(perSecond: 1, burst: 1)))
  }

  /// The server for `Application(router:server:)`: HTTP/1 answered by the application's router, and
  /// WebSockets at `path` (whatever their query), each one a session of the service, every connection
  /// guarded by the limits given to ``init(service:limits:maxMessageBytes:user:receiving:scope:)`` (its
  /// pings among them). An upgrade to another path, or one whose scope does not read, is answered 400.
  ///
  /// An upgraded connection is served by its channel's handlers on its event loop: no task waits for it
  /// while it idles. Its messages are given to its session by a task that lives while some wait, and reads
  /// stop while 8 of them wait. When the server shuts down, each WebSocket is closed with 1001.
  /// - Complexity: O(1); each connection then costs O(1) to guard, and its session.
  public func server(path: String) -> HTTPServerBuilder {
    let counts = ConnectionCounts(limits: limits)
    return HTTPServerBuilder { responder in
      WireHTTPChannel(
        responder: responder, path: path, limits: self.limits, maxMessageBytes: self.maxMessageBytes,
        counts: counts, refusal: { address, head in self.upgradeRefusal(address, head) },
        accepts: { request in (try? self.scope(request)) != nil },
        open: { channel, request in try self.open(channel, request) })
    }
  }

  /// Opens the session of an upgraded connection on `channel`, on its event loop: its pings, its raw
  /// writer, its messages; or, past a limit that the check before the upgrade let through, a close frame
  /// naming the limit.
  func open(_ channel: any Channel, _ request: WebSocketUpgradeRequest) throws {
    let address = request.address ?? "unknown"
    let wait = TimeAmount(limits.webSocketClose)
    try WebSocketGuard.add(to: channel, period: TimeAmount(limits.webSocketPing))
    guard let scope = try? scope(request) else {
      try channel.pipeline.syncOperations.addHandler(
        SocketMessageHandler(refusing: .policyViolation, reason: "unauthorized", closeWait: wait))
      return
    }
    let user = user(scope)
    if case .refused(let code, let reason) = admit(address: address, user: user) {
      try channel.pipeline.syncOperations.addHandler(
        SocketMessageHandler(refusing: code, reason: reason, closeWait: wait))
      return
    }
    channel.closeFuture.whenComplete { _ in self.leave(address: address, user: user) }
    // Messages are written as pre-framed text frames below the WebSocket encoder: a batch is framed once
    // for every client of its view and loop (the sink); a client's own messages (its reset, answers,
    // catching up after its connection was full) are framed for it and awaited (send).
    let writer = try SocketWriter.install(on: channel)
    let session = service.session(
      scope: scope, origin: limits.limitsAddresses ? address : nil, sink: writer.sink
    ) { bytes in try await writer.send(bytes) }
    let receiving = receiving
    try channel.pipeline.syncOperations.addHandler(
      SocketMessageHandler(
        maxMessageBytes: maxMessageBytes, closeWait: wait,
        deliver: { message in
          switch message {
          case .text(let text):
            await receiving(text)
            await session.receive(text: text)
          case .binary:
            await session.refuse(WireError(.malformed, "messages are JSON text, not binary"))
          }
        },
        close: { await session.close() }))
  }

  /// What an opening WebSocket is told: served, or closed with a code and a reason.
  enum Admission {
    case served
    case refused(WebSocketErrorCode, String)
  }

  /// Counts a WebSocket of `address` and `user` opening, unless a limit refuses it: then why, and nothing
  /// counted.
  /// - Complexity: O(1) expected.
  func admit(address: String, user: String?) -> Admission {
    if limits.limitsAddresses, let rate = limits.webSocketsOpenedPerAddress,
      case .refused(let wait) = opened.withLockedValue({
        $0.take(for: address, now: ProcessInfo.processInfo.systemUptime)
      })
    {
      return .refused(.unknown(1013), rateReason(wait: wait, rate: rate))
    }
    guard sockets.withLockedValue({ $0.enter(address, limit: limits.webSocketsPerAddress) }) else {
      return .refused(.policyViolation, addressReason)
    }
    if let user {
      guard userSockets.withLockedValue({ $0.enter(user, limit: limits.webSocketsPerUser) }) else {
        sockets.withLockedValue { $0.leave(address) }
        return .refused(.policyViolation, userReason)
      }
    }
    return .served
  }

  /// A WebSocket counted by ``admit(address:user:)`` closed.
  func leave(address: String, user: String?) {
    sockets.withLockedValue { $0.leave(address) }
    if let user { userSockets.withLockedValue { $0.leave(user) } }
  }

  /// Why an upgrade is refused before it is made, if it is: read from the counts and the rate without
  /// taking from them (``admit(address:user:)`` takes, once the upgrade is made).
  /// - Complexity: O(1) expected, plus reading the request's scope.
  func upgradeRefusal(_ address: String, _ request: WebSocketUpgradeRequest) -> UpgradeRefusal? {
    if limits.limitsAddresses {
      if let rate = limits.webSocketsOpenedPerAddress,
        case .refused(let wait) = opened.withLockedValue({
          $0.check(for: address, now: ProcessInfo.processInfo.systemUptime)
        })
      {
        let seconds = jittered(wait)
        return UpgradeRefusal(
          retryAfter: seconds, reason: rateReason(wait: seconds, rate: rate, jitter: false))
      }
      if sockets.withLockedValue({ $0.open[address, default: 0] }) >= limits.webSocketsPerAddress {
        return UpgradeRefusal(reason: addressReason)
      }
    }
    if let scope = try? scope(request), let user = user(scope),
      userSockets.withLockedValue({ $0.open[user, default: 0] }) >= limits.webSocketsPerUser
    {
      return UpgradeRefusal(reason: userReason)
    }
    return nil
  }

  /// The wait and up to half of it again, so that refused clients do not return together.
  func jittered(_ wait: Double) -> Double { wait + wait * Double.random(in: 0..<0.5) }

  /// `rateLimited: retryAfter 1.250 (...)`.
  func rateReason(wait: Double, rate: WireRate, jitter: Bool = true) -> String {
    let seconds = jitter ? jittered(wait) : wait
    return
      "rateLimited: retryAfter \(String(format: "%.3f", seconds)) (this address opens at most \(rate) WebSockets)"
  }

  var addressReason: String {
    "tooManyConnections: this address holds \(limits.webSocketsPerAddress) WebSockets, the most allowed"
  }

  var userReason: String {
    "tooManyConnections: this user holds \(limits.webSocketsPerUser) WebSockets, the most allowed"
  }
}
