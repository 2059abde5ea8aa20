// Several views on one connection: their messages read back as written, every state a client of views
// holds is every view at one version of the source, a version that changes no view sends nothing, an
// edit's answer follows its version's message, and what does not apply is refused and changes nothing.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Several views, one connection, one version", .timeLimit(.minutes(30)))
struct RemoteViewsTests {
  static let views: [String: WireQueryRequest?] = [
    "as": WireQueryRequest("prefix", ["prefix": .string("a")]),
    "bs": WireQueryRequest("prefix", ["prefix": .string("b")]),
    "newest": WireQueryRequest("newest", ["min": .integer(2)]),
    "all": nil,
  ]

  /// A service whose scope 0 sees items of even version and scope 1 those of odd version, and two views
  /// (the a's, and the whole scope).
  static func byParity(_ source: BasicDataSource<TestSection>) -> (
    WireService<TestSection, Int>, [String: WireQueryRequest?]
  ) {
    let service = WireService<TestSection, Int>(
      source: source, stream: "s", queries: WireServiceTests.queries
    ) { scope in { $0.version % 2 == scope } }
    return (service, ["as": WireQueryRequest("prefix", ["prefix": .string("a")]), "all": nil])
  }

  /// A session whose every message is applied to `client`, in order, recording each message's type and
  /// the client's views and version after it.
  final class Wiring: Sendable {
    let client: RemoteViews<TestSection>
    let session: WireSession<TestSection, NoScope>
    let received = Locked<[(type: String, version: Int?, snapshots: [String: Snapshot<TestSection>])]>([])

    init(_ service: WireService<TestSection, NoScope>, views: [String: WireQueryRequest?]) {
      let client = RemoteViews<TestSection>(views: views)
      let received = received
      self.client = client
      session = service.session { data in
        let (message, _) = try WireCoder().read(data, as: TestSection.self)
        try await client.receive(message)
        let (version, snapshots) = (await client.version, await client.snapshots)
        received.withLock { $0.append((message.typeName, version, snapshots)) }
      }
    }
  }

  @Test("subscribeViews, views and viewBatches read back as written; format 2 does not read them")
  func codec() throws {
    let batch = WireBatch(
      UpdateBatch(from: 3, to: 5, changeset: Changeset(from: snapshot("A: a b"), to: snapshot("A: b a c"))))
    let messages: [WireMessage<TestSection>] = [
      .subscribeViews(Self.views),
      .subscribeViews(Self.views, stream: "s.v1", from: 4),
      .views(stream: "s", version: 3, snapshots: ["as": snapshot("A: a"), "all": snapshot("A: a b | B: c")]),
      .viewBatches(from: 3, to: 5, batches: ["all": batch, "as": batch]),
    ]
    for message in messages {
      let data = WireCoder().encode(message)
      let (read, format) = try WireCoder().read(data, as: TestSection.self)
      #expect(format == 3)
      #expect(WireCoder().encode(read) == data, "\(String(decoding: data, as: UTF8.self))")
      let asFormat2 = String(decoding: data, as: UTF8.self)
        .replacingOccurrences(of: #""formatVersion":3"#, with: #""formatVersion":2"#)
      #expect(throws: WireError.self) { try WireCoder().read(Data(asFormat2.utf8), as: TestSection.self) }
    }
    let text = String(decoding: WireCoder().encode(messages[0]), as: UTF8.self)
    #expect(text.contains(#""all":{}"#), "a view of the whole scope is written as {}: \(text)")
  }

  @Test("random writes: after every message the client holds every view at one version of the source")
  func oneVersion() async throws {
    let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_WIRE_CASES")
    for run in 0..<max(2, settings.cases / 4) {
      var random = SeededGenerator(seed: settings.seed &+ UInt64(run))
      let names = ["a0", "a1", "a2", "b0", "b1", "c0", "c1", "c2"]
      let source = try BasicDataSource(sections: [
        TestSection(id: "A", items: names.prefix(5).map { TestItem($0) }),
        TestSection(id: "B", items: names.suffix(3).map { TestItem($0) }),
      ])
      let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
      let wiring = Wiring(service, views: Self.views)
      var states = [0: await source.snapshot.sections]
      await wiring.session.receive(bytes(.subscribeViews(Self.views), format: 3))
      for step in 0..<30 {
        let id = names.randomElement(using: &random)!
        let version = Int.random(in: 0..<4, using: &random)
        switch Int.random(in: 0..<3, using: &random) {
        case 0: try await source.replaceItem(TestItem(id, version: version))
        case 1:
          let other = names.randomElement(using: &random)!
          if other != id { try await source.moveItem(id, before: other) }
        default:
          if step % 5 == 4 { await wiring.session.settled() }  // a consumer that keeps up, sometimes
        }
        states[await source.version.number] = await source.snapshot.sections
      }
      await wiring.session.settled()
      let received = wiring.received.withLock { $0 }
      #expect(received.first?.type == "views", "run \(run); \(settings.replay)")
      for (index, state) in received.enumerated() {
        guard let version = state.version, let sections = states[version] else {
          Issue.record(
            "run \(run): message \(index) left the client at \(String(describing: state.version)); \(settings.replay)"
          )
          continue
        }
        for (name, query) in Self.views {
          #expect(
            state.snapshots[name]?.sections == WireServiceTests.expected(sections, query),
            "run \(run): view \(name) after message \(index), at version \(version); \(settings.replay)")
        }
      }
      // Settled, every view shows the newest state (a version that changed nothing, such as a title
      // replaced by itself, sends nothing: the client may hold an older number with the same rows).
      let newest = await source.snapshot.sections
      for (name, query) in Self.views {
        #expect(
          received.last?.snapshots[name]?.sections == WireServiceTests.expected(newest, query),
          "run \(run): view \(name) settled; \(settings.replay)")
      }
      await wiring.session.close()
    }
  }

  @Test("a version that changes no view sends nothing; an edit's answer follows its version's message")
  func skipsAndAnswers() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 b0 c0"))
    let service = WireService(
      source: source, stream: "s", queries: WireServiceTests.queries, edits: .transactions(on: source))
    let views: [String: WireQueryRequest?] = [
      "as": WireQueryRequest("prefix", ["prefix": .string("a")]),
      "bs": WireQueryRequest("prefix", ["prefix": .string("b")]),
    ]
    let wiring = Wiring(service, views: views)
    await wiring.session.receive(bytes(.subscribeViews(views), format: 3))
    try await source.replaceItem(TestItem("c0", version: 1))  // neither view shows c0
    await wiring.session.settled()
    #expect(wiring.received.withLock { $0.map(\.type) } == ["views"])
    await wiring.session.receive(
      bytes(.edit(WireEdit(id: "e1", operations: [.insert([TestItem("a1")], .end(of: "A"))])), format: 3))
    let received = wiring.received.withLock { $0 }
    #expect(received.map(\.type) == ["views", "viewBatches", "confirmed"], "\(received.map(\.type))")
    #expect(received[1].version == 2 && received[1].snapshots["as"]?.sections == layout("A: a0 a1"))
    #expect(received[1].snapshots["bs"]?.sections == layout("A: b0"), "the view the edit did not change")
    await wiring.session.close()
  }

  @Test(
    "a bad views subscribe is refused and the subscription goes on; a batch that does not apply changes nothing"
  )
  func refusals() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 b0"))
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let errors = Locked<[String]>([])
    let client = RemoteViews<TestSection>(views: ["as": WireQueryRequest("prefix", ["prefix": .string("a")])])
    let session = service.session { data in
      let (message, _) = try WireCoder().read(data, as: TestSection.self)
      if case .error(let error) = message { errors.withLock { $0.append(error.code.rawValue) } }
      try await client.receive(message)
    }
    await session.receive(bytes(await client.subscribeRequest, format: 3))
    let tooMany = Dictionary(uniqueKeysWithValues: (0..<17).map { ("v\($0)", WireQueryRequest?.none) })
    await session.receive(bytes(.subscribeViews(tooMany), format: 3))
    await session.receive(bytes(.subscribeViews(["x": WireQueryRequest("nope", [:])]), format: 3))
    #expect(errors.withLock { $0 } == ["limitReached", "unknownQuery"])
    try await source.replaceItem(TestItem("a0", version: 1))
    await session.settled()
    let (version, held) = (await client.version, await client.snapshots)
    #expect(version == 1 && held["as"]?.sections == layout("A: a0'"), "the first subscription went on")

    let stale = WireBatch(
      UpdateBatch(from: 0, to: 2, changeset: Changeset(from: snapshot("A: a0"), to: snapshot("A: a0 a1"))))
    await #expect(throws: WireError.self) {
      try await client.receive(.viewBatches(from: 0, to: 2, batches: ["as": stale]))
    }
    await #expect(throws: WireError.self) {
      try await client.receive(.viewBatches(from: 1, to: 2, batches: ["zz": stale]))
    }
    let (after, heldAfter) = (await client.version, await client.snapshots)
    #expect(after == 1 && heldAfter == held, "refused: nothing changed")
    await session.close()
  }

  @Test(
    "views within a scope hold only its rows; a scope change sends every view's state again within the new one"
  )
  func scoped() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 a1' b0 b1'"))
    let (service, views) = Self.byParity(source)
    let client = RemoteViews<TestSection>(views: views)
    let types = Locked<[String]>([])
    let session = service.session(scope: 0) { data in
      let (message, _) = try WireCoder().read(data, as: TestSection.self)
      types.withLock { $0.append(message.typeName) }
      try await client.receive(message)
    }
    await session.receive(bytes(await client.subscribeRequest, format: 3))
    try await source.replaceItem(TestItem("b1", version: 2))  // enters scope 0
    await session.settled()
    var held = await client.snapshots
    #expect(held["all"]?.sections == layout("A: a0 b0 b1''") && held["as"]?.sections == layout("A: a0"))
    await session.setScope(1)
    await session.settled()
    held = await client.snapshots
    #expect(held["all"]?.sections == layout("A: a1'") && held["as"]?.sections == layout("A: a1'"))
    #expect(types.withLock { $0 } == ["views", "viewBatches", "views"], "\(types.withLock { $0 })")
    await session.close()
  }

  @Test(
    "a client of views that reconnects resumes from the version it holds, or gets the states when it is too old"
  )
  func resumes() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 b0 c0"), history: HistoryLimit(versions: 4))
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let views: [String: WireQueryRequest?] = [
      "as": WireQueryRequest("prefix", ["prefix": .string("a")]), "all": nil,
    ]
    let client = RemoteViews<TestSection>(views: views)
    let types = Locked<[String]>([])
    func connect() async -> WireSession<TestSection, NoScope> {
      let session = service.session { data in
        let (message, _) = try WireCoder().read(data, as: TestSection.self)
        types.withLock { $0.append(message.typeName) }
        try await client.receive(message)
      }
      await session.receive(bytes(await client.subscribeRequest, format: 3))
      return session
    }
    var session = await connect()
    try await source.appendItems([TestItem("a1")], toSection: "A")
    await session.settled()
    await session.close()
    // Away: two writes, one the view of a's does not show.
    try await source.appendItems([TestItem("a2")], toSection: "A")
    try await source.replaceItem(TestItem("b0", version: 1))
    session = await connect()
    await session.settled()
    var (version, held) = (await client.version, await client.snapshots)
    #expect(
      types.withLock { $0 } == ["views", "viewBatches", "resumed", "viewBatches"], "\(types.withLock { $0 })")
    #expect(version == 3 && held["as"]?.sections == layout("A: a0 a1 a2"))
    #expect(held["all"]?.sections == layout("A: a0 b0' c0 a1 a2"))
    await session.close()
    // Away for longer than the source retains: the views' states again.
    for index in 3..<12 {
      try await source.appendItems([TestItem("a\(index)")], toSection: "A")
      await source.settled()  // a batch each: more than the four retained
    }
    types.withLock { $0 = [] }
    session = await connect()
    await session.settled()
    (version, held) = (await client.version, await client.snapshots)
    #expect(types.withLock { $0 } == ["views"], "\(types.withLock { $0 })")
    #expect(version == 12 && held["as"]?.sections.first?.items.count == 12)
    await session.close()
  }
}
