// The transport of broadcasts: frames queued on a connection's event loop, framed once per loop,
// refused while the connection is over its high-water mark or closed, and in the order they were queued.

import Foundation
import NIOCore
import NIOEmbedded
import SimpleSource
import Testing

@testable import SimpleSourceHummingbird

@Suite("Socket frames", .timeLimit(.minutes(1)))
struct SocketFramesTests {
  /// A connected channel on `loop` with the raw writer installed.
  private func connection(on loop: NIOAsyncTestingEventLoop) async throws -> (
    NIOAsyncTestingChannel, SocketWriter
  ) {
    let channel = NIOAsyncTestingChannel(loop: loop)
    try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).get()
    return (channel, try await loop.submit { try SocketWriter.install(on: channel) }.get())
  }

  /// Sets the channel's writability as NIO does: the flag, then the event, on the loop.
  private func setWritable(_ writable: Bool, _ channel: NIOAsyncTestingChannel) async throws {
    try await channel.testingEventLoop.executeInContext {
      channel.isWritable = writable
      channel.pipeline.syncOperations.fireChannelWritabilityChanged()
    }
  }

  @Test("a broadcast's frame is framed once for every connection of a loop, and written to each")
  func framedOncePerLoop() async throws {
    let loop = NIOAsyncTestingEventLoop()
    let (first, firstWriter) = try await connection(on: loop)
    let (second, secondWriter) = try await connection(on: loop)
    let frame = WireFrame(bytes: Data(#"{"type":"batch"}"#.utf8))
    #expect(firstWriter.sink(frame))
    #expect(secondWriter.sink(frame))
    let one = try await first.waitForOutboundWrite(as: ByteBuffer.self)
    let two = try await second.waitForOutboundWrite(as: ByteBuffer.self)
    #expect(one == webSocketTextFrame(frame.bytes))
    #expect(two == one)
    let sameStorage = one.withVeryUnsafeBytes { a in
      two.withVeryUnsafeBytes { b in a.baseAddress == b.baseAddress }
    }
    #expect(sameStorage, "each connection was given its own framing of the same message")
  }

  @Test("a full connection refuses broadcast frames until it drains; its own messages are written meanwhile")
  func fullConnection() async throws {
    let loop = NIOAsyncTestingEventLoop()
    let (channel, writer) = try await connection(on: loop)
    try await setWritable(false, channel)
    #expect(!writer.sink(WireFrame(bytes: Data("1".utf8))))
    try await writer.send(Data("own".utf8))
    #expect(try await channel.readOutbound(as: ByteBuffer.self) == webSocketTextFrame(Data("own".utf8)))
    #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil, "the refused frame was written")
    try await setWritable(true, channel)
    #expect(writer.sink(WireFrame(bytes: Data("2".utf8))))
    #expect(try await channel.waitForOutboundWrite(as: ByteBuffer.self) == webSocketTextFrame(Data("2".utf8)))
  }

  @Test("frames and messages reach the connection in the order they were queued; a closed one refuses both")
  func orderAndClose() async throws {
    let loop = NIOAsyncTestingEventLoop()
    let (channel, writer) = try await connection(on: loop)
    let texts = (0..<20).map { "m\($0)" }
    for (index, text) in texts.enumerated() {
      if index.isMultiple(of: 3) {
        try await writer.send(Data(text.utf8))
      } else {
        #expect(writer.sink(WireFrame(bytes: Data(text.utf8))))
      }
    }
    for text in texts {
      #expect(
        try await channel.waitForOutboundWrite(as: ByteBuffer.self) == webSocketTextFrame(Data(text.utf8)))
    }
    try await channel.close()
    #expect(!writer.sink(WireFrame(bytes: Data("late".utf8))))
    await #expect(throws: (any Error).self) { try await writer.send(Data("late".utf8)) }
  }
}
