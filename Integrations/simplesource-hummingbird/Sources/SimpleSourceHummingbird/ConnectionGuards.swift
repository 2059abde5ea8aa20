// What the server does with connections that break the protocol or stall: a request it cannot parse is
// answered 400 (431 for headers over the limit) and closed, a request that does not arrive in time is closed,
// an upgraded connection that sends an unmasked frame is closed with 1002, and one that does not answer a ping
// by the next is closed with 1001.

import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOWebSocket
import SimpleSourceWire

/// How long the server waits for a client, in each state of an HTTP connection.
public struct ConnectionLimits: Sendable {
  /// From the connection opening to the first request's whole head.
  public var firstRequest = Duration.seconds(10)
  /// From a request's head to the end of its body.
  public var body = Duration.seconds(10)
  /// From a response's end to the next request's head (an idle keep-alive connection).
  public var idle = Duration.seconds(30)
  /// The largest request head (request line and headers), in bytes.
  public var headBytes = 16 * 1024
  /// The most WebSockets one client address may hold open at once: past it, a new one's upgrade is
  /// answered 429 with a reason naming the limit (or, racing past that check, it is closed as it opens with
  /// 1008, policy violation, and the same reason), and the others go on.
  /// `Int.max`: no limit, and no rate per address either (behind a proxy, every client has the proxy's
  /// address: limit there instead).
  public var webSocketsPerAddress = 64
  /// The WebSockets one client address may open, sustained and at once: past it, a new one's upgrade is
  /// answered 429 with `Retry-After` and a reason `rateLimited: retryAfter <seconds>` (racing past that
  /// check, closed as it opens with 1013, try again later), so that connecting and closing in a loop costs
  /// the client its own time and the server one HTTP answer. Its sessions' subscribes and
  /// fresh views are rated per address too (the service's `WireLimits`, the address as their origin).
  /// `nil`: no rate.
  public var webSocketsOpenedPerAddress: WireRate? = WireRate(perSecond: 8, burst: 64)
  /// The most WebSockets one user (the key ``WireWebSockets`` reads from a session's scope) may hold open
  /// at once, from any addresses: past it, a new one's upgrade is answered 429 with a reason naming the
  /// limit (racing past that check, closed as it opens with 1008). Scopes with no user (guests) are held
  /// to the limit per address instead. `Int.max`: no limit.
  public var webSocketsPerUser = 16

  /// How often the server pings each WebSocket; one that has not answered the previous ping is closed
  /// (1001). The pings are a timer of the connection's event loop, with no task per connection. A
  /// proxy in front (nginx's `proxy_read_timeout`) sees these pings as the instance's sign of life, so a
  /// hung instance's WebSockets are closed within its timeout and their clients resume on another one.
  public var webSocketPing = Duration.seconds(30)
  /// How long a WebSocket the server closes (refused as it opens, or the server shutting down) waits for the
  /// client's close frame before its connection is closed anyway.
  public var webSocketClose = Duration.seconds(5)
  /// The most TCP connections one address may hold open at once, WebSockets and silent ones alike: past
  /// it, a new one is closed as it is accepted, before anything is read, so that one address cannot take
  /// the descriptors others need. Not applied when ``webSocketsPerAddress`` is `Int.max` (behind a proxy).
  public var connectionsPerAddress = 256
  /// The most TCP connections the server holds open at once: past it, a new one is closed as it is
  /// accepted, so that the process never runs out of descriptors (an `accept` that fails for want of one
  /// leaves the client waiting). By default the process's descriptor limit, raised to its hard limit by
  /// ``raiseDescriptorLimit()``, less ``descriptorReserve``.
  public var connections = ConnectionLimits.descriptorLimit() - ConnectionLimits.descriptorReserve
  /// The descriptors kept for the rest of the process: its database, its log, the listening socket.
  public static let descriptorReserve = 64

  /// Whether limits and rates per address apply: not when every client has one address (a proxy's).
  var limitsAddresses: Bool { webSocketsPerAddress != .max }

  /// The defaults: 10 s, 10 s, 30 s, 16 KiB, 64 WebSockets per address (8 opened a second, 64 at once)
  /// and 16 per user, pings every 30 s and 5 s for a client to answer the server's close, 256 connections per address, and as many connections in all as the
  /// descriptor limit allows less the reserve.
  /// - Complexity: O(1) (one `getrlimit` for ``connections``).
  public init() {}

  /// The process's descriptor limit (its soft limit), at least the reserve and one more.
  /// - Complexity: O(1): one `getrlimit`.
  public static func descriptorLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
    return max(descriptorReserve + 1, Int(clamping: limit.rlim_cur))
  }

  /// Raises the process's descriptor limit to its hard limit (at most 1,048,576); returns the limit now.
  /// - Complexity: O(1): a `getrlimit` and at most one `setrlimit`.
  @discardableResult
  public static func raiseDescriptorLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return descriptorLimit() }
    let wanted = min(limit.rlim_max, 1_048_576)
    if limit.rlim_cur < wanted {
      limit.rlim_cur = wanted
      _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return descriptorLimit()
  }
}

/// The open TCP connections, in all and by address, held to ``ConnectionLimits/connections`` and
/// ``ConnectionLimits/connectionsPerAddress``; shared by every connection of a server.
final class ConnectionCounts: Sendable {
  private let counts = NIOLockedValueBox((total: 0, byAddress: AddressCounts()))
  let limits: ConnectionLimits

  init(limits: ConnectionLimits) { self.limits = limits }

  /// Counts a connection from `address`, unless the server or the address holds its limit already;
  /// returns whether it counted.
  /// - Complexity: O(1) expected.
  func enter(_ address: String) -> Bool {
    counts.withLockedValue { counts in
      guard counts.total < limits.connections else { return false }
      if limits.limitsAddresses {
        guard counts.byAddress.enter(address, limit: limits.connectionsPerAddress) else { return false }
      }
      counts.total += 1
      return true
    }
  }

  /// A connection counted by ``enter(_:)`` closed.
  /// - Complexity: O(1) expected.
  func leave(_ address: String) {
    counts.withLockedValue { counts in
      counts.total -= 1
      if limits.limitsAddresses { counts.byAddress.leave(address) }
    }
  }

  /// How many connections are open (tests read it).
  var total: Int { counts.withLockedValue { $0.total } }
}

/// The open WebSockets of each client address (or each user), held to a limit such as
/// ``ConnectionLimits/webSocketsPerAddress``.
struct AddressCounts {
  /// How many WebSockets each address holds open; an address with none is absent.
  private(set) var open: [String: Int] = [:]

  /// Counts one more WebSocket of `address`, unless it holds `limit` already; returns whether it counted.
  /// - Complexity: O(1) expected.
  mutating func enter(_ address: String, limit: Int) -> Bool {
    let count = open[address, default: 0]
    guard count < limit else { return false }
    open[address] = count + 1
    return true
  }

  /// One WebSocket of `address` closed.
  /// - Precondition: it was counted by ``enter(_:limit:)``.
  /// - Complexity: O(1) expected.
  mutating func leave(_ address: String) {
    guard let count = open[address] else {
      preconditionFailure("SimpleSourceHummingbird: a socket left uncounted")
    }
    open[address] = count > 1 ? count - 1 : nil
  }
}

/// Why a WebSocket upgrade is refused before it is made: answered 429 with `reason` as the body, and
/// `Retry-After` (whole seconds, rounded up) when the client may retry after a wait.
struct UpgradeRefusal: Sendable {
  /// Why an upgrade from an address (its IP address) asking for a request is refused now, if it is.
  typealias Check = @Sendable (_ address: String, _ request: WebSocketUpgradeRequest) -> UpgradeRefusal?
  /// Seconds until the client may retry; `nil` for a limit that a wait alone does not lift.
  var retryAfter: Double?
  /// The body: the refusal's code and why, as a WebSocket's close reason would say it.
  var reason: String
}

/// Sits after NIO's HTTP request decoder, before Hummingbird's handlers: answers a request the decoder
/// refuses (400, or 431 for a head over the limit) and closes the connection, and closes a connection
/// whose request does not arrive within its time (408 for the first request, nothing for an idle one). A
/// request to upgrade to a WebSocket that the limits refuse already (`refusal`: an address past its rate or
/// its WebSockets, a user past theirs) is answered 429 (with `Retry-After` for a rate) and closed, before
/// the upgrade's work; any other upgrade passes, and the handler removes itself: the WebSocket's own checks
/// take over.
final class RequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias InboundOut = HTTPServerRequestPart
  typealias OutboundIn = HTTPServerResponsePart
  typealias OutboundOut = HTTPServerResponsePart

  enum State {
    /// No request yet (`first`), or idle after a response.
    case awaitingHead(first: Bool)
    /// A request's body is arriving.
    case readingBody
    /// The request was read; the server is answering.
    case responding
  }

  let limits: ConnectionLimits
  /// Why an upgrade from an address to a URI is refused now, if it is.
  let refusal: UpgradeRefusal.Check
  private var state = State.awaitingHead(first: true)
  private var timer: Scheduled<Void>?

  init(limits: ConnectionLimits, refusal: @escaping UpgradeRefusal.Check = { _, _ in nil }) {
    self.limits = limits
    self.refusal = refusal
  }

  func handlerAdded(context: ChannelHandlerContext) { arm(context) }
  func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head(let head):
      if head.headers.contains(name: "upgrade") {
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        let request = WebSocketUpgradeRequest(head: head, address: address)
        if let refused = refusal(address, request) {
          // Refused as a plain HTTP answer: no upgrade, no WebSocket, no task for it.
          let headers = refused.retryAfter.map { [("retry-after", String(Int($0.rounded(.up))))] } ?? []
          refuse(context, .tooManyRequests, headers: headers, body: refused.reason)
          return
        }
        // A WebSocket from here on: no HTTP response will pass this handler again.
        timer?.cancel()
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        return
      }
      state = .readingBody
    case .body:
      break
    case .end:
      state = .responding
    }
    arm(context)
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if case .end = unwrapOutboundIn(data) {
      state = .awaitingHead(first: false)
      arm(context)
    }
    context.write(data, promise: promise)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard let error = error as? HTTPParserError else {
      context.fireErrorCaught(error)
      return
    }
    // The decoder cannot go on: answer, unless a response is already being written, and close.
    if case .responding = state {
      context.close(promise: nil)
    } else {
      let status: HTTPResponseStatus = error == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
      refuse(context, status)
    }
  }

  /// Starts the timer of the current state (none while the server answers).
  private func arm(_ context: ChannelHandlerContext) {
    timer?.cancel()
    let limit: Duration
    switch state {
    case .awaitingHead(let first): limit = first ? limits.firstRequest : limits.idle
    case .readingBody: limit = limits.body
    case .responding:
      timer = nil
      return
    }
    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
    timer = context.eventLoop.scheduleTask(in: TimeAmount(limit)) {
      let (handler, context) = bound.value
      switch handler.state {
      case .awaitingHead(first: false): context.close(promise: nil)
      case .awaitingHead(first: true), .readingBody: handler.refuse(context, .requestTimeout)
      case .responding: break
      }
    }
  }

  /// Answers `status` with `headers` and `body` (none by default), and closes the connection once it is
  /// written.
  private func refuse(
    _ context: ChannelHandlerContext, _ status: HTTPResponseStatus, headers: [(String, String)] = [],
    body: String = ""
  ) {
    timer?.cancel()
    state = .responding
    var fields = HTTPHeaders(headers)
    fields.add(name: "connection", value: "close")
    fields.add(name: "content-length", value: String(body.utf8.count))
    let head = HTTPResponseHead(version: .http1_1, status: status, headers: fields)
    context.write(wrapOutboundOut(.head(head)), promise: nil)
    if !body.isEmpty {
      context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
    }
    let channel = context.channel
    context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
  }
}

/// An upgraded connection's own checks, on its event loop, in one handler after the WebSocket frame decoder:
/// - a frame from a client must be masked (RFC 6455, 5.1): one that is not closes the connection with 1002
///   (protocol error);
/// - the connection is pinged every `period` with a random payload, and closed with 1001 (going away) when
///   the last ping was not answered by a pong carrying its payload by the next.
///
/// The pings are a timer of the event loop, cancelled with the channel: no task, and nothing kept once the
/// connection closes. They stop once a close frame passes either way (the closing handshake is
/// Hummingbird's). Every frame that passes the mask check is passed on (pongs too).
final class WebSocketGuard: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = WebSocketFrame
  typealias InboundOut = WebSocketFrame
  typealias OutboundIn = WebSocketFrame
  typealias OutboundOut = WebSocketFrame

  /// How often the connection is pinged, and how long a ping may go unanswered.
  let period: TimeAmount
  private var closing = false
  private var timer: Scheduled<Void>?
  /// The payload of the last ping, until a pong carries it back.
  private var unanswered: UInt64?

  init(period: TimeAmount) { self.period = period }

  func handlerAdded(context: ChannelHandlerContext) { arm(context) }
  func handlerRemoved(context: ChannelHandlerContext) { stop() }

  func channelInactive(context: ChannelHandlerContext) {
    stop()
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !closing else { return }
    let frame = unwrapInboundIn(data)
    guard frame.maskKey != nil else {
      close(context, .protocolError)
      return
    }
    if frame.opcode == .connectionClose { stop() }
    if frame.opcode == .pong, let unanswered {
      var payload = frame.unmaskedData
      if payload.readableBytes == 8, payload.readInteger(as: UInt64.self) == unanswered {
        self.unanswered = nil
      }
    }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if unwrapOutboundIn(data).opcode == .connectionClose { stop() }
    context.write(data, promise: promise)
  }

  /// Schedules the next ping (or the close, when the last one goes unanswered) a period from now.
  private func arm(_ context: ChannelHandlerContext) {
    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
    timer = context.eventLoop.scheduleTask(in: period) {
      let (handler, context) = bound.value
      handler.timer = nil
      guard !handler.closing, context.channel.isActive else { return }
      guard handler.unanswered == nil else {
        handler.close(context, .goingAway, reason: "Ping timeout")
        return
      }
      let payload = UInt64.random(in: .min ... .max)
      handler.unanswered = payload
      var data = context.channel.allocator.buffer(capacity: 8)
      data.writeInteger(payload)
      context.writeAndFlush(
        handler.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .ping, data: data)), promise: nil)
      handler.arm(context)
    }
  }

  private func stop() {
    timer?.cancel()
    timer = nil
  }

  /// Writes a close frame with `code` (and `reason`), then closes the connection; reads nothing more.
  private func close(_ context: ChannelHandlerContext, _ code: WebSocketErrorCode, reason: String = "") {
    closing = true
    stop()
    var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
    data.write(webSocketErrorCode: code)
    data.writeString(reason)
    let channel = context.channel
    context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
      .whenComplete { _ in channel.close(promise: nil) }
  }

  /// Adds the guard after `channel`'s WebSocket frame decoder, pinging every `period`; on the channel's
  /// event loop.
  static func add(to channel: any Channel, period: TimeAmount) throws {
    let decoder = try channel.pipeline.syncOperations.handler(
      type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
    try channel.pipeline.syncOperations.addHandler(WebSocketGuard(period: period), position: .after(decoder))
  }
}
