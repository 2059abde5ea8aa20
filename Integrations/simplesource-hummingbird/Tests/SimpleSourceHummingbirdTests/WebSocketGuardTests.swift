// An upgraded connection's guard on its event loop: pings every period, answered by pongs that carry their
// payload, a close with 1001 for a ping left unanswered, 1002 for an unmasked frame, and no timer left once
// the connection closes. Driven by a testing event loop's clock: no sleeps.

import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import SimpleSourceHummingbird

@Suite("WebSocket guard", .timeLimit(.minutes(1)))
struct WebSocketGuardTests {
  let period = TimeAmount.seconds(30)

  /// A connected channel with the guard.
  private func guarded() async throws -> NIOAsyncTestingChannel {
    let channel = NIOAsyncTestingChannel()
    try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).get()
    try await channel.testingEventLoop.executeInContext { [period] in
      try channel.pipeline.syncOperations.addHandler(WebSocketGuard(period: period))
    }
    return channel
  }

  /// A client's frame: `payload` masked with a key.
  private func clientFrame(_ opcode: WebSocketOpcode, _ payload: ByteBuffer) -> WebSocketFrame {
    let key: WebSocketMaskingKey = [7, 1, 200, 42]
    var data = payload
    data.webSocketMask(key)
    return WebSocketFrame(fin: true, opcode: opcode, maskKey: key, data: data)
  }

  /// The next frame the guard wrote, if any.
  private func written(_ channel: NIOAsyncTestingChannel) async throws -> WebSocketFrame? {
    try await channel.readOutbound(as: WebSocketFrame.self)
  }

  /// The close code a close frame carries.
  private func closeCode(_ frame: WebSocketFrame) -> WebSocketErrorCode? {
    var data = frame.unmaskedData
    return data.readWebSocketErrorCode()
  }

  @Test("a ping every period; a pong carrying its payload answers it, and the connection stays open")
  func answeredPings() async throws {
    let channel = try await guarded()
    await channel.testingEventLoop.advanceTime(by: period - .nanoseconds(1))
    #expect(try await written(channel) == nil, "pinged before the period")
    var payloads: [ByteBuffer] = []
    for _ in 0..<3 {
      await channel.testingEventLoop.advanceTime(by: period)
      let ping = try #require(try await written(channel))
      #expect(ping.opcode == .ping && ping.fin && ping.maskKey == nil)
      payloads.append(ping.data)
      try await channel.writeInbound(clientFrame(.pong, ping.data))
      // The pong is passed on, as every frame is.
      #expect(try await channel.readInbound(as: WebSocketFrame.self)?.opcode == .pong)
    }
    #expect(Set(payloads).count == 3, "the pings' payloads repeat: a pong could answer a later ping")
    #expect(channel.isActive)
    try await channel.close()
  }

  @Test("a ping unanswered, or answered with another payload, closes the connection with 1001 a period later")
  func unansweredPing() async throws {
    for answer in [false, true] {
      let channel = try await guarded()
      await channel.testingEventLoop.advanceTime(by: period)
      let ping = try #require(try await written(channel))
      if answer {
        try await channel.writeInbound(clientFrame(.pong, ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7, 8])))
      }
      await channel.testingEventLoop.advanceTime(by: period)
      let close = try #require(try await written(channel))
      #expect(close.opcode == .connectionClose && closeCode(close) == .goingAway)
      let reason = close.data.getString(at: 2, length: close.data.readableBytes - 2)
      #expect(reason == "Ping timeout")
      await channel.testingEventLoop.run()
      #expect(!channel.isActive, "not closed after its close frame")
      #expect(ping.opcode == .ping)
    }
  }

  @Test("an unmasked frame closes the connection with 1002 and is not passed on")
  func unmaskedFrame() async throws {
    let channel = try await guarded()
    try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: "{}")))
    let close = try #require(try await written(channel))
    #expect(close.opcode == .connectionClose && closeCode(close) == .protocolError)
    #expect(try await channel.readInbound(as: WebSocketFrame.self) == nil)
    await channel.testingEventLoop.run()
    #expect(!channel.isActive, "not closed after its close frame")
  }

  @Test("a closed connection, or a guard removed, leaves no timer: nothing is written after")
  func noTimerAfterClose() async throws {
    let closed = try await guarded()
    try await closed.close()
    let removed = try await guarded()
    try await removed.pipeline.removeHandler(name: try await handlerName(removed)).get()
    for channel in [closed, removed] {
      await channel.testingEventLoop.advanceTime(by: period * 3)
      #expect(try await written(channel) == nil)
    }
    #expect(removed.isActive)
    try await removed.close()
  }

  @Test("a close frame either way ends the pings: the closing handshake goes on without them")
  func noPingsOnceClosing() async throws {
    for fromClient in [true, false] {
      let channel = try await guarded()
      var code = ByteBuffer()
      code.write(webSocketErrorCode: .normalClosure)
      if fromClient {
        try await channel.writeInbound(clientFrame(.connectionClose, code))
        #expect(try await channel.readInbound(as: WebSocketFrame.self)?.opcode == .connectionClose)
      } else {
        try await channel.writeOutbound(WebSocketFrame(fin: true, opcode: .connectionClose, data: code))
        #expect(try await written(channel)?.opcode == .connectionClose)
      }
      await channel.testingEventLoop.advanceTime(by: period * 3)
      #expect(try await written(channel) == nil, "pinged after a close frame")
      #expect(channel.isActive)
      try await channel.close()
    }
  }

  /// The name the pipeline gave the guard.
  private func handlerName(_ channel: NIOAsyncTestingChannel) async throws -> String {
    try await channel.testingEventLoop.executeInContext {
      try channel.pipeline.syncOperations.context(handlerType: WebSocketGuard.self).name
    }
  }
}
