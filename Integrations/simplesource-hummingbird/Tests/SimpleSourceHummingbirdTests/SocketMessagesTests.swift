// A WebSocket's inbound side with no task per connection: messages assembled from frames, every sequence
// of arrivals, ends and steps of the inbox explored, and the handler's pings, closes, shutdown and
// back-pressure on a testing event loop. No sleeps: the tests await each delivery.

import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing

@testable import SimpleSourceHummingbird

@Suite("Socket messages", .timeLimit(.minutes(1)))
struct SocketMessagesTests {
  // MARK: Assembly

  @Test("fragments make one message; a message in one frame is itself; binary is binary")
  func assembles() {
    var assembly = MessageAssembly(maxBytes: 16)
    #expect(
      assembly.take(opcode: .text, fin: true, payload: ByteBuffer(string: "{}")) == .message(.text("{}")))
    #expect(assembly.take(opcode: .text, fin: false, payload: ByteBuffer(string: "ab")) == .pending)
    #expect(assembly.isAssembling)
    #expect(assembly.take(opcode: .continuation, fin: false, payload: ByteBuffer(string: "cd")) == .pending)
    #expect(
      assembly.take(opcode: .continuation, fin: true, payload: ByteBuffer(string: "é"))
        == .message(.text("abcdé")))
    #expect(!assembly.isAssembling)
    #expect(assembly.take(opcode: .binary, fin: false, payload: ByteBuffer(bytes: [0xFF])) == .pending)
    #expect(
      assembly.take(opcode: .continuation, fin: true, payload: ByteBuffer(bytes: [0xFE])) == .message(.binary)
    )
    // A character split between fragments is whole in the message.
    let bytes = Array("é".utf8)
    #expect(assembly.take(opcode: .text, fin: false, payload: ByteBuffer(bytes: [bytes[0]])) == .pending)
    #expect(
      assembly.take(opcode: .continuation, fin: true, payload: ByteBuffer(bytes: [bytes[1]]))
        == .message(.text("é")))
  }

  @Test("over the limit in one frame or in several: 1009; not UTF-8: 1007; a fragment out of place: 1002")
  func refuses() {
    var assembly = MessageAssembly(maxBytes: 4)
    #expect(
      assembly.take(opcode: .text, fin: true, payload: ByteBuffer(string: "12345"))
        == .close(.messageTooLarge))
    #expect(assembly.take(opcode: .text, fin: false, payload: ByteBuffer(string: "123")) == .pending)
    #expect(
      assembly.take(opcode: .continuation, fin: true, payload: ByteBuffer(string: "45"))
        == .close(.messageTooLarge))
    #expect(
      assembly.take(opcode: .text, fin: true, payload: ByteBuffer(bytes: [0x7B, 0xFF]))
        == .close(.dataInconsistentWithMessage))
    #expect(
      assembly.take(opcode: .continuation, fin: true, payload: ByteBuffer(string: "a"))
        == .close(.protocolError))
    #expect(assembly.take(opcode: .text, fin: false, payload: ByteBuffer(string: "a")) == .pending)
    #expect(
      assembly.take(opcode: .text, fin: true, payload: ByteBuffer(string: "b")) == .close(.protocolError))
  }

  // MARK: Inbox

  /// One step of an exploration of the inbox.
  enum InboxStep: CaseIterable {
    case arrive, end, next
  }

  /// What a sequence of steps made, checked after each.
  struct InboxRun {
    var inbox = MessageInbox(holdAt: 2)
    var arrived: [Int] = []
    var delivered: [Int] = []
    var ended = false
    var runners = 0
    var closes = 0
    var heldBefore = false

    /// Applies `step`; `nil` when it cannot be taken now (a step with no task running), else a failure
    /// or "".
    mutating func apply(_ step: InboxStep) -> String? {
      switch step {
      case .arrive:
        let message = arrived.count + delivered.count + 100
        let starts = inbox.arrive(.text("\(message)"))
        if !ended { arrived.append(message) }
        if starts { runners += 1 }
        if starts && ended { return "a task started for a message after the end" }
      case .end:
        let wasEnded = ended
        ended = true
        if inbox.end() {
          runners += 1
          if wasEnded { return "a task started for a second end" }
        }
      case .next:
        guard runners > 0 else { return nil }
        let before = inbox.count
        let (step, resume) = inbox.next()
        switch step {
        case .deliver(.text(let text)):
          delivered.append(Int(text)!)
          arrived.removeFirst()
          if resume != (before == inbox.holdAt) { return "reads resumed \(resume) with \(before) waiting" }
        case .deliver(.binary): return "a message changed"
        case .idle:
          runners -= 1
          if !arrived.isEmpty { return "the task ended with messages waiting" }
          if ended { return "the task ended idle after the end: the session is never closed" }
        case .close:
          runners -= 1
          closes += 1
          if !arrived.isEmpty { return "the session closed before messages that came before the end" }
          if !ended { return "the session closed before the end" }
        }
      }
      if runners > 1 { return "two tasks give messages at once" }
      if closes > 1 { return "the session closed twice" }
      if inbox.holdsReads != (inbox.count >= inbox.holdAt) { return "reads held with \(inbox.count) waiting" }
      if !arrived.isEmpty && runners == 0 { return "messages wait with no task to give them" }
      if ended && closes == 0 && runners == 0 { return "ended with no task to close the session" }
      if delivered != delivered.sorted() { return "messages given out of order" }
      return ""
    }
  }

  @Test(
    "every sequence of arrivals, ends and steps to depth 11: in order, one task at a time, closed once after the last"
  )
  func inboxExplored() {
    var sequences = 0
    func explore(_ run: InboxRun, _ path: [InboxStep], depth: Int) {
      sequences += 1
      guard depth > 0 else {
        // Drained: every message given, and the session closed once if the connection ended.
        var run = run
        while run.runners > 0 {
          let failure = run.apply(.next)
          if let failure, !failure.isEmpty {
            Issue.record("after \(path) and draining: \(failure)")
            return
          }
        }
        #expect(run.arrived.isEmpty, "after \(path): messages never given")
        #expect(run.closes == (run.ended ? 1 : 0), "after \(path): closed \(run.closes) times")
        return
      }
      for step in InboxStep.allCases {
        var next = run
        guard let failure = next.apply(step) else { continue }
        guard failure.isEmpty else {
          Issue.record("after \(path + [step]): \(failure)")
          continue
        }
        explore(next, path + [step], depth: depth - 1)
      }
    }
    explore(InboxRun(), [], depth: 11)
    #expect(sequences > 10_000)
  }

  // MARK: Handler

  /// What the handler gave the session, and a gate that holds each delivery until it is opened.
  actor Session {
    private(set) var messages: [SocketMessage] = []
    private(set) var closed = 0
    private var open = true
    private var gate: [CheckedContinuation<Void, Never>] = []
    private var awaiting: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func deliver(_ message: SocketMessage) async {
      messages.append(message)
      wake()
      if !open { await withCheckedContinuation { gate.append($0) } }
    }

    func close() {
      closed += 1
      wake()
    }

    /// Holds later deliveries (`false`) or lets them pass, and releases one held.
    func hold(_ held: Bool) { open = !held }

    func releaseOne() { if !gate.isEmpty { gate.removeFirst().resume() } }

    /// Returns once `count` messages and closes in all were given.
    func waitFor(_ count: Int) async {
      guard messages.count + closed < count else { return }
      await withCheckedContinuation { awaiting.append((count, $0)) }
    }

    private func wake() {
      let total = messages.count + closed
      awaiting.removeAll { waiting in
        guard total >= waiting.count else { return false }
        waiting.continuation.resume()
        return true
      }
    }
  }

  /// Counts the reads the pipeline asks the socket for.
  final class ReadCounter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = NIOAny
    let reads = NIOLockedValueBox(0)
    func read(context: ChannelHandlerContext) {
      reads.withLockedValue { $0 += 1 }
      context.read()
    }
  }

  let closeWait = TimeAmount.seconds(5)

  /// A connected channel with a read counter and the handler, giving messages to `session`.
  private func handled(_ session: Session, maxMessageBytes: Int = 64) async throws -> (
    NIOAsyncTestingChannel, ReadCounter
  ) {
    let channel = NIOAsyncTestingChannel()
    let counter = ReadCounter()
    try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).get()
    try await channel.testingEventLoop.executeInContext { [closeWait] in
      try channel.pipeline.syncOperations.addHandler(counter)
      try channel.pipeline.syncOperations.addHandler(
        SocketMessageHandler(
          maxMessageBytes: maxMessageBytes, holdAt: 2, closeWait: closeWait,
          deliver: { await session.deliver($0) }, close: { await session.close() }))
    }
    return (channel, counter)
  }

  private func frame(_ opcode: WebSocketOpcode, fin: Bool = true, _ text: String = "") -> WebSocketFrame {
    let key: WebSocketMaskingKey = [9, 8, 7, 6]
    var data = ByteBuffer(string: text)
    data.webSocketMask(key)
    return WebSocketFrame(fin: fin, opcode: opcode, maskKey: key, data: data)
  }

  private func code(_ frame: WebSocketFrame?) -> WebSocketErrorCode? {
    guard let frame, frame.opcode == .connectionClose else { return nil }
    var data = frame.unmaskedData
    return data.readWebSocketErrorCode()
  }

  @Test("messages reach the session in order, fragments whole; the session closes once, after the last")
  func delivers() async throws {
    let session = Session()
    let (channel, _) = try await handled(session)
    try await channel.writeInbound(frame(.text, "a"))
    try await channel.writeInbound(frame(.text, fin: false, "b"))
    try await channel.writeInbound(frame(.continuation, "c"))
    try await channel.writeInbound(frame(.binary, "d"))
    try await channel.writeInbound(frame(.text, "e"))
    try await channel.close()
    await session.waitFor(5)
    #expect(await session.messages == [.text("a"), .text("bc"), .binary, .text("e")])
    #expect(await session.closed == 1)
  }

  @Test("a ping is answered with its payload; a close is answered with its code and the connection closed")
  func controlFrames() async throws {
    let session = Session()
    let (channel, _) = try await handled(session)
    try await channel.writeInbound(frame(.ping, "hi"))
    let pong = try #require(try await channel.readOutbound(as: WebSocketFrame.self))
    #expect(pong.opcode == .pong && pong.maskKey == nil && pong.data == ByteBuffer(string: "hi"))
    var payload = ByteBuffer()
    payload.write(webSocketErrorCode: .normalClosure)
    let key: WebSocketMaskingKey = [1, 2, 3, 4]
    payload.webSocketMask(key)
    try await channel.writeInbound(
      WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: key, data: payload))
    #expect(code(try await channel.readOutbound(as: WebSocketFrame.self)) == .normalClosure)
    await channel.testingEventLoop.run()
    #expect(!channel.isActive)
    await session.waitFor(1)
    #expect(await session.closed == 1)
    #expect(await session.messages.isEmpty)
  }

  @Test("a message over the limit, in one frame or in fragments, closes with 1009 and reaches no session")
  func tooLarge() async throws {
    for fragments in [false, true] {
      let session = Session()
      let (channel, _) = try await handled(session, maxMessageBytes: 4)
      if fragments {
        try await channel.writeInbound(frame(.text, fin: false, "123"))
        try await channel.writeInbound(frame(.continuation, "45"))
      } else {
        try await channel.writeInbound(frame(.text, "12345"))
      }
      #expect(code(try await channel.readOutbound(as: WebSocketFrame.self)) == .messageTooLarge)
      await channel.testingEventLoop.run()
      #expect(!channel.isActive)
      await session.waitFor(1)
      #expect((await session.messages).isEmpty)
    }
  }

  @Test("reads stop while the session's messages wait, and go on once it takes one")
  func backPressure() async throws {
    let session = Session()
    let (channel, counter) = try await handled(session)
    await session.hold(true)
    // The first is being given (held); two more wait: the inbox's mark.
    for text in ["1", "2", "3"] { try await channel.writeInbound(frame(.text, text)) }
    await session.waitFor(1)
    let before = counter.reads.withLockedValue { $0 }
    channel.read()
    await channel.testingEventLoop.run()
    #expect(counter.reads.withLockedValue { $0 } == before, "read with two messages waiting")
    await session.hold(false)
    await session.releaseOne()
    await session.waitFor(2)
    await channel.testingEventLoop.run()
    #expect(counter.reads.withLockedValue { $0 } == before + 1, "the held read did not go on")
    channel.read()
    await channel.testingEventLoop.run()
    #expect(counter.reads.withLockedValue { $0 } == before + 2)
    await session.waitFor(3)
    try await channel.close()
    await session.waitFor(4)
    #expect(await session.messages == [.text("1"), .text("2"), .text("3")])
  }

  @Test(
    "shutting down sends 1001 and waits for the client's close, or closes after its wait; a refusal says why")
  func serverCloses() async throws {
    for answered in [true, false] {
      let session = Session()
      let (channel, _) = try await handled(session)
      channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
      let close = try await channel.readOutbound(as: WebSocketFrame.self)
      #expect(code(close) == .goingAway)
      #expect(channel.isActive, "closed before the client answered")
      if answered {
        try await channel.writeInbound(frame(.connectionClose))
      } else {
        await channel.testingEventLoop.advanceTime(by: closeWait)
      }
      await channel.testingEventLoop.run()
      #expect(!channel.isActive)
      await session.waitFor(1)
    }
    let refused = NIOAsyncTestingChannel()
    try await refused.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).get()
    try await refused.testingEventLoop.executeInContext { [closeWait] in
      try refused.pipeline.syncOperations.addHandler(
        SocketMessageHandler(refusing: .policyViolation, reason: "too many", closeWait: closeWait))
    }
    let close = try #require(try await refused.readOutbound(as: WebSocketFrame.self))
    #expect(code(close) == .policyViolation)
    #expect(close.data.getString(at: 2, length: close.data.readableBytes - 2) == "too many")
    try await refused.writeInbound(frame(.text, "ignored"))
    await refused.testingEventLoop.advanceTime(by: closeWait)
    #expect(!refused.isActive)
  }
}
