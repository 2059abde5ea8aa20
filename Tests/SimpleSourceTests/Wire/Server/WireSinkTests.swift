// Sessions with a sink: the view's publisher writes every batch, encoded once per view and format, to the
// sink of every session parked with one; a full connection wakes its session's task, which sends by itself
// and parks with its sink again; clients see every version once.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Sessions with a sink", .timeLimit(.minutes(30)))
struct WireSinkTests {
  static let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_WIRE_CASES")

  /// A client whose session has a sink: what `send` and the sink deliver go to one ``WireClient`` in the
  /// order they are called, and each is counted. The sink refuses while `full` says so.
  final class SinkClient: Sendable {
    let client: WireClient
    let sends = Locked(0)
    let frames = Locked(0)
    let refusals = Locked(0)
    /// Every frame taken, with its batch's `to` (held, so that identities are not reused).
    let taken = Locked<[(to: Int, frame: WireFrame)]>([])
    let full: Locked<@Sendable () -> Bool>

    init(allows: @escaping @Sendable (TestItem) -> Bool = { _ in true }) {
      client = WireClient(allows: allows)
      full = Locked({ false })
    }

    func send(_ data: Data) {
      sends.withLock { $0 += 1 }
      client.receive(data)
    }

    func sink(_ frame: WireFrame) -> Bool {
      guard !full.withLock({ $0 })() else {
        refusals.withLock { $0 += 1 }
        return false
      }
      frames.withLock { $0 += 1 }
      client.receive(frame.bytes)
      taken.withLock { $0.append((client.state.withLock(\.version), frame)) }
      return true
    }

    func session<Scope>(of service: WireService<TestSection, Scope>, scope: Scope) -> WireSession<
      TestSection, Scope
    > {
      service.session(scope: scope, sink: { self.sink($0) }) { self.send($0) }
    }
  }

  static func source() throws -> BasicDataSource<TestSection> {
    try BasicDataSource(sections: layout("A: a1 b1 a2 | B: b2 a3"))
  }

  /// Awaits every session's sending task parking with its sink.
  static func parked<Scope>(_ sessions: [WireSession<TestSection, Scope>]) async {
    for session in sessions {
      let sending = await session.sending
      #expect(sending != nil, "subscribed")
      await sending?.parked(times: 1)
    }
  }

  /// Sessions of `clients` following the whole of `source` (one service), once each is parked with its sink.
  static func joinedWholeSource(of source: BasicDataSource<TestSection>, _ clients: [SinkClient]) async
    -> [WireSession<TestSection, NoScope>]
  {
    let service = WireService(source: source, stream: "s")
    let sessions = clients.map { $0.session(of: service, scope: NoScope()) }
    for session in sessions { await session.receive(subscribe(nil)) }
    await parked(sessions)
    return sessions
  }

  @Test(
    "a batch is written to the sessions that follow the source as it is first, then to those that show views, fewest first"
  )
  func dearerSessionsAreWrittenLater() async throws {
    let source = try Self.source()
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let prefix = { (text: String) in WireQueryRequest("prefix", ["prefix": .string(text)]) }
    // Subscribed dearest first: three views, two views, one query, the whole source.
    let subscribes: [(name: String, message: Data)] = [
      ("three views", bytes(.subscribeViews(["x": prefix("a"), "y": nil, "z": prefix("a1")]), format: 3)),
      ("two views", bytes(.subscribeViews(["x": prefix("a"), "y": nil]), format: 3)),
      ("one query", subscribe(prefix("a"))),
      ("whole source", subscribe(nil)),
    ]
    let (writes, write) = AsyncStream.makeStream(of: String.self)
    var sessions: [WireSession<TestSection, NoScope>] = []
    for (name, message) in subscribes {
      let session = service.session(
        scope: NoScope(),
        sink: { _ in
          write.yield(name)
          return true
        }
      ) { _ in }
      await session.receive(message)
      sessions.append(session)
    }
    await Self.parked(sessions)
    // One batch that changes every view.
    try await source.appendItems([TestItem("a10")], toSection: "B")
    var written: [String] = []
    for await name in writes {
      written.append(name)
      if written.count == subscribes.count { break }
    }
    #expect(written == ["whole source", "one query", "two views", "three views"])
    for session in sessions { await session.close() }
  }

  @Test(
    "sessions of one view get every batch through their sinks, one frame per batch and format, nothing through send"
  )
  func oneFramePerBatch() async throws {
    let source = try Self.source()
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let query = WireQueryRequest("prefix", ["prefix": .string("a")])
    var clients: [(SinkClient, WireSession<TestSection, NoScope>)] = []
    for index in 0..<8 {
      let client = SinkClient()
      let session = client.session(of: service, scope: NoScope())
      await session.receive(subscribe(index < 6 ? query : nil))
      clients.append((client, session))
    }
    await Self.parked(clients.map(\.1))
    for step in 0..<20 {
      try await source.appendItems([TestItem("a\(10 + step)")], toSection: "B")
      // Written to every sink before the next write (see `viewsThroughSinks`): a write published before
      // the hub's writer took the one before it would be composed with it by the session's task, and sent.
      for (_, session) in clients { await session.settled() }
      if step % 3 == 0 {
        try await source.replaceItem(TestItem("b1", version: step))
        for (_, session) in clients { await session.settled() }
      }
    }
    for (client, session) in clients {
      await session.delivered(to: client.client)
      let state = client.client.state.withLock { $0 }
      #expect(state.violations.isEmpty, "\(state.violations)")
      #expect(client.sends.withLock { $0 } == 1, "only the reset goes through send")
      #expect(client.frames.withLock { $0 } > 0)
    }
    let (query0, whole) = (
      clients[0].0.client.state.withLock(\.held), clients[7].0.client.state.withLock(\.held)
    )
    #expect(query0.sections == WireServiceTests.expected((await source.snapshot).sections, query))
    #expect(whole == (await source.snapshot))
    // Encoded once per view: the clients of a view took the same frame object for each batch.
    for (viewClients, _) in [(clients[0..<6], "query"), (clients[6..<8], "whole source")] {
      let byBatch = viewClients.map { entry in
        Dictionary(entry.0.taken.withLock { $0 }.map { ($0.to, ObjectIdentifier($0.frame)) }) { first, _ in
          first
        }
      }
      for batch in byBatch[0] {
        #expect(byBatch.allSatisfy { $0[batch.key] == nil || $0[batch.key] == batch.value })
      }
      #expect(byBatch.allSatisfy { $0.count == byBatch[0].count })
    }
    // A subscription per session, held by its parked task, all of the source itself (a service with no
    // scope rules projects nothing but its queries' steps), and one shared view for the query.
    #expect(source.subscriberCount == 8)
    #expect(await service.liveViewCount == 1)
    for (_, session) in clients { await session.close() }
  }

  @Test("a session's sent version follows every batch its sink takes, with no task of its own woken")
  func sentWithoutWaking() async throws {
    let source = try Self.source()
    let clients = [SinkClient(), SinkClient()]
    let sessions = await Self.joinedWholeSource(of: source, clients)
    for step in 0..<5 {
      let version = try await source.appendItems([TestItem("a\(20 + step)")], toSection: "A")
      // The hub's writer wrote the batch to both sinks and reported it held: no session's task had to run.
      // (`source.settled()` returns once the batch is offered; the writer may not have run yet.)
      for session in sessions {
        await session.settled()
        #expect(await session.clientHeldVersion == version.number)
        #expect(await session.sending?.wakes.withLock { $0 } == 0, "a batch its sink took woke the task")
      }
    }
    for (client, session) in zip(clients, sessions) {
      #expect(client.sends.withLock { $0 } == 1, "only the reset goes through send")
      #expect(client.client.state.withLock(\.held) == (await source.snapshot))
      await session.close()
    }
  }

  @Test(
    "a full connection wakes its session, which sends from the version it holds, then parks with its sink again"
  )
  func fullConnection() async throws {
    let source = try Self.source()
    let (steady, slow) = (SinkClient(), SinkClient())
    let sessions = await Self.joinedWholeSource(of: source, [steady, slow])
    slow.full.withLock { $0 = { true } }
    for step in 0..<6 {
      try await source.appendItems([TestItem("f\(step)")], toSection: "A")
      for (client, session) in zip([steady, slow], sessions) { await session.delivered(to: client.client) }
    }
    #expect(slow.refusals.withLock { $0 } > 0)
    #expect(slow.sends.withLock { $0 } > 1, "batches went through send while the sink refused")
    slow.full.withLock { $0 = { false } }
    // Each refusal woke its task (or came back to it as it asked), which sent by itself; once the sink
    // takes frames again, the next batch goes through it, not through send.
    let sending = try #require(await sessions[1].sending)
    #expect(sending.wakes.withLock { $0 } == slow.refusals.withLock { $0 })
    let (frames, sends) = (slow.frames.withLock { $0 }, slow.sends.withLock { $0 })
    try await source.appendItems([TestItem("after")], toSection: "B")
    await sessions[1].delivered(to: slow.client)
    #expect(slow.frames.withLock { $0 } == frames + 1 && slow.sends.withLock { $0 } == sends)
    for client in [steady, slow] {
      let state = client.client.state.withLock { $0 }
      #expect(state.violations.isEmpty, "\(state.violations)")
      #expect(state.held == (await source.snapshot))
    }
    for session in sessions { await session.close() }
  }

  @Test("a session that subscribes again or closes is written to no more: nothing of the old stream follows")
  func leaving() async throws {
    let source = try Self.source()
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let (first, second) = (SinkClient(), SinkClient())
    let sessions = [
      first.session(of: service, scope: NoScope()), second.session(of: service, scope: NoScope()),
    ]
    for session in sessions { await session.receive(subscribe(nil)) }
    await Self.parked(sessions)
    let query = WireQueryRequest("newest", ["min": .integer(1)])
    await sessions[0].receive(subscribe(query))
    try await source.replaceItem(TestItem("a2", version: 3))
    await sessions[0].delivered(to: first.client)
    await sessions[1].delivered(to: second.client)
    let closedAt = second.client.state.withLock(\.version)
    await sessions[1].close()
    try await source.replaceItem(TestItem("b2", version: 4))
    await sessions[0].delivered(to: first.client)
    let state = first.client.state.withLock { $0 }
    #expect(state.violations.isEmpty, "\(state.violations)")
    #expect(state.held.sections == WireServiceTests.expected((await source.snapshot).sections, query))
    let closed = second.client.state.withLock { $0 }
    #expect(closed.violations.isEmpty && closed.version == closedAt, "a closed session was written to")
    await sessions[0].close()
    // Every session's subscription ended with it; the query's view is kept idle, for resumes.
    let idle = await service.idleViewCount
    #expect(source.subscriberCount == 0 && idle == 1)
  }

  /// A client of several views whose session has a sink: every message `send` and the sink deliver is
  /// logged in the order they are called (the order a transport queues them in), then read by a
  /// ``RemoteViews`` in that order. The sink refuses while `full` says so.
  final class ViewsSinkClient: Sendable {
    let views: [String: WireQueryRequest?]
    /// Every message, whether it came through the sink, and the frame when it did.
    let log = Locked<[(bytes: Data, frame: WireFrame?)]>([])
    let refusals = Locked(0)
    let full = Locked(false)

    init(views: [String: WireQueryRequest?]) { self.views = views }

    func session(of service: WireService<TestSection, NoScope>) -> WireSession<TestSection, NoScope> {
      service.session(
        sink: { frame in
          guard !self.full.withLock({ $0 }) else {
            self.refusals.withLock { $0 += 1 }
            return false
          }
          self.log.withLock { $0.append((frame.bytes, frame)) }
          return true
        },
        send: { bytes in self.log.withLock { $0.append((bytes, nil)) } })
    }

    var sends: Int { log.withLock { $0.count { $0.frame == nil } } }
    var frames: [WireFrame] { log.withLock { $0.compactMap(\.frame) } }

    /// The views as a client that read every message so far holds them.
    func held() async throws -> RemoteViews<TestSection> {
      let client = RemoteViews<TestSection>(views: views)
      for (bytes, _) in log.withLock({ $0 }) { try await client.receive(bytes) }
      return client
    }
  }

  @Test(
    "sessions of several views get every batch through their sinks, one frame per message, the views exact")
  func viewsThroughSinks() async throws {
    let source = try Self.source()
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let views = RemoteViewsTests.views
    let clients = (0..<6).map { _ in ViewsSinkClient(views: views) }
    let sessions = clients.map { $0.session(of: service) }
    for session in sessions { await session.receive(bytes(.subscribeViews(views), format: 3)) }
    await Self.parked(sessions)
    clients[5].full.withLock { $0 = true }
    for step in 0..<20 {
      try await source.appendItems([TestItem("a\(10 + step)")], toSection: "B")
      if step % 3 == 0 { try await source.replaceItem(TestItem("b1", version: step)) }
      // Written to every sink (or sent) before the next write: a batch per step, not a few coalesced. Not
      // `source.settled()`, which returns once the batch is offered: a write published before the hub's
      // writer took the one before it is composed with it, by the session's task.
      for session in sessions { await session.settled() }
      if step == 10 { clients[5].full.withLock { $0 = false } }
    }
    for session in sessions { await session.settled() }
    let newest = await source.snapshot.sections
    for (index, client) in clients.enumerated() {
      let held = try await client.held()
      let snapshots = await held.snapshots
      for (name, query) in views {
        #expect(
          snapshots[name]?.sections == WireServiceTests.expected(newest, query),
          "client \(index), view \(name)")
      }
      #expect(await held.version == (await source.version.number))
    }
    // The five that never refused: only the views' states went through send, and the batches' frames are
    // the same objects for all five (encoded once per message).
    for client in clients[0..<5] { #expect(client.sends == 1, "only the views' states go through send") }
    let frames = clients[0..<5].map { $0.frames.map(ObjectIdentifier.init) }
    #expect(frames[0].count >= 20 && frames.allSatisfy { $0 == frames[0] })
    // The one that refused was woken for each refusal, sent by itself, and took frames again after.
    let (refusals, sends) = (clients[5].refusals.withLock { $0 }, clients[5].sends)
    #expect(refusals > 0 && sends > 1)
    let sending = try #require(await sessions[5].sending)
    #expect(sending.wakes.withLock { $0 } == refusals)
    let before = clients[5].frames.count
    try await source.replaceItem(TestItem("a1", version: 7))
    await sessions[5].settled()
    #expect(clients[5].frames.count == before + 1 && clients[5].sends == sends)
    for session in sessions { await session.close() }
  }

  @Test("a session that resumes several views projects them on its first batch, then parks with its sink")
  func viewsResumedThroughSinks() async throws {
    let source = try Self.source()
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let views = RemoteViewsTests.views
    let first = ViewsSinkClient(views: views)
    let session = first.session(of: service)
    await session.receive(bytes(.subscribeViews(views), format: 3))
    try await source.replaceItem(TestItem("a2", version: 4))
    await session.settled()
    let holding = try await first.held()
    let (stream, version) = (await holding.stream, await holding.version)
    await session.close()

    try await source.replaceItem(TestItem("b2", version: 5))
    let resuming = ViewsSinkClient(views: views)
    resuming.log.withLock { $0 = first.log.withLock { $0 } }
    let resumed = resuming.session(of: service)
    await resumed.receive(bytes(.subscribeViews(views, stream: stream, from: version), format: 3))
    await resumed.settled()
    for step in 0..<4 {
      try await source.appendItems([TestItem("a\(30 + step)")], toSection: "A")
      // Written to its sink before the next write (see `viewsThroughSinks`).
      await resumed.settled()
    }
    await resumed.settled()
    let held = try await resuming.held().snapshots
    let newest = await source.snapshot.sections
    for (name, query) in views {
      #expect(held[name]?.sections == WireServiceTests.expected(newest, query), "view \(name)")
    }
    let log = resuming.log.withLock { $0 }.dropFirst(first.log.withLock { $0.count })
    let firstMessage = String(decoding: log.first?.bytes ?? Data(), as: UTF8.self)
    #expect(firstMessage.contains("resumed"))
    // The batch it missed went through send (its views projected by the task); the four after it, through
    // the sink.
    #expect(log.count { $0.frame != nil } == 4)
    await resumed.close()
  }

  @Test("random writes, sinks that refuse at random, scope changes and resubscribes: every client exact")
  func randomized() async throws {
    let settings = Self.settings
    var refusalsSeen = 0
    var framesSeen = 0
    for run in 0..<max(1, settings.cases / 4) {
      var random = SeededGenerator(seed: settings.seed &+ UInt64(run))
      let source = try Self.source()
      let service = WireService(
        source: source, stream: "s", queries: WireServiceTests.queries, history: HistoryLimit(versions: 4)
      ) { (owner: Int) in WireServiceTests.owns(owner) }
      var clients: [(client: SinkClient, session: WireSession<TestSection, Int>, allowed: Locked<Set<Int>>)] =
        []
      for index in 0..<6 {
        let owner = index % 2
        let allowed = Locked<Set<Int>>([owner])
        let client = SinkClient(allows: { item in allowed.withLock { $0.contains(item.version % 3) } })
        // Refuses about one frame in four, decided by its own seeded generator.
        let refusing = Locked(SeededGenerator(seed: settings.seed &+ UInt64(run * 8 + index)))
        client.full.withLock { $0 = { refusing.withLock { Int.random(in: 0..<4, using: &$0) == 0 } } }
        let session = client.session(of: service, scope: owner)
        await session.receive(
          subscribe(index % 3 == 0 ? WireQueryRequest("newest", ["min": .integer(1)]) : nil))
        clients.append((client, session, allowed))
      }
      for step in 0..<40 {
        let ids = (await source.snapshot).sections.flatMap(\.items).map(\.id)
        switch Int.random(in: 0..<8, using: &random) {
        case 0, 1, 2:
          try await source.replaceItem(
            TestItem(ids.randomElement(using: &random)!, version: Int.random(in: 0..<6, using: &random)))
        case 3:
          try await source.appendItems(
            [TestItem("n\(step)", version: Int.random(in: 0..<6, using: &random))], toSection: "B")
        case 4:
          try await source.moveItem(
            ids.randomElement(using: &random)!, toSection: ["A", "B"].randomElement(using: &random)!)
        case 5:
          let target = clients.randomElement(using: &random)!
          let owner = Int.random(in: 0..<3, using: &random)
          target.allowed.withLock { _ = $0.insert(owner) }
          await target.session.setScope(owner)
          target.allowed.withLock { $0 = [owner] }
        case 6:
          // A client resumes from what it holds once nothing is in flight to it.
          let target = clients.randomElement(using: &random)!
          await target.session.delivered(to: target.client.client)
          let state = target.client.client.state.withLock { $0 }
          let query: WireQueryRequest? =
            Bool.random(using: &random) ? WireQueryRequest("prefix", ["prefix": .string("a")]) : nil
          await target.session.receive(
            bytes(.subscribe(stream: state.stream, from: state.version, query: query)))
        default:
          for entry in clients { await entry.session.delivered(to: entry.client.client) }
        }
      }
      for entry in clients {
        entry.client.full.withLock { $0 = { false } }
        try await source.replaceItem(TestItem("a1", version: 9))
        await entry.session.delivered(to: entry.client.client)
        let state = entry.client.client.state.withLock { $0 }
        #expect(state.violations.isEmpty, "run \(run): \(state.violations); \(settings.replay)")
        let (shown, _, stream) = try #require(await entry.session.following)
        #expect(state.stream == stream && state.held == shown, "run \(run); \(settings.replay)")
        refusalsSeen += entry.client.refusals.withLock { $0 }
        framesSeen += entry.client.frames.withLock { $0 }
        await entry.session.close()
      }
    }
    #expect(refusalsSeen > 0 && framesSeen > 0)
    print(
      "Sinks: \(max(1, settings.cases / 4)) runs of 6 clients; \(framesSeen) frames, \(refusalsSeen) refused; \(settings.replay)"
    )
  }
}
