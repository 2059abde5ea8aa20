// Scopes that hold under races and reuse: a scope change while a subscribe is opening its view, edit answers
// kept per scope, and refusals that tell a client nothing of rows it may not see.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

/// A source that forwards to a basic one, except that one subscribe, once armed, waits until the test lets
/// it go: a session's subscribe can be held while it opens its view.
final class GatedSource: DataSourceType {
  typealias Section = TestSection
  let base: BasicDataSource<TestSection>
  let armed = Locked(false)
  let entered: AsyncStream<Void>
  let enteredSignal: AsyncStream<Void>.Continuation
  let release: AsyncStream<Void>
  let releaseSignal: AsyncStream<Void>.Continuation

  init(_ base: BasicDataSource<TestSection>) {
    self.base = base
    (entered, enteredSignal) = AsyncStream.makeStream()
    (release, releaseSignal) = AsyncStream.makeStream()
  }

  var snapshot: Snapshot<TestSection> { get async { await base.snapshot } }
  var version: Version { get async { await base.version } }
  func settled() async { await base.settled() }

  func subscribe(pacing: Pacing) async -> Subscription<TestSection> {
    if armed.withLock({ armed in
      defer { armed = false }; return armed
    }) {
      enteredSignal.yield()
      for await _ in release { break }
    }
    return await base.subscribe(pacing: pacing)
  }
}

@Suite("Scopes under races and reuse", .timeLimit(.minutes(30)))
struct WireScopeTests {
  /// Items of even version belong to scope 0, odd to scope 1.
  static func service<Source: DataSourceType<TestSection>>(
    _ source: Source, writing: BasicDataSource<TestSection>
  )
    -> WireService<TestSection, Int>
  {
    WireService(source: source, stream: "s", edits: .transactions(on: writing)) { scope in
      { $0.version % 2 == scope }
    }
  }

  @Test(
    "a scope change while the subscribe opens its view ends with the newest scope, and no old row after it")
  func scopeChangeDuringSubscribe() async throws {
    let base = try BasicDataSource(sections: layout("A: a b' c d'"))
    let gated = GatedSource(base)
    let service = Self.service(gated, writing: base)
    let allowed = Locked<Set<Int>>([0, 1])
    let client = WireClient(allows: { item in allowed.withLock { $0.contains(item.version % 2) } })
    let session = service.session(scope: 0) { client.receive($0) }
    gated.armed.withLock { $0 = true }
    let subscribing = Task { await session.receive(subscribe(nil)) }
    for await _ in gated.entered { break }  // the subscribe is opening its view with scope 0
    let changing = Task { await session.setScope(1) }
    // The scope change waits for its turn whatever this task does; let the subscribe finish.
    gated.releaseSignal.yield()
    await subscribing.value
    await changing.value
    allowed.withLock { $0 = [1] }
    #expect(await session.scope == 1)
    try await base.replaceItem(TestItem("a", version: 2))  // stays out of scope 1
    try await base.appendItems([TestItem("e", version: 3)], toSection: "A")
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.violations.isEmpty, "\(state.violations)")
    #expect(state.held.sections == layout("A: b' d' e'''"), "the client shows scope 1")
    // The same scope again changes nothing; another does.
    await session.setScope(1)
    allowed.withLock { $0 = [0, 1] }
    await session.setScope(0)
    allowed.withLock { $0 = [0] }
    try await base.appendItems([TestItem("f", version: 1), TestItem("g")], toSection: "A")
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.held.sections } == layout("A: a'' c g"))
    #expect(client.state.withLock { $0.violations }.isEmpty)
    await session.close()
  }

  @Test("subscribes and scope changes racing in any order: each client ends with its newest scope only")
  func racingChanges() async throws {
    let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_WIRE_CASES")
    let runs = max(2, settings.cases / 10)
    for run in 0..<runs {
      try await Self.racingRun(
        seed: settings.seed &+ UInt64(run), steps: 12, name: "run \(run); \(settings.replay)")
    }
    print("Racing scope changes: \(runs) runs; \(settings.replay)")
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a subscribe and a scope change racing, under seeded schedules: the client ends with its newest scope only",
    .seededSchedules(20, quietPeriod: .milliseconds(250)))
  func racingChangesUnderSchedules() async throws {
    try await Self.racingRun(
      seed: RandomTestSettings.runSeed, steps: 4, name: "SIMPLESOURCE_SEED=\(RandomTestSettings.runSeed)")
  }

  /// One run of `steps` rounds: a subscribe and a scope change sent at once from two tasks, in an order the
  /// seed picks, then an edit; the client must end with exactly its newest scope's rows.
  static func racingRun(seed: UInt64, steps: Int, name: String) async throws {
    var random = SeededGenerator(seed: seed)
    let base = try BasicDataSource(sections: [
      TestSection(id: "A", items: (0..<10).map { TestItem("i\($0)", version: $0 % 3) })
    ])
    let service = Self.service(base, writing: base)
    let allowed = Locked<Set<Int>>([0])
    let client = WireClient(allows: { item in allowed.withLock { $0.contains(item.version % 2) } })
    let session = service.session(scope: 0) { client.receive($0) }
    var scope = 0
    for step in 0..<steps {
      let next = Int.random(in: 0..<2, using: &random)
      allowed.withLock { _ = $0.insert(next) }
      // A subscribe and a scope change sent at once, from two tasks, in either order.
      let first = Bool.random(using: &random)
      await withTaskGroup(of: Void.self) { group in
        group.addTask {
          if first { await session.receive(subscribe(nil)) } else { await session.setScope(next) }
        }
        group.addTask {
          if first { await session.setScope(next) } else { await session.receive(subscribe(nil)) }
        }
      }
      allowed.withLock { $0 = [next] }
      scope = next
      let id = "i\(Int.random(in: 0..<10, using: &random))"
      try await base.replaceItem(TestItem(id, version: Int.random(in: 0..<4, using: &random)))
      if step % 4 == 3 { await session.delivered(to: client) }
    }
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.violations.isEmpty, "\(name): \(state.violations)")
    let expected = (await base.snapshot).sections.map { section in
      TestSection(id: section.id, items: section.items.filter { $0.version % 2 == scope })
    }
    #expect(state.held.sections == expected, "\(name)")
    await session.close()
  }

  @Test("two users reusing each other's edit ids: each is made and answered as its own, never the other's")
  func answersPerScope() async throws {
    let source = try BasicDataSource(sections: layout("A: a b'"))
    let service = Self.service(source, writing: source)
    let texts = Locked<[Int: [String]]>([:])
    func session(_ scope: Int) -> WireSession<TestSection, Int> {
      service.session(scope: scope) { data in
        texts.withLock { $0[scope, default: []].append(String(decoding: data, as: UTF8.self)) }
      }
    }
    let bob = session(1)
    let alice = session(0)
    let bobsEdit = bytes(
      .edit(WireEdit(id: "1", operations: [.insert([TestItem("x", version: 1)], .end(of: "A"))])))
    await bob.receive(bobsEdit)
    await alice.receive(
      bytes(.edit(WireEdit(id: "1", operations: [.insert([TestItem("y")], .end(of: "A"))]))))
    // bob's refusal names his own row; alice's edit with that id is hers, and its refusal hers.
    await bob.receive(
      bytes(.edit(WireEdit(id: "2", operations: [.insert([TestItem("b", version: 1)], .end(of: "A"))]))))
    await alice.receive(bytes(.edit(WireEdit(id: "2", operations: [.delete(["a"])]))))
    // A resend is the first answer, for each user.
    await bob.receive(bobsEdit)
    #expect(await source.snapshot.sections == layout("A: b' x' y"), "both users' edits made")
    let answers = texts.withLock { $0 }
    let bobs = answers[1] ?? [], alices = answers[0] ?? []
    #expect(bobs.count == 3 && alices.count == 2, "\(answers)")
    #expect(bobs[0].contains(#""type":"confirmed""#) && bobs[0].contains(#""version":1"#), "\(bobs)")
    #expect(bobs[2] == bobs[0], "bob's resend gets his first answer")
    #expect(alices[0].contains(#""type":"confirmed""#) && alices[0].contains(#""version":2"#), "\(alices)")
    #expect(bobs[1].contains(#""type":"refused""#) && bobs[1].contains("duplicateItemID"), "\(bobs)")
    #expect(alices[1].contains(#""type":"confirmed""#) && alices[1].contains(#""version":3"#), "\(alices)")
    for text in alices { #expect(!text.contains("\"b\"") && !text.contains("item id b"), "\(text)") }
    await bob.close()
    await alice.close()
  }

  @Test("inserting a hidden row's id is refused with the id alone: no positions, no counts of the source")
  func refusalsNameNoPositions() async throws {
    let source = try BasicDataSource(sections: layout("A: a b' | B: c d'"))
    let service = Self.service(source, writing: source)
    let texts = Locked<[String]>([])
    let alice = service.session(scope: 0) { data in
      texts.withLock { $0.append(String(decoding: data, as: UTF8.self)) }
    }
    for (index, operation) in [
      WireOperation<TestSection>.insert([TestItem("d")], .end(of: "A")),  // d is bob's
      .insert([TestItem("c")], .end(of: "A")),  // c is hers: a duplicate she can see
    ].enumerated() {
      await alice.receive(bytes(.edit(WireEdit(id: "e\(index)", operations: [operation]))))
    }
    let answers = texts.withLock { $0 }
    #expect(answers.count == 2)
    for text in answers {
      #expect(text.contains(#""type":"refused""#) && text.contains("duplicateItemID"), "\(text)")
      #expect(!text.contains("position") && !text.contains("["), "\(text)")
    }
    #expect(await source.snapshot.sections == layout("A: a b' | B: c d'"))
    await alice.close()
  }

  @Test("a subscribe from a negative version is malformed, and changes nothing")
  func negativeFrom() async throws {
    let text = #"{"format":"simplesource","formatVersion":2,"type":"subscribe","stream":"s","from":-1}"#
    #expect { try WireCoder().read(Data(text.utf8), as: TestSection.self) } throws: { error in
      (error as? WireError)?.code == .malformed
    }
  }
}
