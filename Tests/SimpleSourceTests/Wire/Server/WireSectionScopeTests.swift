// Scopes that decide sections: a section a scope refuses never reaches its clients (not its id, its header
// or its rows, in no message), a section entering or leaving a scope is an insert or a delete, edits
// cannot name or reach a refused section, and a query reads the scope that asked.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Scopes that decide sections", .timeLimit(.minutes(30)))
struct WireSectionScopeTests {
  static let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_WIRE_CASES")

  /// Channels: `pub` is everyone's; a `grp-…` section's members are the digits of its id (`grp-02`: users
  /// 0 and 2), fixed for its life; `moving`'s members are the digits of its header, which writers change.
  static func isMember(_ user: Int, of channel: TestSection) -> Bool {
    switch channel.id {
    case "pub": true
    case "moving": channel.header?.contains(String(user)) ?? false
    default: channel.id.dropFirst(4).contains(Character(String(user)))
    }
  }

  /// A row is hidden from the user whose number is its version modulo 4 (users are 0 to 2, so rows of
  /// version 3 modulo 4 are everyone's).
  static func sees(_ user: Int) -> @Sendable (TestItem) -> Bool { { $0.version % 4 != user } }

  /// A fixed channel's header, a text no other message holds.
  static func topic(_ id: String) -> String { "topic of \(id)" }

  static func service(_ source: BasicDataSource<TestSection>) -> WireService<TestSection, Int> {
    WireService(
      source: source, stream: "chat", queries: WireServiceTests.queries, edits: .transactions(on: source),
      sections: { user in { isMember(user, of: $0) } }, rows: { user in sees(user) })
  }

  /// What `user` is shown of `sections` through `query`, by plain code.
  static func expected(_ sections: [TestSection], user: Int, query: WireQueryRequest?) -> [TestSection] {
    WireServiceTests.expected(sections.filter { isMember(user, of: $0) }, query, visible: sees(user))
  }

  @Test(
    "over random writes, membership changes and section inserts, moves and deletes, no message names a section outside the scope; each client ends showing its channels"
  )
  func noSectionOutsideTheScope() async throws {
    let settings = Self.settings
    let runs = max(1, settings.cases / 10)
    for run in 0..<runs {
      var random = SeededGenerator(seed: settings.seed &+ UInt64(run))
      func channel(_ id: String, header: String? = nil, items: Int, from start: Int) -> TestSection {
        TestSection(
          id: id, header: header ?? Self.topic(id),
          items: (start..<start + items).map { TestItem("m\($0)", version: $0 % 7) })
      }
      let source = try BasicDataSource(sections: [
        channel("pub", items: 4, from: 0), channel("grp-01", items: 4, from: 4),
        channel("grp-12", items: 4, from: 8), channel("moving", header: "members 0", items: 4, from: 12),
        channel("grp-02", items: 4, from: 16),
      ])
      let service = Self.service(source)
      // Fixed channels each user may never see, and those inserted later, by id.
      let fixed = ["grp-01", "grp-12", "grp-02", "grp-0", "grp-1", "grp-2"]
      struct Client {
        let user: Int
        let session: WireSession<TestSection, Int>
        let client: WireClient
        let query: WireQueryRequest?
      }
      var clients: [Client] = []
      for index in 0..<6 {
        let user = index % 3
        let secrets = fixed.filter { !$0.dropFirst(4).contains(Character(String(user))) }
        let client = WireClient(
          allows: Self.sees(user), allowsSection: { Self.isMember(user, of: $0) },
          never: (secrets + secrets.map(Self.topic)).map { "\"\($0)\"" })
        let query: WireQueryRequest? = index < 3 ? nil : WireQueryRequest("newest", ["min": .integer(2)])
        let session = service.session(scope: user) { client.receive($0) }
        await session.receive(subscribe(query))
        clients.append(Client(user: user, session: session, client: client, query: query))
      }
      var made = 20
      for step in 0..<30 {
        let snapshot = await source.snapshot
        let ids = snapshot.sections.flatMap(\.items).map(\.id)
        let sectionIDs = snapshot.sectionIDs
        switch Int.random(in: 0..<7, using: &random) {
        case 0:
          // Membership of `moving` changes: it enters some scopes and leaves others.
          let members = (0..<3).filter { _ in Bool.random(using: &random) }.map(String.init).joined()
          try await source.updateSection(TestSection(id: "moving", header: "members \(members)"))
        case 1 where !ids.isEmpty:
          try await source.moveItem(
            ids.randomElement(using: &random)!, toSection: sectionIDs.randomElement(using: &random)!)
        case 2 where !ids.isEmpty:
          try await source.replaceItem(
            TestItem(ids.randomElement(using: &random)!, version: Int.random(in: 0..<9, using: &random)))
        case 3:
          // A fixed channel of one user comes or goes.
          let id = "grp-\(Int.random(in: 0..<3, using: &random))"
          if sectionIDs.contains(id) {
            try await source.deleteSections([id])
          } else {
            try await source.insertSections(
              [channel(id, items: 2, from: made)], before: sectionIDs.randomElement(using: &random)!)
            made += 2
          }
        case 4:
          try await source.moveSection(
            sectionIDs.randomElement(using: &random)!,
            to: Int.random(in: 0..<sectionIDs.count, using: &random))
        case 5:
          try await source.appendItems(
            [TestItem("m\(made)", version: made % 7)], toSection: sectionIDs.randomElement(using: &random)!)
          made += 1
        default:
          if !ids.isEmpty { try await source.deleteItems([ids.randomElement(using: &random)!]) }
        }
        if step % 10 == 9 {
          // Clients that come back resume from what they hold, or reset.
          let entry = clients.randomElement(using: &random)!
          await entry.session.settled()
          let (stream, from) = entry.client.resumeRequest
          await entry.session.receive(bytes(.subscribe(stream: stream, from: from, query: entry.query)))
        }
      }
      for entry in clients {
        await entry.session.delivered(to: entry.client)
        let state = entry.client.state.withLock { $0 }
        #expect(
          state.violations.isEmpty, "run \(run), user \(entry.user): \(state.violations); \(settings.replay)")
        let expected = Self.expected((await source.snapshot).sections, user: entry.user, query: entry.query)
        #expect(state.held.sections == expected, "run \(run), user \(entry.user); \(settings.replay)")
        await entry.session.close()
      }
    }
    print("Section scopes: \(runs) runs of 6 clients; \(settings.replay)")
  }

  @Test("a channel that admits a user arrives as a section insert with its rows; one that drops it, a delete")
  func enteringAndLeaving() async throws {
    let source = try BasicDataSource(sections: [
      TestSection(id: "pub", header: "", items: [TestItem("a", version: 3)]),
      TestSection(
        id: "moving", header: "members 1", items: [TestItem("b", version: 3), TestItem("c", version: 3)]),
    ])
    let service = Self.service(source)
    let client = WireClient(allowsSection: { Self.isMember(0, of: $0) })
    let session = service.session(scope: 0) { client.receive($0) }
    await session.receive(subscribe(nil))
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.held.sectionIDs } == ["pub"])
    try await source.updateSection(TestSection(id: "moving", header: "members 01"))
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.held.sections.map(\.id) } == ["pub", "moving"])
    #expect(client.state.withLock { $0.held.section(withID: "moving")?.items.map(\.id) } == ["b", "c"])
    try await source.updateSection(TestSection(id: "moving", header: "members 2"))
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.held.sectionIDs == ["pub"])
    #expect(state.messages == ["reset", "batch", "batch"], "one batch each way, no reset")
    #expect(state.violations.isEmpty, "\(state.violations)")
    await session.close()
  }

  @Test("edits that name a refused section or a row in it are refused as unknown, and change nothing")
  func editsStayInTheScope() async throws {
    let source = try BasicDataSource(sections: [
      TestSection(id: "pub", header: "", items: [TestItem("a", version: 3)]),
      TestSection(id: "grp-12", header: Self.topic("grp-12"), items: [TestItem("s", version: 3)]),
    ])
    let service = Self.service(source)
    let client = WireClient()
    let session = service.session(scope: 0) { client.receive($0) }
    await session.receive(subscribe(nil))
    let attempts: [(String, [WireOperation<TestSection>], String)] = [
      ("append", [.insert([TestItem("x")], .end(of: "grp-12"))], "unknownSectionID: section id grp-12"),
      ("move-in", [.move("a", .end(of: "grp-12"))], "unknownSectionID: section id grp-12"),
      ("anchor", [.insert([TestItem("x")], .after("s"))], "unknownItemID: item id s"),
      ("replace", [.replace(TestItem("s", version: 7))], "unknownItemID: item id s"),
      ("delete", [.delete(["s"])], "unknownItemID: item id s"),
      ("move-out", [.move("s", .end(of: "pub"))], "unknownItemID: item id s"),
    ]
    let before = await source.snapshot
    for (id, operations, reason) in attempts {
      await session.receive(bytes(.edit(WireEdit(id: id, operations: operations))))
      await session.settled()
      let refusal = try #require(client.state.withLock { $0.messages.last }, "\(id)")
      #expect(refusal == "refused", "\(id)")
      let error = try #require(client.lastRefusal, "\(id)")
      #expect(error.code == .invalidEdit && error.detail == reason, "\(id): \(error)")
    }
    #expect(await source.snapshot == before, "nothing was made")
    // A member makes the same append.
    let member = WireClient()
    let memberSession = service.session(scope: 1) { member.receive($0) }
    await memberSession.receive(subscribe(nil))
    await memberSession.receive(bytes(.edit(WireEdit(id: "append", operations: attempts[0].1))))
    await memberSession.delivered(to: member)
    #expect(member.state.withLock { $0.held.section(withID: "grp-12")?.items.map(\.id) } == ["s", "x"])
    await session.close()
    await memberSession.close()
  }

  @Test("a query reads the scope that asked, and shows no more than the scope")
  func queriesReadTheScope() async throws {
    let mine = WireQuery<TestSection>("mine") { arguments in
      let user = arguments.scope(as: Int.self)
      return Projection(where: { $0.version == user })
    }
    let source = try BasicDataSource(sections: [
      TestSection(id: "pub", header: "", items: [TestItem("a", version: 1), TestItem("b", version: 2)]),
      TestSection(id: "grp-2", header: Self.topic("grp-2"), items: [TestItem("c", version: 2)]),
    ])
    let service = WireService(
      source: source, stream: "chat", queries: [mine], sections: { user in { Self.isMember(user, of: $0) } })
    var shown: [Int: [TestSection]] = [:]
    for user in [1, 2] {
      let client = WireClient()
      let session = service.session(scope: user) { client.receive($0) }
      await session.receive(subscribe(WireQueryRequest("mine")))
      await session.delivered(to: client)
      shown[user] = client.state.withLock { $0.held.sections }
      await session.close()
    }
    #expect(shown[1] == [TestSection(id: "pub", header: "", items: [TestItem("a", version: 1)])])
    #expect(
      shown[2] == [
        TestSection(id: "pub", header: "", items: [TestItem("b", version: 2)]),
        TestSection(id: "grp-2", header: Self.topic("grp-2"), items: [TestItem("c", version: 2)]),
      ])
    #expect(WireQueryArguments(values: [:], scope: "text").scope(as: Int.self) == nil)
  }
}
