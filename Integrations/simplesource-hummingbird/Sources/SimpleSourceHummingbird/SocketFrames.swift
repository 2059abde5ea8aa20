// Writing wire messages to WebSockets as pre-framed bytes, below the WebSocket encoder: a batch is framed
// once and the same buffer is queued for every client on an event loop, which writes and flushes them all
// in one task. This is the transport side of `WireService`'s sessions with a sink (`WireSink`).

import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOConcurrencyHelpers
import NIOCore
import SimpleSource

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
/// through it go straight to the socket, and it tells its loop's queue whether the connection can take more
/// (NIO's writability, and closed). Every other event passes through unchanged.
final class RawFrames: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = NIOAny
  typealias OutboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  private var context: ChannelHandlerContext?
  private let queue: LoopQueue

  init(queue: LoopQueue) { self.queue = queue }

  deinit { queue.forget(ObjectIdentifier(self)) }

  func handlerAdded(context: ChannelHandlerContext) {
    self.context = context
    queue.connection(ObjectIdentifier(self), isFull: !context.channel.isWritable || !context.channel.isActive)
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    self.context = nil
    queue.connection(ObjectIdentifier(self), isFull: true)
  }

  func channelActive(context: ChannelHandlerContext) {
    queue.connection(ObjectIdentifier(self), isFull: !context.channel.isWritable)
    context.fireChannelActive()
  }

  func channelWritabilityChanged(context: ChannelHandlerContext) {
    queue.connection(ObjectIdentifier(self), isFull: !context.channel.isWritable)
    context.fireChannelWritabilityChanged()
  }

  func channelInactive(context: ChannelHandlerContext) {
    queue.connection(ObjectIdentifier(self), isFull: true)
    context.fireChannelInactive()
  }

  /// Writes and flushes `frame`; fails `promise` once the handler is gone (the channel closed).
  func write(_ frame: ByteBuffer, promise: EventLoopPromise<Void>?) {
    guard let context else {
      promise?.fail(ChannelError.ioOnClosedChannel)
      return
    }
    context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
  }
}

/// One WebSocket connection's writer: a `WireSink` that queues a view's frame without waiting, and a
/// `send` that queues a message and waits until the socket took it. Both go through the event loop's
/// queue, so they reach the client in the order they were called.
final class SocketWriter: Sendable {
  let eventLoop: any EventLoop
  let frames: NIOLoopBound<RawFrames>
  /// The connection's key in its loop's queue.
  let key: ObjectIdentifier
  let queue: LoopQueue

  private init(
    eventLoop: any EventLoop, frames: NIOLoopBound<RawFrames>, key: ObjectIdentifier, queue: LoopQueue
  ) {
    self.eventLoop = eventLoop
    self.frames = frames
    self.key = key
    self.queue = queue
  }

  /// Installs the raw writer at the head of `channel`'s pipeline; on the channel's event loop.
  static func install(on channel: any Channel) throws -> SocketWriter {
    let eventLoop = channel.eventLoop
    let queue = LoopQueue.of(eventLoop)
    let handler = RawFrames(queue: queue)
    try channel.pipeline.syncOperations.addHandler(handler, position: .first)
    return SocketWriter(
      eventLoop: eventLoop, frames: NIOLoopBound(handler, eventLoop: eventLoop),
      key: ObjectIdentifier(handler), queue: queue)
  }

  /// Queues a broadcast's frame; `false` when the connection's buffer is over its high-water mark (the
  /// session then sends by itself, waiting for the socket) or it closed.
  /// - Complexity: O(1), plus framing the message once per batch and event loop.
  func sink(_ frame: WireFrame) -> Bool { queue.enqueue(self, frame) }

  /// Sends one message and returns once the socket took it.
  func send(_ bytes: Data) async throws {
    let promise = eventLoop.makePromise(of: Void.self)
    queue.enqueue(self, webSocketTextFrame(bytes), promise: promise)
    try await promise.futureResult.get()
  }
}

/// The frames waiting to be written on one event loop: queued from any thread, written by one task on the
/// loop, which is scheduled when the queue goes from empty to not empty. A broadcast's batch is framed
/// once per loop and costs one task per loop, and one `write` per client. It also keeps which of the
/// loop's connections cannot take a frame now, so that a broadcast asks under the lock it queues under.
final class LoopQueue: Sendable {
  private struct Entry {
    let writer: SocketWriter
    let buffer: ByteBuffer
    let promise: EventLoopPromise<Void>?
  }

  private struct State {
    var entries: [Entry] = []
    /// The broadcast frame framed last (held, so that its identity is not reused), and its framing: the
    /// next connection given the same frame is given the same buffer.
    var last: (frame: WireFrame, buffer: ByteBuffer)?
    /// The connections over their high-water mark, or closed.
    var full: Set<ObjectIdentifier> = []
  }

  private let eventLoop: any EventLoop
  private let state = NIOLockedValueBox(State())

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

  /// Records whether connection `key` can take frames now.
  func connection(_ key: ObjectIdentifier, isFull: Bool) {
    state.withLockedValue { state in
      if isFull { state.full.insert(key) } else { state.full.remove(key) }
    }
  }

  /// Connection `key` is gone.
  func forget(_ key: ObjectIdentifier) {
    state.withLockedValue { _ = $0.full.remove(key) }
  }

  /// Queues a broadcast's `frame` for `writer`'s connection, framed once for every connection of the loop;
  /// `false` (nothing queued) when the connection is full or closed.
  /// - Complexity: amortized O(1), plus framing once per frame.
  func enqueue(_ writer: SocketWriter, _ frame: WireFrame) -> Bool {
    let (queued, first) = state.withLockedValue { state -> (Bool, Bool) in
      if !state.full.isEmpty && state.full.contains(writer.key) { return (false, false) }
      let buffer: ByteBuffer
      if let last = state.last, last.frame === frame {
        buffer = last.buffer
      } else {
        buffer = webSocketTextFrame(frame.bytes)
        state.last = (frame, buffer)
      }
      state.entries.append(Entry(writer: writer, buffer: buffer, promise: nil))
      return (true, state.entries.count == 1)
    }
    if first { eventLoop.execute { self.drain() } }
    return queued
  }

  /// Queues `buffer` for `writer`'s connection, whatever its writability.
  func enqueue(_ writer: SocketWriter, _ buffer: ByteBuffer, promise: EventLoopPromise<Void>?) {
    let first = state.withLockedValue { state in
      state.entries.append(Entry(writer: writer, buffer: buffer, promise: promise))
      return state.entries.count == 1
    }
    if first { eventLoop.execute { self.drain() } }
  }

  /// Writes and flushes every queued frame, in the order they were queued.
  private func drain() {
    let entries = state.withLockedValue { state in
      defer { state.entries.removeAll(keepingCapacity: true) }
      return state.entries
    }
    for entry in entries {
      entry.writer.frames.value.write(entry.buffer, promise: entry.promise)
    }
  }
}
