// A service served end to end over real sockets: each WebSocket a session of its user's scope, a write
// reaching every subscriber as one batch, a refused scope never upgraded, bad messages answered.

import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SimpleSource
import Testing

@testable import SimpleSourceHummingbird

/// Keeps what the server sends on a connection, and tells when it first holds a text.
final class TextCollector: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer
  private struct State {
    var received: [UInt8] = []
    var waiters: [(text: [UInt8], from: Int, arrived: EventLoopPromise<Void>)] = []
    var closed = false
  }
  private let state = NIOLockedValueBox(State())

  /// Everything received so far, as text.
  var text: String { String(decoding: state.withLockedValue { $0.received }, as: UTF8.self) }

  /// Returns once the bytes received after the first `from` hold `text` (or the connection closed); the
  /// number of bytes received by then.
  func arrival(of text: String, after from: Int = 0, on loop: any EventLoop) async throws -> Int {
    let arrived = loop.makePromise(of: Void.self)
    state.withLockedValue { state in
      state.waiters.append((Array(text.utf8), from, arrived))
      Self.answer(&state)
    }
    try await arrived.futureResult.get()
    return state.withLockedValue { $0.received.count }
  }

  /// Succeeds every waiter whose text has arrived, or all once closed.
  private static func answer(_ state: inout State) {
    let received = state.received
    state.waiters.removeAll { waiter in
      let found =
        state.closed
        || (waiter.from..<max(waiter.from, received.count)).contains {
          received[$0...].starts(with: waiter.text)
        }
      if found { waiter.arrived.succeed() }
      return found
    }
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let bytes = unwrapInboundIn(data).readableBytesView
    state.withLockedValue { state in
      state.received += bytes
      Self.answer(&state)
    }
  }

  func channelInactive(context: ChannelHandlerContext) {
    state.withLockedValue { state in
      state.closed = true
      Self.answer(&state)
    }
  }
}

@Suite("A service served over WebSockets", .timeLimit(.minutes(1)))
struct ServingTests {
  /// A connection to `port` that sent `bytes`, and its collector.
  func connect(port: Int, _ bytes: [UInt8]) async throws -> (any Channel, TextCollector) {
    let collector = TextCollector()
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
      }
      .connect(host: "127.0.0.1", port: port).get()
    try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    return (channel, collector)
  }

  /// The handshake for `/live` as `user` (a guest when `nil`).
  func handshake(as user: String?) -> [UInt8] {
    let path = user.map { "/live?user=\($0)" } ?? "/live"
    return Array(
      String(decoding: SimpleSourceHummingbirdTests.handshake, as: UTF8.self)
        .replacingOccurrences(of: "/live", with: path).utf8)
  }

  static let subscribe = Array(#"{"format":"simplesource","formatVersion":2,"type":"subscribe"}"#.utf8)

  @Test("each WebSocket is a session of its user's scope; a write reaches every subscriber as one batch")
  func writesReachSubscribers() async throws {
    let notes = try await NotesServer()
    try await notes.application.test(.live) { client in
      let port = try #require(client.port)
      let (annChannel, ann) = try await connect(port: port, handshake(as: "ann") + textFrame(Self.subscribe))
      let (guestChannel, guest) = try await connect(
        port: port, handshake(as: nil) + textFrame(Self.subscribe))
      let annReset = try await ann.arrival(of: "reset", on: annChannel.eventLoop)
      let guestReset = try await guest.arrival(of: "reset", on: guestChannel.eventLoop)
      #expect(ann.text.contains("Ann's diary"), "a user's scope holds their own notes")
      #expect(!guest.text.contains("Ann's diary"), "a guest's scope never holds another's private note")
      // A shared note and a private one: both reach ann, only the shared one the guest.
      try await notes.source.appendItems(
        [
          Note(id: "lunch", text: "Lunch at noon", owner: nil),
          Note(id: "gift", text: "Bob's gift", owner: "ann"),
        ],
        toSection: "notes")
      _ = try await ann.arrival(of: "Bob's gift", after: annReset, on: annChannel.eventLoop)
      _ = try await guest.arrival(of: "Lunch at noon", after: guestReset, on: guestChannel.eventLoop)
      #expect(ann.text.contains(#""type":"batch""#) && guest.text.contains(#""type":"batch""#))
      #expect(!guest.text.contains("Bob's gift"))
      try await annChannel.close()
      try await guestChannel.close()
    }
  }

  @Test(
    "an upgrade whose scope does not read is refused, never upgraded; a binary message is answered malformed")
  func refusedScopesAndBinaryMessages() async throws {
    let server = try await NotesServer()
    try await server.application.test(.live) { client in
      let port = try #require(client.port)
      // `?user=` with an empty name: the scope throws, so the upgrade is refused and nothing is served.
      let refused = try await exchange(port: port, [handshake(as: "")])
      #expect(statusLine(refused).hasPrefix("HTTP/1.1 4"), "\(statusLine(refused))")
      #expect(!String(decoding: refused, as: UTF8.self).contains("reset"))
      // A binary frame: the wire's malformed error, and the connection goes on to serve its subscribe.
      var binary = textFrame(Array("{}".utf8))
      binary[0] = 0x82
      let (channel, collector) = try await connect(port: port, handshake(as: nil) + binary)
      _ = try await collector.arrival(of: "malformed", on: channel.eventLoop)
      try await channel.writeAndFlush(ByteBuffer(bytes: textFrame(Self.subscribe)))
      _ = try await collector.arrival(of: "reset", on: channel.eventLoop)
      #expect(collector.text.contains("not binary"))
      try await channel.close()
    }
  }

  @Test("a scope read from a header counts against its user's limit before the upgrade: 429, never upgraded")
  func scopeFromHeaders() async throws {
    var limits = ConnectionLimits()
    limits.webSocketsPerUser = 1
    let server = try await NotesServer(limits: limits)
    try await server.application.test(.live) { client in
      let port = try #require(client.port)
      let asAnn = Array(
        String(decoding: handshake(as: nil), as: UTF8.self)
          .replacingOccurrences(of: "Host: localhost\r\n", with: "Host: localhost\r\nX-User: ann\r\n").utf8)
      let (held, collector) = try await connect(port: port, asAnn + textFrame(Self.subscribe))
      _ = try await collector.arrival(of: "reset", on: held.eventLoop)
      #expect(collector.text.contains("Ann's diary"), "the header's user is the session's scope")
      let refused = try await exchange(port: port, [asAnn])
      #expect(statusLine(refused) == "HTTP/1.1 429 Too Many Requests")
      #expect(String(decoding: refused, as: UTF8.self).contains("tooManyConnections: this user holds 1"))
      #expect(held.isActive, "the held WebSocket goes on")
      try await held.close()
    }
  }
}
