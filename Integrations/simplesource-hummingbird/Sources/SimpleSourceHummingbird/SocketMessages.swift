// A WebSocket's inbound side without a task per connection: frames are assembled into messages by a
// channel handler on the connection's event loop, and messages are given to the session by a task that
// exists only while some are waiting. An idle connection holds its pipeline and its session, and nothing
// that waits.

import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket

/// A message a client sent, as the session is given it.
enum SocketMessage: Equatable, Sendable {
  /// A text message, valid UTF-8.
  case text(String)
  /// A binary message (the wire's messages are text: refused, and the connection goes on).
  case binary
}

/// How a WebSocket's data frames become messages (RFC 6455, 5.4): a text or binary frame starts one,
/// continuation frames add to it, the final frame ends it. A synchronous state machine; the handler that
/// owns it runs on one event loop.
struct MessageAssembly {
  /// What one frame made.
  enum Outcome: Equatable {
    /// Nothing yet: a message is being assembled.
    case pending
    /// A whole message.
    case message(SocketMessage)
    /// The connection must close with this code: a fragment out of place (1002), a message over the
    /// limit (1009), a text message that is not UTF-8 (1007).
    case close(WebSocketErrorCode)
  }

  /// The largest message, in bytes, summed over its fragments.
  let maxBytes: Int
  /// The opcode of the message being assembled, and its fragments so far.
  private var started: (opcode: WebSocketOpcode, bytes: ByteBuffer)?

  init(maxBytes: Int) { self.maxBytes = maxBytes }

  /// Whether a message is being assembled (its first fragment came, its last did not).
  var isAssembling: Bool { started != nil }

  /// Takes one data frame (`.text`, `.binary` or `.continuation`), its payload unmasked.
  /// - Complexity: O(size of `payload`); a message in one frame is not copied.
  mutating func take(opcode: WebSocketOpcode, fin: Bool, payload: ByteBuffer) -> Outcome {
    switch opcode {
    case .text, .binary:
      guard started == nil else { return .close(.protocolError) }
      guard payload.readableBytes <= maxBytes else { return .close(.messageTooLarge) }
      guard fin else {
        started = (opcode, payload)
        return .pending
      }
      return Self.message(opcode, payload)
    case .continuation:
      guard case (let first, var bytes)? = started else { return .close(.protocolError) }
      started = nil
      guard bytes.readableBytes + payload.readableBytes <= maxBytes else { return .close(.messageTooLarge) }
      var payload = payload
      bytes.writeBuffer(&payload)
      guard fin else {
        started = (first, bytes)
        return .pending
      }
      return Self.message(first, bytes)
    default:
      return .close(.protocolError)
    }
  }

  private static func message(_ opcode: WebSocketOpcode, _ bytes: ByteBuffer) -> Outcome {
    guard opcode == .text else { return .message(.binary) }
    guard let text = String(validating: bytes.readableBytesView, as: UTF8.self) else {
      return .close(.dataInconsistentWithMessage)
    }
    return .message(.text(text))
  }
}

/// The messages of one connection waiting for its session, in the order they arrived, and whether a task
/// gives them to it now. The event loop adds messages and the connection's end; the task takes them one at
/// a time, and ends when none is left. Reads from the socket stop while `holdAt` messages wait, and go on
/// once the task has taken one of them. A synchronous state machine: the loop and the task reach it under
/// one lock.
struct MessageInbox {
  /// What the task does next.
  enum Step: Equatable {
    /// Give this message to the session.
    case deliver(SocketMessage)
    /// The connection ended and every message before the end was given: close the session, and end.
    case close
    /// Nothing waits: end (a later message starts a new task).
    case idle
  }

  /// How many waiting messages stop reads.
  let holdAt: Int
  private var waiting = CircularBuffer<SocketMessage>(initialCapacity: 1)
  /// Whether a task is giving messages to the session.
  private(set) var running = false
  /// Whether the connection ended.
  private(set) var ended = false
  /// Whether the session was closed (the last step given was `.close`).
  private(set) var closed = false

  init(holdAt: Int) {
    precondition(holdAt > 0, "MessageInbox: hold reads at one message at least")
    self.holdAt = holdAt
  }

  /// How many messages wait.
  var count: Int { waiting.count }

  /// Whether reads from the socket stop now.
  var holdsReads: Bool { waiting.count >= holdAt }

  /// A message arrived; `true` when no task runs and one must be started. Ignored once the connection
  /// ended.
  /// - Complexity: amortized O(1).
  mutating func arrive(_ message: SocketMessage) -> Bool {
    guard !ended else { return false }
    waiting.append(message)
    return start()
  }

  /// The connection ended; `true` when no task runs and one must be started (to close the session).
  /// Messages that arrived before are still given.
  /// - Complexity: O(1).
  mutating func end() -> Bool {
    guard !ended else { return false }
    ended = true
    return start()
  }

  /// The running task's next step, and whether reads held until now may go on (the task took a message
  /// that brought the count below `holdAt`).
  /// - Precondition: a task runs (the last `arrive` or `end` returned `true`, and no `.close` or `.idle`
  ///   was taken since).
  /// - Complexity: O(1).
  mutating func next() -> (step: Step, resumeReads: Bool) {
    precondition(running, "MessageInbox: a step taken with no task running")
    if let message = waiting.popFirst() {
      return (.deliver(message), waiting.count == holdAt - 1)
    }
    running = false
    guard ended else { return (.idle, false) }
    closed = true
    return (.close, false)
  }

  private mutating func start() -> Bool {
    guard !running, !closed else { return false }
    running = true
    return true
  }
}

/// The end of an upgraded connection's pipeline: assembles messages from data frames, answers pings,
/// answers or ends the closing handshake, closes on a protocol error, and gives each message to `deliver`
/// in order, from a task that lives while messages wait (then `close`, once, when the connection ends).
/// While ``MessageInbox/holdAt`` messages wait it stops reading the socket, so a client that sends
/// faster than its session takes fills its own socket buffer rather than the server's memory.
///
/// A connection the server closes (its admission refused, the server quiescing) is sent a close frame and
/// closed when the client answers it, or after `closeWait`.
final class SocketMessageHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = WebSocketFrame
  typealias OutboundIn = WebSocketFrame
  typealias OutboundOut = WebSocketFrame

  /// Gives one message to the session.
  typealias Deliver = @Sendable (SocketMessage) async -> Void

  private var assembly: MessageAssembly
  private let inbox: NIOLockedValueBox<MessageInbox>
  private let deliver: Deliver
  private let close: @Sendable () async -> Void
  private let closeWait: TimeAmount
  /// Sent by `handlerAdded`: a refusal that closes the connection as it opens.
  private let refusal: (code: WebSocketErrorCode, reason: String)?
  private var context: ChannelHandlerContext?
  /// A read the pipeline asked for while the inbox held reads.
  private var readHeld = false
  /// Whether this side sent its close frame.
  private var closeSent = false
  private var closeTimer: Scheduled<Void>?

  /// A connection's handler, giving messages of up to `maxMessageBytes` to `deliver`, `holdAt` of them
  /// waiting at most before reads stop, and calling `close` once after the last when the connection ends.
  init(
    maxMessageBytes: Int, holdAt: Int = 8, closeWait: TimeAmount,
    deliver: @escaping Deliver, close: @escaping @Sendable () async -> Void
  ) {
    assembly = MessageAssembly(maxBytes: maxMessageBytes)
    inbox = NIOLockedValueBox(MessageInbox(holdAt: holdAt))
    self.deliver = deliver
    self.close = close
    self.closeWait = closeWait
    refusal = nil
  }

  /// A connection refused as it opens: sent a close frame with `code` and `reason`, and closed; nothing it
  /// sends is read as a message.
  init(refusing code: WebSocketErrorCode, reason: String, closeWait: TimeAmount) {
    assembly = MessageAssembly(maxBytes: 0)
    inbox = NIOLockedValueBox(MessageInbox(holdAt: 1))
    deliver = { _ in }
    close = {}
    self.closeWait = closeWait
    refusal = (code, reason)
  }

  func handlerAdded(context: ChannelHandlerContext) {
    self.context = context
    if let refusal { sendClose(context, refusal.code, reason: refusal.reason) }
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    self.context = nil
    closeTimer?.cancel()
    ended()
  }

  func channelInactive(context: ChannelHandlerContext) {
    closeTimer?.cancel()
    ended()
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = unwrapInboundIn(data)
    switch frame.opcode {
    case .ping:
      guard !closeSent else { return }
      context.writeAndFlush(
        wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
    case .pong:
      break
    case .connectionClose:
      guard !closeSent else {
        // The client answered the server's close: the handshake is done.
        context.close(promise: nil)
        return
      }
      // Answered with the client's code, then closed (the server closes the TCP connection first).
      var payload = frame.unmaskedData
      let code =
        payload.readableBytes >= 2 ? payload.readWebSocketErrorCode() ?? .normalClosure : .normalClosure
      sendClose(context, code, reason: "", thenClose: true)
    default:
      guard !closeSent, refusal == nil else { return }
      switch assembly.take(opcode: frame.opcode, fin: frame.fin, payload: frame.unmaskedData) {
      case .pending: break
      case .message(let message): arrive(message)
      case .close(let code): sendClose(context, code, reason: "", thenClose: true)
      }
    }
  }

  func read(context: ChannelHandlerContext) {
    if inbox.withLockedValue({ $0.holdsReads }) {
      readHeld = true
    } else {
      context.read()
    }
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if event is ChannelShouldQuiesceEvent {
      // The server is shutting down: its WebSockets are closed as going away, and clients resume elsewhere.
      if !closeSent { sendClose(context, .goingAway, reason: "Server shutting down") }
      return
    }
    context.fireUserInboundEventTriggered(event)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    // A frame the decoder refused is answered with its close code by NIO's protocol error handler, which
    // closes the connection once that is written; any other error (a failed socket) closes it now.
    guard !(error is NIOWebSocketError) else { return }
    context.close(promise: nil)
  }

  /// Queues `message` for the session, starting the task that gives messages when none runs.
  private func arrive(_ message: SocketMessage) {
    if inbox.withLockedValue({ $0.arrive(message) }) { run() }
  }

  /// The connection ended: the session is closed after the messages that wait.
  private func ended() {
    if inbox.withLockedValue({ $0.end() }) { run() }
  }

  /// The task that gives waiting messages to the session, one at a time, and ends when none waits. What a
  /// message costs at its deepest (a subscribe's first state, projected and encoded) is returned when the
  /// task ends, not kept while the connection idles.
  private func run() {
    let inbox = inbox
    let deliver = deliver
    let close = close
    let resume = context.map { context in
      NIOLoopBound((self, context), eventLoop: context.eventLoop)
    }
    let eventLoop = context?.eventLoop
    Task {
      while true {
        let (step, resumeReads) = inbox.withLockedValue { $0.next() }
        if resumeReads, let resume, let eventLoop {
          eventLoop.execute { resume.value.0.resumeReads(resume.value.1) }
        }
        switch step {
        case .deliver(let message): await deliver(message)
        case .close:
          await close()
          return
        case .idle: return
        }
      }
    }
  }

  /// Passes on a read held while the inbox was full.
  private func resumeReads(_ context: ChannelHandlerContext) {
    guard readHeld, self.context != nil else { return }
    readHeld = false
    context.read()
  }

  /// Writes a close frame with `code` (and `reason`); closes the connection once it is written when
  /// `thenClose`, else when the client answers it or after `closeWait`.
  private func sendClose(
    _ context: ChannelHandlerContext, _ code: WebSocketErrorCode, reason: String, thenClose: Bool = false
  ) {
    guard !closeSent else { return }
    closeSent = true
    var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
    data.write(webSocketErrorCode: code)
    data.writeString(reason)
    let channel = context.channel
    let written = context.writeAndFlush(
      wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
    if thenClose {
      written.whenComplete { _ in channel.close(promise: nil) }
    } else {
      written.whenFailure { _ in channel.close(promise: nil) }
      closeTimer = context.eventLoop.scheduleTask(in: closeWait) { channel.close(promise: nil) }
    }
  }
}
