// Every subscribe is served one way: it follows its scope's state, shared per scope, and shows it as it is,
// through one query, or through several views, each projected once per (query, parameters, scope) for every
// session and format that asks for it. A query that cannot be evaluated is refused with nothing changed,
// and one that fails later ends only its own subscription, naming nothing but the query.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Every format served one way", .timeLimit(.minutes(30)))
struct ServedOneWayTests {
  struct Boom: Error {}

  /// The service's queries, and `fragile`: every item, unless one is named `boom`, which it cannot
  /// evaluate.
  static let queries =
    WireServiceTests.queries + [
      WireQuery<TestSection>("fragile") { _ throws(WireQueryRefusal) in
        Projection(where: { item in
          guard item.id != "boom" else { throw Boom() }
          return true
        })
      }
    ]

  @Test(
    "a query that cannot be evaluated is refused at its subscribe, in format 2 and 3; the old subscription goes on"
  )
  func refusedAtTheStart() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 boom | B: a2"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let query = WireQueryRequest("prefix", ["prefix": .string("a")])
    let (session, client) = await service.connect(subscribe(query))
    await session.delivered(to: client)
    await session.receive(subscribe(WireQueryRequest("fragile")))
    await session.receive(
      bytes(.subscribeViews(["all": nil, "fragile": WireQueryRequest("fragile")]), format: 3))
    try await source.appendItems([TestItem("a3")], toSection: "B")
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.errors.map(\.code) == [.queryFailed, .queryFailed])
    #expect(
      state.errors.map(\.detail) == [
        "the query fragile could not be evaluated", "the view fragile could not be evaluated",
      ])
    #expect(state.errors.allSatisfy { !$0.detail.contains("boom") }, "an error never names a row")
    #expect(state.held.sections == layout("A: a1 | B: a2 a3"), "the old subscription went on")
    #expect(state.violations.isEmpty, "\(state.violations)")
    // Nothing of the refused subscribes is held: only the first query's view.
    #expect(await service.liveViewCount == 1)
    await session.close()
    #expect(await service.liveViewCount == 0)
  }

  @Test("a view that fails on a later batch ends its own subscription with queryFailed, in format 2 and 3")
  func failingLater() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 | B: a2"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let (fragile, fragileClient) = await service.connect(subscribe(WireQueryRequest("fragile")))
    let views = RemoteViewsTests.Wiring(
      service, views: ["all": nil, "fragile": WireQueryRequest("fragile")])
    await views.session.receive(bytes(await views.client.subscribeRequest, format: 3))
    let (steady, steadyClient) = await service.connect(subscribe(nil))
    for session in [fragile, views.session, steady] { await session.settled() }
    try await source.appendItems([TestItem("boom")], toSection: "A")
    try await source.appendItems([TestItem("a3")], toSection: "B")
    for session in [fragile, views.session] { await session.settled() }
    await steady.delivered(to: steadyClient)
    let state = fragileClient.state.withLock { $0 }
    #expect(state.errors.map(\.detail) == ["the query fragile could not be evaluated"])
    #expect(state.held.sections == layout("A: a1 | B: a2"), "nothing after the failure was sent")
    #expect(await views.client.serverError?.detail == "the view fragile could not be evaluated")
    #expect(steadyClient.state.withLock(\.held) == (await source.snapshot), "other subscriptions go on")
    #expect(source.subscriberCount == 1, "the failed subscriptions ended; the steady one follows the source")
    for session in [fragile, views.session, steady] { await session.close() }
  }

  @Test(
    "sessions of one scope asking for the same query in format 2 and as views in format 3 share one scope state and one projection per view"
  )
  func oneProjectionForEveryFormat() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 a1 b0 | B: b1 a2"))
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries) {
      (owner: Int) in
      { $0.version % 2 == owner }
    }
    let query = WireQueryRequest("prefix", ["prefix": .string("a")])
    let views: [String: WireQueryRequest?] = ["as": query, "all": nil]
    var plain: [(WireSession<TestSection, Int>, WireClient)] = []
    var several: [(WireSession<TestSection, Int>, RemoteViews<TestSection>)] = []
    for index in 0..<40 {
      if index % 2 == 0 {
        let client = WireClient(allows: { $0.version % 2 == 0 })
        let session = service.session(scope: 0) { client.receive($0) }
        await session.receive(subscribe(query))
        plain.append((session, client))
      } else {
        let client = RemoteViews<TestSection>(views: views)
        let session = service.session(scope: 0) { try await client.receive($0) }
        await session.receive(bytes(.subscribeViews(views), format: 3))
        several.append((session, client))
      }
    }
    // One scope state, and two views: the query both formats ask for, and the whole scope.
    #expect(await service.liveScopeCount == 1)
    #expect(await service.liveViewCount == 2)
    let writes = 10
    for step in 0..<writes {
      try await source.replaceItem(TestItem(["a0", "a1", "b0", "a2"][step % 4], version: step % 3 * 2))
      for (session, _) in plain { await session.settled() }
      for (session, _) in several { await session.settled() }
    }
    let newest = await source.snapshot.sections
    let visible = WireServiceTests.expected(newest, nil) { $0.version % 2 == 0 }
    for (index, (session, client)) in plain.enumerated() {
      await session.delivered(to: client)
      let state = client.state.withLock { $0 }
      #expect(state.violations.isEmpty, "client \(index): \(state.violations)")
      #expect(state.held.sections == WireServiceTests.expected(visible, query), "client \(index)")
    }
    for (index, (_, client)) in several.enumerated() {
      let held = await client.snapshots
      #expect(held["as"]?.sections == WireServiceTests.expected(visible, query), "client \(index)")
      #expect(held["all"]?.sections == visible, "client \(index)")
    }
    // Each view: its first state and a step per batch, made by the first session to need it (sessions
    // running at once, one per thread, may both make one). Forty sessions projecting their own would make
    // twenty times as many.
    let (shared, made) = await service.liveViewSteps
    let threads = ProcessInfo.processInfo.activeProcessorCount
    #expect(shared == 2 && made <= 2 * (1 + writes) * threads, "\(made) projections for 2 views")
    for (session, _) in plain { await session.close() }
    for (session, _) in several { await session.close() }
    let (scopesLeft, viewsLeft) = (await service.liveScopeCount, await service.liveViewCount)
    #expect(scopesLeft == 0 && viewsLeft == 0)
  }

  @Test("a session with no sink that shows a query wakes only for the batches that change what it shows")
  func wokenOnlyForChanges() async throws {
    let source = try BasicDataSource(sections: layout("A: a1 b1 | B: a2"))
    let service = WireService(source: source, stream: "s", queries: Self.queries)
    let (session, client) = await service.connect(
      subscribe(WireQueryRequest("prefix", ["prefix": .string("a")])))
    let sending = try #require(await session.sending)
    await session.delivered(to: client)
    for step in 0..<10 {
      try await source.replaceItem(TestItem("b1", version: step + 1))
      await session.settled()
    }
    // Ten batches held by the publisher's step, none of them sent: parked once, never woken.
    #expect(await session.clientHeldVersion == (await source.version.number))
    #expect(sending.wakes.withLock { $0 } == 0, "a batch that changed nothing it shows woke the task")
    #expect(client.state.withLock(\.messages) == ["reset"])
    try await source.replaceItem(TestItem("a1", version: 5))
    await session.delivered(to: client)
    #expect(sending.wakes.withLock { $0 } == 1, "woken once, to send the batch that changed the query")
    #expect(client.state.withLock(\.messages) == ["reset", "batch"])
    await session.close()
  }
}
