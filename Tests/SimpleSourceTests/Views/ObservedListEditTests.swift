// Edits made in the list itself (SwiftUI's onMove and onDelete): shown at once, kept over the source's
// batches until it holds them, then reconciled without a second update; a refusal rolls them back.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

/// Holds each edit it is asked for until the test lets it go (or refuses it), then makes it in `source`.
actor HeldEdits: ReorderingDelegate {
  typealias Section = TestSection
  let source: BasicDataSource<TestSection>
  private var held: [CheckedContinuation<Bool, Never>] = []
  private var waiting: [CheckedContinuation<Void, Never>] = []

  init(_ source: BasicDataSource<TestSection>) { self.source = source }

  /// Waits to be let go; then moves, or refuses as if the item were gone.
  func reorder(_ move: InteractiveMove<TestSection>) async throws -> Version {
    guard await hold() else { throw TestSource.Error(code: .unknownItemID, itemID: move.itemID) }
    return try await source.reorder(move)
  }

  /// Waits to be let go; then deletes, or refuses.
  func delete(_ ids: [String]) async throws -> Version {
    guard await hold() else { throw TestSource.Error(code: .unknownItemID, itemID: ids.first) }
    return try await source.deleteItems(ids)
  }

  private func hold() async -> Bool {
    await withCheckedContinuation { continuation in
      held.append(continuation)
      for waiter in waiting { waiter.resume() }
      waiting = []
    }
  }

  /// Returns once an edit is held.
  func arrived() async {
    if !held.isEmpty { return }
    await withCheckedContinuation { waiting.append($0) }
  }

  /// Lets the first held edit go on, or refuses it.
  func release(allowing: Bool) { held.removeFirst().resume(returning: allowing) }
}

@MainActor
@Suite("ObservedList edits", .timeLimit(.minutes(30)))
struct ObservedListEditTests {
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func shownIDs(_ list: ObservedList<TestSection>) -> [[String]] {
    list.sections.map { $0.rows.map(\.id) }
  }

  /// Waits until `list` holds every version `source` offered, and checks that it shows the source's state.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func expectFollows(_ list: ObservedList<TestSection>, _ source: BasicDataSource<TestSection>) async {
    await source.settled()
    #expect(await list.reached(await source.offeredVersion))
    #expect(ObservedListTests.shownContent(list) == (await source.snapshot).sections)
  }

  /// Lets the edit `delegate` holds go on, waits for it and for the source's batch for it, and returns the
  /// observations of `list` that batch invalidated.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func echo(
    of edit: Task<Void, any Error>, releasing delegate: HeldEdits, in list: ObservedList<TestSection>
  ) async throws -> [String: Int] {
    let invalidations = Invalidations()
    ObservedListTests.observeEverything(list, in: invalidations)
    await delegate.release(allowing: true)
    try await edit.value
    await expectFollows(list, delegate.source)
    return invalidations.counts
  }

  @Test("a move shows at once, stays over a concurrent batch, and the source's echo changes nothing")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func moveReconciles() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c d | B: e"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let delegate = HeldEdits(source)
    let moving = list.move(fromOffsets: [0], toOffset: 3, inSection: 0, using: delegate)
    await delegate.arrived()
    #expect(Self.shownIDs(list) == [["b", "c", "a", "d"], ["e"]], "shown at once")

    let other = try await source.replaceItem(TestItem("d", version: 1))  // another writer meanwhile
    #expect(try await list.reached(other))
    #expect(Self.shownIDs(list) == [["b", "c", "a", "d"], ["e"]], "kept over a batch without it")
    #expect(list.sections[0].rows.last?.item.version == 1)

    let echo = try await Self.echo(of: moving, releasing: delegate, in: list)
    #expect(echo == [:], "the source's batch for the move changes nothing shown")
    list.stop()
  }

  @Test("several rows moved at once land as SwiftUI's onMove places them")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func moveSeveral() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c d e"))
    let list = await ObservedList(following: source, pacing: .immediate)
    try await list.move(fromOffsets: [0, 2], toOffset: 4, inSection: 0, using: source).value
    #expect(Self.shownIDs(list) == [["b", "d", "a", "c", "e"]])
    await Self.expectFollows(list, source)
    #expect((await source.snapshot).sections == layout("A: b d a c e"))
    list.stop()
  }

  @Test("random onMove offsets and destinations land where SwiftUI places them, in model and source (seeded)")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func randomMoves() async throws {
    let settings = RandomTestSettings.current(defaultCases: 40, casesVariable: "SIMPLESOURCE_VIEW_CASES")
    var random = SeededGenerator(seed: settings.seed(forShard: 83))
    for run in 0..<settings.cases {
      let names = (0..<Int.random(in: 1..<9, using: &random)).map { "i\($0)" }
      let source = try BasicDataSource(sections: [TestSection(id: "A", items: names.map { TestItem($0) })])
      let list = await ObservedList(following: source, pacing: .immediate)
      var offsets = IndexSet()
      for index in names.indices where Bool.random(using: &random) { offsets.insert(index) }
      let destination = Int.random(in: 0...names.count, using: &random)
      // SwiftUI's placement: the rows left, with the moved ones, in order, before the row at `destination`.
      var expected = names.indices.filter { !offsets.contains($0) }.map { names[$0] }
      expected.insert(
        contentsOf: offsets.map { names[$0] }, at: destination - offsets.count(in: 0..<destination))
      try await list.move(fromOffsets: offsets, toOffset: destination, inSection: 0, using: source).value
      let place = "run \(run): \(Array(offsets)) to \(destination); \(settings.replay)"
      #expect(Self.shownIDs(list) == [expected], "\(place)")
      await source.settled()
      #expect(await list.reached(await source.offeredVersion))
      #expect((await source.snapshot).itemIDs(inSection: 0) == expected, "\(place)")
      #expect(Self.shownIDs(list) == [expected], "\(place)")
      list.stop()
    }
  }

  @Test("a refused move or delete is rolled back in one update, and its error reaches the caller")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func refusalsRollBack() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let delegate = HeldEdits(source)
    let moving = list.move(fromOffsets: [2], toOffset: 0, inSection: 0, using: delegate)
    await delegate.arrived()
    #expect(Self.shownIDs(list) == [["c", "a", "b"]])
    let invalidations = Invalidations()
    ObservedListTests.observeEverything(list, in: invalidations)
    await delegate.release(allowing: false)
    await #expect(throws: TestSource.Error.self) { try await moving.value }
    #expect(Self.shownIDs(list) == [["a", "b", "c"]] && invalidations.counts == ["rows A": 1], "rolled back")

    let deleting = list.delete(atOffsets: [0, 1], inSection: 0, using: delegate.delete)
    await delegate.arrived()
    #expect(Self.shownIDs(list) == [["c"]], "deleted at once")
    await delegate.release(allowing: false)
    await #expect(throws: TestSource.Error.self) { try await deleting.value }
    #expect(Self.shownIDs(list) == [["a", "b", "c"]], "the rows come back")
    #expect((await source.snapshot).sections == layout("A: a b c"), "the source never changed")
    list.stop()
  }

  @Test("a delete shows at once and the source's echo changes nothing")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func deleteReconciles() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c | B: d"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let delegate = HeldEdits(source)
    let deleting = list.delete(atOffsets: [1], inSection: 0, using: delegate.delete)
    await delegate.arrived()
    #expect(Self.shownIDs(list) == [["a", "c"], ["d"]])
    let echo = try await Self.echo(of: deleting, releasing: delegate, in: list)
    #expect(echo == [:], "nothing shown changes")
    list.stop()
  }

  @Test("offsets, destinations and sections out of range are refused with a typed error; nothing changes")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func refusesOutOfRange() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let list = await ObservedList(following: source, pacing: .immediate)
    await #expect(throws: TestSource.Error(code: .sectionIndexOutOfRange, sectionIndices: [3])) {
      try await list.move(fromOffsets: [0], toOffset: 1, inSection: 3, using: source).value
    }
    await #expect(
      throws: TestSource.Error(code: .itemIndexOutOfRange, positions: [ItemPosition(section: 0, item: 5)])
    ) {
      try await list.delete(atOffsets: [5], inSection: 0) { try await source.deleteItems($0) }.value
    }
    await #expect(
      throws: TestSource.Error(code: .itemIndexOutOfRange, positions: [ItemPosition(section: 0, item: 9)])
    ) {
      try await list.move(fromOffsets: [0], toOffset: 9, inSection: 0, using: source).value
    }
    #expect(Self.shownIDs(list) == [["a", "b"]])
    #expect(await source.version == 0)
    list.stop()
  }

  /// What another writer does while the user's edit is on its way.
  enum OtherWrite: String, CaseIterable, Sendable {
    case insertAbove, deleteAbove, moveDragged

    func apply(to source: BasicDataSource<TestSection>) async throws -> Version {
      switch self {
      case .insertAbove: try await source.insertItems([TestItem("x")], before: "a")
      case .deleteAbove: try await source.deleteItems(["c"])
      case .moveDragged: try await source.moveItem("d", after: "e")
      }
    }

    func apply(to ids: inout [String]) {
      switch self {
      case .insertAbove: ids.insert("x", at: 0)
      case .deleteAbove: ids.removeAll { $0 == "c" }
      case .moveDragged:
        ids.removeAll { $0 == "d" }
        ids.append("d")
      }
    }
  }

  @Test(
    "an edit made in the list acts on the row the user touched, whatever batch lands before or after its commit",
    arguments: [false, true], OtherWrite.allCases)
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func gestureResolvesAtOnce(deleting: Bool, other: OtherWrite) async throws {
    // After the user's delete, another writer's move of the deleted row is refused: nothing to check.
    for otherFirst in [true, false] where otherFirst || !(deleting && other == .moveDragged) {
      let source = try BasicDataSource(sections: layout("A: a b c d e"))
      let list = await ObservedList(following: source, pacing: .immediate)
      let delegate = HeldEdits(source)
      // The gesture, as SwiftUI calls it: offsets of what is shown, resolved and shown before returning.
      let commit =
        deleting
        ? list.delete(atOffsets: [3], inSection: 0, using: delegate.delete)
        : list.move(fromOffsets: [3], toOffset: 1, inSection: 0, using: delegate)
      #expect(Self.shownIDs(list) == [deleting ? ["a", "b", "c", "e"] : ["a", "d", "b", "c", "e"]])
      var expected = ["a", "b", "c", "d", "e"]
      func user(_ ids: inout [String]) {
        ids.removeAll { $0 == "d" }
        // The move lands between the rows the user dropped it between: after a, before b.
        if !deleting, let before = ids.firstIndex(of: "b") { ids.insert("d", at: before) }
      }
      await delegate.arrived()
      if otherFirst {
        #expect(try await list.reached(try await other.apply(to: source)))
        other.apply(to: &expected)
        await delegate.release(allowing: true)
        try await commit.value
        user(&expected)
      } else {
        await delegate.release(allowing: true)
        try await commit.value
        user(&expected)
        #expect(try await list.reached(try await other.apply(to: source)))
        other.apply(to: &expected)
      }
      let context = "\(deleting ? "delete" : "move") d, \(other) \(otherFirst ? "first" : "after")"
      #expect((await source.snapshot).sections[0].items.map(\.id) == expected, "\(context)")
      await Self.expectFollows(list, source)
      list.stop()
    }
  }
}
