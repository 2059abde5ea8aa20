// Subscribes of several views share their projections per (query, parameters, scope): many sessions of one
// scope cost one projection per view and batch, every client still holds exactly its views, and scopes
// never share.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Views of several sessions, projected once", .timeLimit(.minutes(30)))
struct SharedViewStepsTests {
  @Test("20 sessions of one scope with 4 views: one projection per view and batch, each client exact")
  func oneProjectionPerBatch() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 a1 b0 | B: b1 c0"))
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let views = RemoteViewsTests.views
    var wirings: [RemoteViewsTests.Wiring] = []
    for _ in 0..<20 {
      let wiring = RemoteViewsTests.Wiring(service, views: views)
      await wiring.session.receive(bytes(.subscribeViews(views), format: 3))
      wirings.append(wiring)
    }
    let writes = 12
    for step in 0..<writes {
      let id = ["a0", "a1", "b0", "b1", "c0"][step % 5]
      try await source.replaceItem(TestItem(id, version: step % 4))
      // Every session takes each batch before the next write: they hold the same batch, in step.
      for wiring in wirings { await wiring.session.settled() }
    }
    let newest = await source.snapshot.sections
    for (index, wiring) in wirings.enumerated() {
      let held = await wiring.client.snapshots
      for (name, query) in views {
        #expect(
          held[name]?.sections == WireServiceTests.expected(newest, query), "client \(index), view \(name)")
      }
    }
    let (shared, made) = await service.liveViewSteps
    #expect(shared == views.count, "one shared view per (query, parameters, scope)")
    // Each view: its first state and one step per batch, made by the first session to need it; sessions
    // running at the same moment (one per thread of the pool) may both make one, and the first stored is
    // taken. 20 sessions projecting their own would make 20 times as many.
    let threads = ProcessInfo.processInfo.activeProcessorCount
    #expect(made <= views.count * (1 + writes) * threads, "\(made) projections for \(views.count) views")
    #expect(
      made < views.count * (1 + writes) * wirings.count / 2, "\(made) projections for \(views.count) views")
    for wiring in wirings { await wiring.session.close() }
    #expect(await service.liveViewSteps.views == 0, "the last session to leave released every view")
  }

  @Test("sessions of two scopes asking for the same views share nothing: each holds its own scope's rows")
  func scopesDoNotShare() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 a1' b0 b1'"))
    let (service, views) = RemoteViewsTests.byParity(source)
    var clients: [(scope: Int, client: RemoteViews<TestSection>, session: WireSession<TestSection, Int>)] = []
    for scope in [0, 1, 0, 1] {
      let client = RemoteViews<TestSection>(views: views)
      let session = service.session(scope: scope) { data in
        try await client.receive(WireCoder().read(data, as: TestSection.self).message)
      }
      await session.receive(bytes(await client.subscribeRequest, format: 3))
      clients.append((scope, client, session))
    }
    for (step, id) in ["a0", "b1", "a1", "b0"].enumerated() {
      try await source.replaceItem(TestItem(id, version: step + 2))
      for (_, _, session) in clients { await session.settled() }
    }
    let newest = await source.snapshot.sections
    for (index, (scope, client, _)) in clients.enumerated() {
      let held = await client.snapshots
      for (name, query) in views {
        let expected = WireServiceTests.expected(newest, query) { $0.version % 2 == scope }
        #expect(held[name]?.sections == expected, "client \(index) of scope \(scope), view \(name)")
      }
    }
    #expect(await service.liveViewSteps.views == 2 * views.count, "one view per query and scope")
    for (_, _, session) in clients { await session.close() }
  }

  @Test("sessions of one scope that send the same views from the same version send one encoding of it")
  func oneEncodingPerMessage() async throws {
    let source = try BasicDataSource(sections: layout("A: a0 b0"))
    let service = WireService(source: source, stream: "s", queries: WireServiceTests.queries)
    let views = RemoteViewsTests.views
    let sent = Locked<[[Data]]>([[], []])
    var sessions: [WireSession<TestSection, NoScope>] = []
    for index in 0..<2 {
      let session = service.session { data in sent.withLock { $0[index].append(data) } }
      await session.receive(bytes(.subscribeViews(views), format: 3))
      sessions.append(session)
    }
    try await source.appendItems([TestItem("a1")], toSection: "A")
    for session in sessions { await session.settled() }
    let (first, second) = sent.withLock { ($0[0].last!, $0[1].last!) }
    #expect(String(decoding: first, as: UTF8.self).contains("viewBatches"))
    #expect(first == second)
    // The same bytes, not a copy: encoded once.
    let addresses = [first, second].map { $0.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } }
    #expect(addresses[0] == addresses[1], "one encoding shared by both sessions")
    for session in sessions { await session.close() }
  }
}
