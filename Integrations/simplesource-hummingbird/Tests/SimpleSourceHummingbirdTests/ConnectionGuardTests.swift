// Bad bytes, slow clients and clients past their limits on a real socket: each class of input answered as HTTP or RFC 6455 says, and the
// connection closed; nothing waits on a clock but the server's own limits.

import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SimpleSource
import Testing

@testable import SimpleSourceHummingbird

/// Collects what the server sends until it closes the connection.
final class RawCollector: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer
  let received = NIOLockedValueBox<[UInt8]>([])
  let closed: EventLoopPromise<[UInt8]>

  init(closed: EventLoopPromise<[UInt8]>) { self.closed = closed }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let bytes = unwrapInboundIn(data).readableBytesView
    received.withLockedValue { $0 += bytes }
  }

  func channelInactive(context: ChannelHandlerContext) { closed.succeed(received.withLockedValue { $0 }) }
}

/// Opens a TCP connection to `port`, writes `chunks` (each after the previous was written), and returns
/// everything the server sent once it closed the connection.
func exchange(port: Int, _ chunks: [[UInt8]]) async throws -> [UInt8] {
  let group = MultiThreadedEventLoopGroup.singleton
  let closed = group.next().makePromise(of: [UInt8].self)
  let channel = try await ClientBootstrap(group: group)
    .channelInitializer { channel in
      channel.eventLoop.makeCompletedFuture {
        try channel.pipeline.syncOperations.addHandler(RawCollector(closed: closed))
      }
    }
    .connect(host: "127.0.0.1", port: port).get()
  for chunk in chunks {
    try await channel.writeAndFlush(ByteBuffer(bytes: chunk))
  }
  return try await closed.futureResult.get()
}

/// Tells when the server's bytes first hold `awaited`.
final class AwaitingCollector: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer
  let received = NIOLockedValueBox<[UInt8]>([])
  let awaited: [UInt8]
  let arrived: EventLoopPromise<Void>

  init(awaiting text: String, arrived: EventLoopPromise<Void>) {
    awaited = Array(text.utf8)
    self.arrived = arrived
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let bytes = unwrapInboundIn(data).readableBytesView
    let all = received.withLockedValue {
      $0 += bytes
      return $0
    }
    if all.indices.contains(where: { all[$0...].starts(with: awaited) }) { arrived.succeed() }
  }

  func channelInactive(context: ChannelHandlerContext) { arrived.succeed() }
}

/// Opens a TCP connection to `port`, writes `bytes`, and returns the open channel once the server's bytes
/// hold `awaited` (or it closed).
func open(port: Int, _ bytes: [UInt8], awaiting awaited: String) async throws -> any Channel {
  try await openReading(port: port, bytes, awaiting: awaited).channel
}

/// ``open(port:_:awaiting:)``, and the server's bytes received by then.
func openReading(port: Int, _ bytes: [UInt8], awaiting awaited: String) async throws -> (
  channel: any Channel, received: String
) {
  let group = MultiThreadedEventLoopGroup.singleton
  let arrived = group.next().makePromise(of: Void.self)
  let collector = AwaitingCollector(awaiting: awaited, arrived: arrived)
  let channel = try await ClientBootstrap(group: group)
    .channelInitializer { channel in
      channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
    }
    .connect(host: "127.0.0.1", port: port).get()
  try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
  try await arrived.futureResult.get()
  return (channel, String(decoding: collector.received.withLockedValue { $0 }, as: UTF8.self))
}

/// The HTTP status line of `bytes`.
func statusLine(_ bytes: [UInt8]) -> String {
  String(decoding: bytes.prefix { $0 != 13 }, as: UTF8.self)
}

/// A WebSocket handshake for `/live`.
let handshake = Array(
  """
  GET /live HTTP/1.1\r
  Host: localhost\r
  Upgrade: websocket\r
  Connection: Upgrade\r
  Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
  Sec-WebSocket-Version: 13\r
  \r

  """.utf8)

/// A client's WebSocket text frame, masked unless `masked` is false.
func textFrame(_ payload: [UInt8], masked: Bool = true) -> [UInt8] {
  precondition(payload.count < 1 << 16)
  let mask: UInt8 = masked ? 0x80 : 0
  var frame: [UInt8] =
    payload.count < 126
    ? [0x81, UInt8(payload.count) | mask]
    : [0x81, 126 | mask, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
  guard masked else { return frame + payload }
  let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
  frame += key
  frame += payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
  return frame
}

/// The close code of the first close frame (opcode 8) in the server's WebSocket bytes after the handshake.
func closeCode(in bytes: [UInt8]) -> Int? {
  guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: [13, 10, 13, 10]) }) else {
    return nil
  }
  var index = end + 4
  while index + 1 < bytes.count {
    let opcode = bytes[index] & 0x0F
    var length = Int(bytes[index + 1] & 0x7F)
    var start = index + 2
    if length == 126 {
      length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
      start += 2
    }
    if opcode == 8, start + 1 < bytes.count { return Int(bytes[start]) << 8 | Int(bytes[start + 1]) }
    index = start + length
  }
  return nil
}

@Suite("Connections the server guards", .timeLimit(.minutes(1)))
struct ConnectionGuardTests {
  /// Short limits, so that the slow clients' cases end quickly; the defaults are 10 s, 10 s and 30 s.
  static let limits: ConnectionLimits = {
    var limits = ConnectionLimits()
    limits.firstRequest = .milliseconds(300)
    limits.body = .milliseconds(300)
    limits.idle = .milliseconds(600)
    limits.webSocketsPerAddress = 3
    limits.webSocketsPerUser = 1
    return limits
  }()

  /// Runs `body` with the port of a fresh notes service served with `limits`, each address's views held
  /// to `viewsPerOrigin`.
  func serving(
    limits: ConnectionLimits = Self.limits, viewsPerOrigin: Int = 32,
    _ body: @escaping @Sendable (Int) async throws -> Void
  ) async throws {
    let notes = try await NotesServer(limits: limits, viewsPerOrigin: viewsPerOrigin)
    try await notes.application.test(.live) { client in try await body(try #require(client.port)) }
  }

  /// Requests the decoder cannot read, and the status each is answered with.
  static let unreadable: [(name: String, bytes: [UInt8], status: String)] = {
    let garbage: [UInt8] = Array("GARBAGE\r\n\r\n".utf8)
    var badByte: [UInt8] = Array("GET /".utf8)
    badByte.append(0xFF)
    badByte += Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    var bigHeader: [UInt8] = Array("GET / HTTP/1.1\r\nHost: x\r\nX-Big: ".utf8)
    bigHeader += [UInt8](repeating: 97, count: 64 * 1024)
    bigHeader += Array("\r\n\r\n".utf8)
    return [
      ("not HTTP", garbage, "HTTP/1.1 400 Bad Request"),
      ("0xFF in the path", badByte, "HTTP/1.1 400 Bad Request"),
      ("a 64 KiB header", bigHeader, "HTTP/1.1 431 Request Header Fields Too Large"),
    ]
  }()

  @Test(
    "a request line that is not HTTP, a raw 0xFF byte in the path, a header over the limit: 400 or 431, closed"
  )
  func unreadableRequests() async throws {
    try await serving { port in
      for (name, bytes, status) in Self.unreadable {
        let answer = try await exchange(port: port, [bytes])
        #expect(statusLine(answer) == status, "\(name)")
      }
    }
  }

  @Test("a request head or body that does not arrive in time: 408 and closed; an idle connection: closed")
  func slowClients() async throws {
    try await serving { port in
      let head = try await exchange(port: port, [Array("GET / HT".utf8)])
      #expect(statusLine(head) == "HTTP/1.1 408 Request Timeout")
      let body = try await exchange(
        port: port, [Array("POST /notes HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{\"ti".utf8)])
      #expect(statusLine(body) == "HTTP/1.1 408 Request Timeout")
      let silent = try await exchange(port: port, [])
      #expect(statusLine(silent) == "HTTP/1.1 408 Request Timeout")
      // One whole request answered, then nothing: the connection is closed after its idle limit.
      let idle = try await exchange(port: port, [Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)])
      #expect(statusLine(idle) == "HTTP/1.1 200 OK")
      #expect(String(decoding: idle, as: UTF8.self).components(separatedBy: "HTTP/1.1").count == 2)
    }
  }

  @Test("an unmasked client frame closes the WebSocket with 1002, also when sent with the handshake")
  func unmaskedFrames() async throws {
    let subscribe = Array(#"{"format":"simplesource","formatVersion":2,"type":"subscribe"}"#.utf8)
    try await serving { port in
      let later = try await exchange(port: port, [handshake, textFrame(subscribe, masked: false)])
      #expect(statusLine(later) == "HTTP/1.1 101 Switching Protocols")
      #expect(closeCode(in: later) == 1002)
      let together = try await exchange(port: port, [handshake + textFrame(subscribe, masked: false)])
      #expect(closeCode(in: together) == 1002)
      #expect(!String(decoding: together, as: UTF8.self).contains("reset"), "nothing is answered to it")
    }
  }

  @Test(
    "a message over the limit, in one frame or in fragments each under it, closes the WebSocket with 1009")
  func fragmentedTooLarge() async throws {
    /// A masked fragment: text (first) or continuation, final or not.
    func fragment(_ payload: [UInt8], first: Bool, fin: Bool) -> [UInt8] {
      var frame = textFrame(payload)
      frame[0] = (fin ? 0x80 : 0) | (first ? 0x01 : 0x00)
      return frame
    }
    let half = [UInt8](repeating: 0x20, count: 12 * 1024)  // two of them: over the 16 KiB default
    let chunks = [
      handshake, fragment(half, first: true, fin: false), fragment(half, first: false, fin: true),
    ]
    let whole = [handshake, textFrame(half + half)]
    try await serving { port in
      let fragmented = try await exchange(port: port, chunks)
      #expect(closeCode(in: fragmented) == 1009)
      let large = try await exchange(port: port, whole)
      #expect(closeCode(in: large) == 1009, "a frame over the limit: the decoder refuses it")
    }
  }

  @Test("an upgrade to another path than the WebSockets' is answered 400, never upgraded")
  func upgradeElsewhere() async throws {
    let elsewhere = Array(
      String(decoding: handshake, as: UTF8.self).replacingOccurrences(of: "/live", with: "/other").utf8)
    try await serving { port in
      let answer = try await exchange(port: port, [elsewhere])
      #expect(statusLine(answer) == "HTTP/1.1 400 Bad Request")
    }
  }

  @Test("a server shutting down closes its WebSockets with 1001, within its wait for the client's answer")
  func shutdownCloses() async throws {
    var limits = Self.limits
    limits.webSocketClose = .milliseconds(200)
    let subscribe = Array(#"{"format":"simplesource","formatVersion":2,"type":"subscribe"}"#.utf8)
    let group = MultiThreadedEventLoopGroup.singleton
    let arrived = group.next().makePromise(of: Void.self)
    let collector = AwaitingCollector(awaiting: "reset", arrived: arrived)
    let held = NIOLockedValueBox<(any Channel)?>(nil)
    try await serving(limits: limits) { port in
      let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
        }
        .connect(host: "127.0.0.1", port: port).get()
      held.withLockedValue { $0 = channel }
      try await channel.writeAndFlush(ByteBuffer(bytes: handshake + textFrame(subscribe)))
      try await arrived.futureResult.get()
    }
    // The application has shut down: the server sent its close, and closed the connection.
    let channel = try #require(held.withLockedValue { $0 })
    try await channel.closeFuture.get()
    #expect(closeCode(in: collector.received.withLockedValue { $0 }) == 1001)
  }

  @Test("a text frame that is not UTF-8 closes the WebSocket with 1007")
  func invalidText() async throws {
    try await serving { port in
      let answer = try await exchange(port: port, [handshake, textFrame([0x7B, 0xFF, 0xFE, 0x7D])])
      #expect(closeCode(in: answer) == 1007)
    }
  }

  @Test(
    "an upgrade past the WebSockets of its user or its address is answered 429 with a reason and closed, never upgraded; the others go on"
  )
  func socketsPerUserAndAddress() async throws {
    let subscribe = Array(#"{"format":"simplesource","formatVersion":2,"type":"subscribe"}"#.utf8)
    let ann = Array(
      String(decoding: handshake, as: UTF8.self).replacingOccurrences(of: "/live", with: "/live?user=ann")
        .utf8)
    /// The bytes of an upgrade the server refused, and whether they name `limit`.
    @Sendable func refused(_ bytes: [UInt8], naming limit: String) {
      #expect(statusLine(bytes) == "HTTP/1.1 429 Too Many Requests")
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(!text.lowercased().contains("retry-after"), "a count is not lifted by a wait: \(text)")
      #expect(text.contains("tooManyConnections: \(limit)"), "the reason names the limit: \(text)")
      #expect(!text.contains("reset"), "nothing of the service is sent to it")
    }
    try await serving { port in
      // WebSockets that hold their subscriptions (their reset arrived: the server counts them): one of
      // ann (the limit per user is 1), then guests up to the limit per address (3).
      var held = [try await open(port: port, ann + textFrame(subscribe), awaiting: "reset")]
      refused(try await exchange(port: port, [ann]), naming: "this user holds 1")
      for _ in 0..<2 {
        held.append(try await open(port: port, handshake + textFrame(subscribe), awaiting: "reset"))
      }
      refused(try await exchange(port: port, [handshake]), naming: "this address holds 3")
      for channel in held {
        #expect(channel.isActive, "the other WebSockets go on")
        try await channel.close()
      }
    }
  }

  @Test("an upgrade past an address's rate is answered 429 with Retry-After, never upgraded, and closed")
  func socketsOpenedPerAddress() async throws {
    var limits = Self.limits
    limits.webSocketsPerAddress = 64
    limits.webSocketsOpenedPerAddress = WireRate(perSecond: 0.01, burst: 2)
    try await serving(limits: limits) { port in
      let subscribe = Array(#"{"format":"simplesource","formatVersion":2,"type":"subscribe"}"#.utf8)
      // Two open and close within the burst; the third is refused before any upgrade.
      for _ in 0..<2 {
        let channel = try await open(port: port, handshake + textFrame(subscribe), awaiting: "reset")
        try await channel.close()
      }
      // The client asks for the upgrade, then sends nothing: the server answers and closes the connection.
      let bytes = try await exchange(port: port, [handshake])
      #expect(statusLine(bytes) == "HTTP/1.1 429 Too Many Requests")
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.lowercased().contains("retry-after: 1"), "the answer says when to retry: \(text)")
      #expect(text.contains("rateLimited: retryAfter 1"), "and why: \(text)")
      #expect(!text.contains("reset"), "nothing of the service is sent to it")
    }
  }

  @Test(
    "connections past an address's limit are closed as accepted, before anything is read; a close frees a place"
  )
  func connectionsPerAddress() async throws {
    var limits = ConnectionLimits()
    limits.connectionsPerAddress = 4
    try await serving(limits: limits) { port in
      let group = MultiThreadedEventLoopGroup.singleton
      /// What the server answers a whole request with; nothing when it closed the connection first (the
      /// request's write then fails, or nothing comes back).
      @Sendable func request() async -> [UInt8] {
        let get = Array("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        return (try? await exchange(port: port, [get])) ?? []
      }
      // Eight silent connections (no request: the first-request limit of 10 s would answer them 408): the
      // server keeps four of the address's connections in all (the testing client may hold one of its
      // own) and closes the others as they are accepted.
      var held: [any Channel] = []
      for _ in 0..<8 {
        held.append(try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: port).get())
      }
      // A whole request on a new connection: closed at once, no 408, no byte.
      let refused = await request()
      #expect(refused.isEmpty, "closed before anything is read: \(statusLine(refused))")
      // The held ones close: once the server has counted them out, a new connection is served. Each
      // attempt is a real connection the server answers; the suite's time limit guards the loop.
      for channel in held { try? await channel.close() }
      var answer: [UInt8] = []
      while answer.isEmpty { answer = await request() }
      #expect(statusLine(answer) == "HTTP/1.1 200 OK")
    }
  }

  @Test(
    "the views of one address's WebSockets are budgeted whatever their users: past it, limitReached naming the budget; the connection goes on"
  )
  func viewsPerAddress() async throws {
    var limits = Self.limits
    limits.webSocketsPerAddress = 8
    try await serving(limits: limits, viewsPerOrigin: 2) { port in
      /// A handshake of `user`, and its subscribe of one search for `text`.
      func asking(_ user: String, _ text: String) -> [UInt8] {
        let upgrade = String(decoding: handshake, as: UTF8.self)
          .replacingOccurrences(of: "/live", with: "/live?user=\(user)")
        let subscribe =
          #"{"format":"simplesource","formatVersion":3,"type":"subscribeViews","views":{"a":{"query":{"name":"search","parameters":{"text":"\#(text)"}}}}}"#
        return Array(upgrade.utf8) + textFrame(Array(subscribe.utf8))
      }
      // Two users of one address, a view each: the address's two.
      let ann = try await openReading(port: port, asking("ann", "plan"), awaiting: #""type":"views""#)
      let bob = try await openReading(port: port, asking("bob", "plan"), awaiting: #""type":"views""#)
      #expect(ann.received.contains(#""type":"views""#) && bob.received.contains(#""type":"views""#))
      // A third user's view (a scope of its own) is one more: refused, naming the budget.
      let cat = try await openReading(port: port, asking("cat", "plan"), awaiting: "viewsPerOrigin")
      #expect(cat.received.contains("limitReached"), "\(cat.received)")
      #expect(cat.received.contains("viewsPerOrigin"), "\(cat.received)")
      #expect(!cat.received.contains(#""type":"views""#))
      for channel in [ann.channel, bob.channel, cat.channel] {
        #expect(channel.isActive, "a refused subscribe leaves the connection open")
      }
      for channel in [ann.channel, bob.channel, cat.channel] { try await channel.close() }
    }
  }

  @Test("the descriptor limit is raised to the hard limit, and the default leaves a reserve below it")
  func descriptorLimit() {
    let raised = ConnectionLimits.raiseDescriptorLimit()
    #expect(raised >= ConnectionLimits.descriptorLimit())
    #expect(ConnectionLimits().connections == raised - ConnectionLimits.descriptorReserve)
  }

  @Test("every sequence of opens and closes from two addresses, to depth 8, counts each within its limit")
  func addressCountsExplored() {
    enum Step: CaseIterable { case openA, openB, closeA, closeB }
    let limit = 2
    var sequences = 0
    /// Runs every continuation of `steps` to `depth` from (`counts`, `model`).
    func explore(_ counts: AddressCounts, _ model: [String: Int], _ steps: [Step], depth: Int) {
      sequences += 1
      guard depth > 0 else { return }
      for step in Step.allCases {
        var (counts, model) = (counts, model)
        let address = step == .openA || step == .closeA ? "a" : "b"
        switch step {
        case .openA, .openB:
          let fits = model[address, default: 0] < limit
          #expect(counts.enter(address, limit: limit) == fits, "\(steps + [step])")
          if fits { model[address, default: 0] += 1 }
        case .closeA, .closeB:
          // Only a counted WebSocket closes.
          guard model[address, default: 0] > 0 else { continue }
          counts.leave(address)
          model[address] = model[address]! > 1 ? model[address]! - 1 : nil
        }
        #expect(counts.open == model, "\(steps + [step])")
        explore(counts, model, steps + [step], depth: depth - 1)
      }
    }
    explore(AddressCounts(), [:], [], depth: 8)
    print("Address counts: \(sequences) sequences of up to 8 opens and closes")
    #expect(sequences > 1000)
  }
}
