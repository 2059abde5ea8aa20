// The server side of the wire: sessions, live queries shared between clients, typed refusals that keep the
// connection usable, resumes of a query, and scopes whose rows never leave the server.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Serving live queries", .timeLimit(.minutes(30)))
struct WireServiceTests {
  static let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_WIRE_CASES")

  /// `prefix`: the items whose id starts with a text of at most 8 characters; `newest`: the items of
  /// version `min` or more, newest first, empty sections hidden.
  static let queries: [WireQuery<TestSection>] = [
    WireQuery("prefix", parameters: ["prefix": .string]) { arguments throws(WireQueryRefusal) in
      let prefix = try arguments.string("prefix")
      guard prefix.count <= 8 else { throw WireQueryRefusal("a prefix has at most 8 characters") }
      return Projection(where: { $0.id.hasPrefix(prefix) })
    },
    WireQuery("newest", parameters: ["min": .integer]) { arguments throws(WireQueryRefusal) in
      let min = try arguments.integer("min")
      return Projection(
        where: { $0.version >= min }, sortedBy: { $0.version > $1.version }, hidingEmptySections: true)
    },
  ]

  /// What `query` shows of `sections`, by plain code.
  static func expected(
    _ sections: [TestSection], _ query: WireQueryRequest?, visible: (TestItem) -> Bool = { _ in true }
  )
    -> [TestSection]
  {
    var shown = sections.map { section in
      var section = section
      section.items = section.items.filter(visible)
      return section
    }
    switch (query?.name, query?.parameters.values.first) {
    case ("prefix", .string(let prefix)):
      for index in shown.indices { shown[index].items.removeAll { !$0.id.hasPrefix(prefix) } }
    case ("newest", .integer(let min)):
      for index in shown.indices {
        shown[index].items = shown[index].items.enumerated().filter { $0.element.version >= min }
          .sorted { ($1.element.version, $0.offset) < ($0.element.version, $1.offset) }.map(\.element)
      }
      shown.removeAll { $0.items.isEmpty }
    default: break
    }
    return shown
  }

  @Test("a view's stream is named by its query, parameters and scope, alike in every process")
  func viewStreamsAreStable() {
    typealias Service = WireService<TestSection, String?>
    let search = WireQueryRequest("search", ["text": .string("spec"), "limit": .integer(3)])
    let reordered = WireQueryRequest("search", ["limit": .integer(3), "text": .string("spec")])
    let name = Service.viewStream(of: "board", query: search, scope: "ann")
    // Fixed bytes: another process computes the same name (a hash seeded per process would not).
    #expect(name == Service.viewStream(of: "board", query: reordered, scope: "ann"))
    #expect(name.hasPrefix("board.v") && name.count > "board.v".count)
    #expect(name != Service.viewStream(of: "board", query: search, scope: "bob"))
    #expect(name != Service.viewStream(of: "board", query: search, scope: nil))
    #expect(name != Service.viewStream(of: "board", query: nil, scope: "ann"))
    let guest = Service.viewStream(of: "board", query: nil, scope: nil)
    #expect(guest == "board.v" + "abe23c319f195dba", "FNV-1a of |nil")
  }

  @Test("a format 1 client gets the whole source in format 1, and no view is made for it")
  func formatOneClient() async throws {
    let source = try BasicDataSource(sections: layout("A: a b | B: c"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let (session, client) = await service.connect(bytes(.subscribe(stream: nil, from: nil), format: 1))
    try await source.replaceItem(TestItem("b", version: 2))
    try await source.appendItems([TestItem("d")], toSection: "B")
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.held == (await source.snapshot))
    #expect(state.formats == [1])
    #expect(state.stream == "s")
    #expect(state.violations.isEmpty, "\(state.violations)")
    #expect(await service.liveViewCount == 0)
    await session.close()
  }

  @Test("a reset is encoded once per view, version and format, however many clients connect then")
  func resetsShared() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 b1 | B: a2"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let query = WireQueryRequest("prefix", ["prefix": .string("a")])
    var sessions: [(WireSession<TestSection, NoScope>, WireClient)] = []
    func connect(_ message: Data) async {
      let (session, client) = await service.connect(message)
      await session.delivered(to: client)
      sessions.append((session, client))
    }
    for _ in 0..<3 { await connect(subscribe(query)) }
    #expect(service.resetsEncoded.withLock { $0 } == 1, "three clients of one view at one version")
    try await source.appendItems([TestItem("a3")], toSection: "A")
    await sessions[0].0.delivered(to: sessions[0].1)  // the view has the new version
    await connect(subscribe(query))
    #expect(service.resetsEncoded.withLock { $0 } == 2, "a new version is encoded anew")
    await connect(subscribe(nil))
    await connect(subscribe(nil))
    await connect(bytes(.subscribe(stream: nil, from: nil), format: 1))
    #expect(service.resetsEncoded.withLock { $0 } == 4, "the whole source: once in format 2, once in 1")
    let whole = await source.snapshot
    let view = try #require(await sessions[3].0.following?.shown)
    for (index, (session, client)) in sessions.enumerated() {
      await session.delivered(to: client)
      let state = client.state.withLock { $0 }
      #expect(state.held == (index < 4 ? view : whole), "client \(index)")
      #expect(state.violations.isEmpty, "\(state.violations)")
      await session.close()
    }
  }

  @Test("a view's versions are the source's: a write it shows arrives as the version the write made")
  func viewVersionsAreTheSources() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 b1 | B: b2"))
    try await source.appendItems([TestItem("a2")], toSection: "B")
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let (session, client) = await service.connect(
      subscribe(WireQueryRequest("prefix", ["prefix": .string("a")])))
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.version } == 1, "the reset is at the source's version")
    try await source.appendItems([TestItem("a3")], toSection: "A")  // 2, shown
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.version } == 2)
    try await source.appendItems([TestItem("b3")], toSection: "A")  // 3, not shown: no batch
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.version } == 2)
    try await source.deleteItems(["a1"])  // 4, shown
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.version == 4 && state.messages == ["reset", "batch", "batch"])
    #expect(state.held.sections == layout("A: a3 | B: a2"))
    await session.close()
  }

  @Test("each client receives only its query's slice, live; identical queries share one view")
  func queriesShareViews() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 b1 a2 | B: b2 a3 | C: c"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let requests: [WireQueryRequest?] = [
      WireQueryRequest("prefix", ["prefix": .string("a")]),
      WireQueryRequest("prefix", ["prefix": .string("a")]),
      WireQueryRequest("newest", ["min": .integer(1)]), WireQueryRequest("newest", ["min": .integer(1)]),
      WireQueryRequest("prefix", ["prefix": .string("b")]), nil,
    ]
    var sessions: [(WireSession<TestSection, NoScope>, WireClient, WireQueryRequest?)] = []
    for request in requests {
      let (session, client) = await service.connect(subscribe(request))
      sessions.append((session, client, request))
    }
    #expect(await service.liveViewCount == 3, "two identical pairs share, the whole source needs no view")
    var random = SeededGenerator(seed: Self.settings.seed)
    for step in 0..<40 {
      let ids = (await source.snapshot).sections.flatMap(\.items).map(\.id)
      switch Int.random(in: 0..<4, using: &random) {
      case 0:
        let id = ids.randomElement(using: &random)!
        try await source.replaceItem(TestItem(id, version: Int.random(in: 0..<3, using: &random)))
      case 1:
        let id = ["a", "b", "c"].randomElement(using: &random)! + "n\(step)"
        try await source.appendItems([TestItem(id, version: 1)], toSection: ["A", "B", "C"][step % 3])
      case 2 where ids.count > 2:
        try await source.deleteItems([ids.randomElement(using: &random)!])
      default:
        try await source.moveItem(
          ids.randomElement(using: &random)!, toSection: ["A", "B", "C"].randomElement(using: &random)!)
      }
    }
    for (session, client, request) in sessions {
      await session.delivered(to: client)
      let state = client.state.withLock { $0 }
      #expect(
        state.held.sections == Self.expected((await source.snapshot).sections, request),
        "\(String(describing: request))")
      #expect(state.violations.isEmpty, "\(state.violations)")
      #expect(state.formats == [2])
      await session.close()
    }
    #expect(await service.liveViewCount == 0)
    #expect(await service.idleViewCount == 3)
  }

  @Test(
    "unknown queries, bad parameters and messages a client does not send are typed errors; the subscription goes on"
  )
  func refusalsKeepTheConnection() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 b1 | B: a2"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let (session, client) = await service.connect(
      subscribe(WireQueryRequest("prefix", ["prefix": .string("a")])))
    await session.delivered(to: client)
    let refused: [(Data, WireError.Code)] = [
      (subscribe(WireQueryRequest("serch")), .unknownQuery),
      (subscribe(WireQueryRequest("prefix")), .invalidParameters),
      (
        subscribe(WireQueryRequest("prefix", ["prefix": .integer(1)])),
        .invalidParameters
      ),
      (
        subscribe(WireQueryRequest("prefix", ["prefix": .string("a"), "x": .bool(true)])),
        .invalidParameters
      ),
      (
        subscribe(WireQueryRequest("prefix", ["prefix": .string("abcdefghij")])),
        .invalidParameters
      ),
      (bytes(.resumed(stream: "s", version: 1)), .unexpectedMessage),
      (Data("not json".utf8), .malformed),
      (Data(#"{"format":"simplesource","formatVersion":4,"type":"subscribe"}"#.utf8), .unsupportedFormat),
    ]
    for (data, _) in refused { await session.receive(data) }
    try await source.appendItems([TestItem("a9")], toSection: "A")
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.errors.map(\.code) == refused.map(\.1))
    #expect(state.errors.contains { $0.detail.contains("at most 8 characters") }, "the query's own reason")
    #expect(state.held.sections == layout("A: a1 a9 | B: a2"))
    #expect(state.violations.isEmpty, "\(state.violations)")
    #expect(await service.liveViewCount == 1)
    await session.close()
  }

  @Test(
    "a client that reconnects resumes its query while the view is kept or the source retains its version"
  )
  func resumeAQuery() async throws {
    // Kept: the view's own history. Dropped: a view made again resumes from the source's retained state.
    // Dropped, and the source retains only its newest version: a reset.
    for (keep, history) in [(1, HistoryLimit.default), (0, .default), (0, .newest)] {
      let resumes = history != .newest
      let source = try BasicDataSource(sections: layout("A: a1 b1 | B: a2"), history: history)
      let service = WireService(source: source, stream: "s", queries: Self.queries, keepingIdleViews: keep)
      let query = WireQueryRequest("prefix", ["prefix": .string("a")])
      let (first, client) = await service.connect(subscribe(query))
      try await source.appendItems([TestItem("a3")], toSection: "B")
      await first.delivered(to: client)
      await first.close()
      let held = client.resumeRequest
      #expect(await service.idleViewCount == keep)
      try await source.replaceItem(TestItem("a1", version: 4))
      try await source.replaceItem(TestItem("b1", version: 4))  // not in the query: no batch for it
      await source.settled()  // offered: with `.newest`, the client's version is no longer retained

      let second = service.session { client.receive($0) }
      await second.receive(bytes(.subscribe(stream: held.stream, from: held.from, query: query)))
      await second.delivered(to: client)
      let state = client.state.withLock { $0 }
      #expect(
        state.messages.filter { $0 == "resumed" }.count == (resumes ? 1 : 0), "kept \(keep), \(history)")
      #expect(state.messages.filter { $0 == "reset" }.count == (resumes ? 1 : 2), "kept \(keep), \(history)")
      #expect(state.held.sections == Self.expected((await source.snapshot).sections, query))
      #expect(state.violations.isEmpty, "\(state.violations)")
      await second.close()
    }
  }

  @Test("a second subscribe replaces the first: its reset comes after the first's last message")
  func secondSubscribe() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 b1 | B: a2 b2"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let (session, client) = await service.connect(
      subscribe(WireQueryRequest("prefix", ["prefix": .string("a")])))
    let writer = Task {
      for round in 0..<30 { try await source.replaceItem(TestItem("a1", version: round + 1)) }
    }
    await session.receive(
      subscribe(WireQueryRequest("prefix", ["prefix": .string("b")])))
    try await writer.value
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.held.sections == layout("A: b1 | B: b2"))
    #expect(state.violations.isEmpty, "\(state.violations)")
    #expect(await service.liveViewCount == 1, "the first view was released")
    await session.close()
  }
}

// MARK: - Authorization

extension WireServiceTests {
  /// The scope of a client: it sees the items whose version modulo 3 is its owner number.
  static func owns(_ owner: Int) -> @Sendable (TestItem) -> Bool { { $0.version % 3 == owner } }

  @Test(
    "over random writes and scope changes, no client ever holds a row outside its scope; each ends showing its slice"
  )
  func noRowOutsideTheScope() async throws {
    let settings = Self.settings
    for run in 0..<max(1, settings.cases / 10) {
      var random = SeededGenerator(seed: settings.seed &+ UInt64(run))
      let items = (0..<24).map { TestItem("\(["a", "b"][$0 % 2])\($0)", version: $0 % 5) }
      let source = try BasicDataSource(sections: [
        TestSection(id: "A", items: Array(items[..<12])), TestSection(id: "B", items: Array(items[12...])),
      ])
      let service = WireService(source: source, stream: "s", queries: Self.queries) { (owner: Int) in
        Self.owns(owner)
      }
      struct Client {
        let session: WireSession<TestSection, Int>
        let client: WireClient
        let allowed: Locked<Set<Int>>
        let query: WireQueryRequest?
      }
      var clients: [Client] = []
      for index in 0..<6 {
        let owner = Int.random(in: 0..<3, using: &random)
        let allowed = Locked<Set<Int>>([owner])
        // Every row the client holds after a message belongs to one scope it may have at that moment.
        let client = WireClient(allows: { item in allowed.withLock { $0.contains(item.version % 3) } })
        let query: WireQueryRequest? =
          switch index % 3 {
          case 0: nil
          case 1: WireQueryRequest("prefix", ["prefix": .string("a")])
          default: WireQueryRequest("newest", ["min": .integer(1)])
          }
        let session = service.session(scope: owner) { client.receive($0) }
        await session.receive(subscribe(query))
        clients.append(Client(session: session, client: client, allowed: allowed, query: query))
      }
      for step in 0..<30 {
        let ids = (await source.snapshot).sections.flatMap(\.items).map(\.id)
        switch Int.random(in: 0..<5, using: &random) {
        case 0, 1:
          // The owner changes: the row leaves one scope and enters another.
          try await source.replaceItem(
            TestItem(ids.randomElement(using: &random)!, version: Int.random(in: 0..<9, using: &random)))
        case 2:
          try await source.moveItem(
            ids.randomElement(using: &random)!, toSection: ["A", "B"].randomElement(using: &random)!)
        case 3:
          let target = clients.randomElement(using: &random)!
          let owner = Int.random(in: 0..<3, using: &random)
          target.allowed.withLock { _ = $0.insert(owner) }
          await target.session.setScope(owner)
          target.allowed.withLock { $0 = [owner] }
        default:
          try await source.deleteItems([ids.randomElement(using: &random)!])
          try await source.appendItems(
            [TestItem("n\(step)", version: Int.random(in: 0..<9, using: &random))],
            toSection: "B")
        }
      }
      for entry in clients {
        await entry.session.delivered(to: entry.client)
        let owner = await entry.session.scope
        let state = entry.client.state.withLock { $0 }
        #expect(state.violations.isEmpty, "run \(run): \(state.violations); \(settings.replay)")
        let expected = Self.expected((await source.snapshot).sections, entry.query, visible: Self.owns(owner))
        #expect(state.held.sections == expected, "run \(run), owner \(owner); \(settings.replay)")
        await entry.session.close()
      }
    }
    print("Scoped sessions: \(max(1, settings.cases / 10)) runs of 6 clients; \(settings.replay)")
  }
}

// MARK: - A query followed by a remote source

/// A remote source following a query of a source through a session, and the source it follows.
final class QueryFollower: Sendable {
  let upstream: BasicDataSource<TestSection>
  let session: WireSession<TestSection, NoScope>
  let remote: RemoteDataSource<TestSection>

  init() async throws {
    upstream = try BasicDataSource(sections: layout("A: a1 b1 | B: a2 | C: b2"))
    let remote = RemoteDataSource<TestSection>(query: WireQueryRequest("newest", ["min": .integer(0)]))
    self.remote = remote
    let service = WireService(source: upstream, stream: "s", queries: WireServiceTests.queries)
    session = service.session { bytes in try await remote.receive(bytes) }
    await session.receive(WireCoder().encode(await remote.subscribeRequest))
  }

  /// Returns once the remote holds the view's state after every write made so far.
  func caughtUp() async { await session.settled() }
}

extension WireServiceTests {
  @Test("a query subscription followed by a RemoteDataSource keeps the contract (conformance suite)")
  func conformance() async {
    var conformance = DataSourceConformance(
      makeSource: {
        let follower = try await QueryFollower()
        await follower.caughtUp()
        return (source: follower.remote, driver: follower)
      },
      subscriberCount: { $0.subscriberCount }
    ) { follower, random in
      let edit = RandomEdit(using: &random)
      try await follower.upstream.update { edit.apply(to: &$0) }
      await follower.caughtUp()
    }
    conformance.runs = ConformanceTests.settings.cases
    let report = await conformance.run(seed: ConformanceTests.settings.seed(forShard: 9))
    print("Conformance, a query followed by RemoteDataSource: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }
}
