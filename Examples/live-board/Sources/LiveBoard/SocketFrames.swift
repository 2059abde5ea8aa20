// Writing wire messages to WebSockets as pre-framed bytes, below the WebSocket encoder: a batch is framed
// once and the same buffer is queued for every client on an event loop, which writes and flushes them all
// in one task. This is the transport side of `WireService`'s broadcast (`WireSink`).

import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOConcurrencyHelpers
import NIOCore
import SimpleSource

/// The request context of the board's routes: Hummingbird's, plus the connection's channel, which a
/// WebSocket's frames are written to directly.
struct BoardRequestContext: RequestContext, WebSocketRequestContext {
  var coreContext: CoreRequestContextStorage
  let webSocket: WebSocketHandlerReference<Self>
  /// The connection.
  let channel: any Channel

  init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    webSocket = .init()
    channel = source.channel
  }
}

/// A server-to-client WebSocket text frame (final, unmasked) around `payload`: what
/// `WebSocketFrameEncoder` would write, made once per message instead of once per client.
/// - Complexity: O(size of `payload`).
func webSocketTextFrame(_ payload: some Collection<UInt8>) -> ByteBuffer {
  let count = payload.count
  var buffer = ByteBuffer()
  buffer.reserveCapacity(count + 10)
  buffer.writeInteger(UInt8(0x81))  // FIN, text
  switch count {
  case ..<126:
    buffer.writeInteger(UInt8(count))
  case ..<65_536:
    buffer.writeInteger(UInt8(126))
    buffer.writeInteger(UInt16(count))
  default:
    buffer.writeInteger(UInt8(127))
    buffer.writeInteger(UInt64(count))
  }
  buffer.writeBytes(payload)
  return buffer
}

/// Sits at the head of a WebSocket channel's pipeline, below the WebSocket encoder: frames written
/// through it go straight to the socket. Every other write passes through unchanged.
final class RawFrames: ChannelOutboundHandler, RemovableChannelHandler {
  typealias OutboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  private var context: ChannelHandlerContext?
  /// Whether frames were written since the last flush (by the loop's queue).
  var needsFlush = false

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }
  func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

  /// Writes `frame` without flushing; fails `promise` once the handler is gone (the channel closed).
  func write(_ frame: ByteBuffer, promise: EventLoopPromise<Void>?) {
    guard let context else {
      promise?.fail(ChannelError.ioOnClosedChannel)
      return
    }
    context.write(wrapOutboundOut(frame), promise: promise)
  }

  func flush() { context?.flush() }
}

/// One WebSocket connection's writer: a `WireSink` that queues a shared frame without waiting, and a
/// `send` that queues a message and waits until the socket took it. Both go through the event loop's
/// queue, so they reach the client in the order they were called.
struct SocketWriter: Sendable {
  let channel: any Channel
  let frames: NIOLoopBound<RawFrames>
  let queue: LoopQueue

  /// Installs the raw writer at the head of `channel`'s pipeline.
  static func install(on channel: any Channel) async throws -> SocketWriter {
    let frames = try await channel.eventLoop.submit {
      let handler = RawFrames()
      try channel.pipeline.syncOperations.addHandler(handler, position: .first)
      return NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }.get()
    return SocketWriter(channel: channel, frames: frames, queue: LoopQueue.of(channel.eventLoop))
  }

  /// Queues a broadcast's frame; `false` when the connection's buffer is over its high-water mark (the
  /// session then sends by itself, waiting for the socket) or it closed.
  func sink(_ frame: WireFrame) -> Bool {
    guard channel.isWritable else { return false }
    queue.enqueue(frames, frame.form { webSocketTextFrame($0) }, promise: nil)
    return true
  }

  /// Sends one message and returns once the socket took it.
  func send(_ bytes: Data) async throws {
    let promise = channel.eventLoop.makePromise(of: Void.self)
    queue.enqueue(frames, webSocketTextFrame(bytes), promise: promise)
    try await promise.futureResult.get()
  }
}

/// The frames waiting to be written on one event loop: queued from any thread, written and flushed by one
/// task on the loop, which is scheduled when the queue goes from empty to not empty. So a batch sent to
/// 1,000 clients of a loop costs one task, one write per client and one flush (one `writev`) per client.
final class LoopQueue: Sendable {
  private struct Entry {
    let frames: NIOLoopBound<RawFrames>
    let buffer: ByteBuffer
    let promise: EventLoopPromise<Void>?
  }

  private let eventLoop: any EventLoop
  private let pending = NIOLockedValueBox<[Entry]>([])

  private init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

  private static let queues = NIOLockedValueBox<[ObjectIdentifier: LoopQueue]>([:])

  /// The queue of `eventLoop`, made the first time it is asked for.
  static func of(_ eventLoop: any EventLoop) -> LoopQueue {
    queues.withLockedValue { queues in
      let key = ObjectIdentifier(eventLoop)
      if let queue = queues[key] { return queue }
      let queue = LoopQueue(eventLoop: eventLoop)
      queues[key] = queue
      return queue
    }
  }

  /// Queues `buffer` for the connection of `frames`.
  func enqueue(_ frames: NIOLoopBound<RawFrames>, _ buffer: ByteBuffer, promise: EventLoopPromise<Void>?) {
    let first = pending.withLockedValue { pending in
      pending.append(Entry(frames: frames, buffer: buffer, promise: promise))
      return pending.count == 1
    }
    if first { eventLoop.execute { self.drain() } }
  }

  /// Writes every queued frame, then flushes each connection once.
  private func drain() {
    let entries = pending.withLockedValue { pending in
      defer { pending = [] }
      return pending
    }
    var written: [RawFrames] = []
    written.reserveCapacity(entries.count)
    for entry in entries {
      let handler = entry.frames.value
      handler.write(entry.buffer, promise: entry.promise)
      if !handler.needsFlush {
        handler.needsFlush = true
        written.append(handler)
      }
    }
    for handler in written {
      handler.needsFlush = false
      handler.flush()
    }
  }
}
