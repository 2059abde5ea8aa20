// Interactive reordering: moves recorded by ids, echo suppression in the moving view, no lost writes.

import SimpleSource
import SimpleSourceTesting
import Testing

private typealias Move = InteractiveMove<TestSection>

/// A delegate that rejects every move, as a server might.
private struct RejectingDelegate: ReorderingDelegate {
  struct Rejected: Error {}
  func reorder(_ move: InteractiveMove<TestSection>) async throws -> Version { throw Rejected() }
}

@Suite("InteractiveMove")
struct InteractiveMoveTests {
  @Test("a move records the item, its destination section and its neighbours there")
  func recordsNeighbours() throws {
    let move = try Move(
      in: layout("A: a b c d | B: e f"), from: ItemPosition(section: 0, item: 0),
      to: ItemPosition(section: 0, item: 2))
    #expect(move.itemID == "a" && move.destinationSectionID == "A")
    #expect(move.predecessor == "c" && move.successor == "d")
    let across = try Move(
      in: layout("A: a b | B: e f"), from: ItemPosition(section: 0, item: 1),
      to: ItemPosition(section: 1, item: 0))
    #expect(across.predecessor == nil && across.successor == "e" && across.destinationSectionID == "B")
  }

  @Test(
    "it lands after its predecessor, else before its successor, else at its index, whatever changed since")
  func resolvesAgainstChangedData() throws {
    let shown = layout("A: a b c d | B: e f")
    let move = try Move(
      in: shown, from: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 2))
    var same = shown
    try move.apply(to: &same)
    #expect(same == layout("A: b c a d | B: e f"))
    var inserted = layout("X: | A: n b c d | B: e f | C: a")
    try move.apply(to: &inserted)
    #expect(inserted == layout("X: | A: n b c a d | B: e f | C:"), "after its predecessor, found by id")
    var predecessorGone = layout("A: a b d | B: e f")
    try move.apply(to: &predecessorGone)
    #expect(predecessorGone == layout("A: b a d | B: e f"), "before its successor")
    var bothGone = layout("A: a b | B: e f")
    try move.apply(to: &bothGone)
    #expect(bothGone == layout("A: b a | B: e f"), "at its index, clamped")
  }

  @Test("resolving against a snapshot's lookups agrees with resolving by a scan")
  func snapshotResolutionAgrees() throws {
    let move = try Move(
      in: layout("A: a b c d | B: e f"), from: ItemPosition(section: 0, item: 0),
      to: ItemPosition(section: 0, item: 2))
    let across = try Move(
      in: layout("A: a b | B: e f"), from: ItemPosition(section: 0, item: 1),
      to: ItemPosition(section: 1, item: 0))
    let states = [
      "A: a b c d | B: e f", "X: | A: n b c d | B: e f | C: a", "A: a b d | B: e f", "A: a b | B: e f",
      "B: f b | A: a", "A: b | B: e", "A: a b",
    ]
    for move in [move, across] {
      for text in states {
        let scanned = Result { () throws(DataSourceError<String, String>) in
          try move.resolve(in: layout(text))
        }
        let looked = Result { () throws(DataSourceError<String, String>) in
          try move.resolve(in: snapshot(text))
        }
        switch (scanned, looked) {
        case (.success(let a), .success(let b)):
          #expect(a.source == b.source && a.destination == b.destination, "\(move.itemID) in \(text)")
        case (.failure(let a), .failure(let b)):
          #expect(a == b, "\(move.itemID) in \(text)")
        default:
          Issue.record("\(move.itemID) in \(text): \(scanned) against \(looked)")
        }
      }
    }
  }

  @Test("bad moves throw typed errors naming what is wrong, and change nothing")
  func badMoves() throws {
    let shown = layout("A: a b | B: e")
    #expect(throws: DataSourceError<String, String>.self) {
      try Move(in: shown, from: ItemPosition(section: 3, item: 0), to: ItemPosition(section: 0, item: 0))
    }
    do {
      _ = try Move(in: shown, from: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 1, item: 5))
      Issue.record("an out-of-range destination was accepted")
    } catch {
      #expect(error.code == .itemIndexOutOfRange && error.positions == [ItemPosition(section: 1, item: 5)])
    }
    let move = try Move(
      in: shown, from: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 1, item: 1))
    var itemGone = layout("A: b | B: e")
    #expect(throws: DataSourceError<String, String>(code: .unknownItemID, itemID: "a")) {
      try move.apply(to: &itemGone)
    }
    #expect(itemGone == layout("A: b | B: e"))
    var sectionGone = layout("A: a b")
    #expect(throws: DataSourceError<String, String>(code: .unknownSectionID, sectionID: "B")) {
      try move.apply(to: &sectionGone)
    }
    #expect(sectionGone == layout("A: a b"))
  }
}

@Suite("Reordering", .timeLimit(.minutes(30)))
@MainActor
struct ReorderingTests {
  /// Two views on one source; the first can reorder.
  func twoViews(_ text: String) async throws -> (TestSource, (Host, HostDataSource), (Host, HostDataSource)) {
    let source = try TestSource(sections: layout(text))
    let mover = makeView(.animated(refreshing: .reconfigure))
    let watcher = makeView(.animated(refreshing: .reload))
    mover.1.reorderingDelegate = source
    await mover.1.follow(source)
    await watcher.1.follow(source)
    return (source, mover, watcher)
  }

  func settle(_ source: TestSource, _ views: (Host, HostDataSource)...) async -> Snapshot<TestSection> {
    for (_, dataSource) in views { await dataSource.settled() }
    await source.settled()
    let final = await source.snapshot
    for (host, dataSource) in views {
      await dataSource.showing(final)
      expectShowing(final, host, dataSource)
    }
    return final
  }

  @Test("reordering is enabled by setting a delegate, and canMoveItem can veto items")
  func enabling() async throws {
    let (_, dataSource) = makeView()
    let source = try TestSource(sections: layout("A: a b"))
    await dataSource.follow(source)
    #expect(!dataSource.canMoveItem(at: ItemPosition(section: 0, item: 0)))
    dataSource.reorderingDelegate = source
    dataSource.canMoveItem = { item, _ in item.id != "b" }
    #expect(dataSource.canMoveItem(at: ItemPosition(section: 0, item: 0)))
    #expect(!dataSource.canMoveItem(at: ItemPosition(section: 0, item: 1)))
  }

  @Test("the view that moved an item is not moved again by the echo; other views get the move")
  func echoSuppression() async throws {
    let (source, mover, watcher) = try await twoViews("A: a b c d | B: e f")
    let dragged = mover.0.reference.cell(at: ItemPosition(section: 0, item: 0)).serial
    mover.0.beginInteractiveMove()
    mover.0.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 1, item: 1))
    let final = await settle(source, mover, watcher)
    #expect(final.sections == layout("A: b c d | B: e a f"))
    #expect(mover.0.batches.allSatisfy { $0.moveItems.isEmpty }, "no echo of the user's move")
    #expect(mover.0.batches.isEmpty, "nothing else changed, so nothing to perform")
    #expect(
      mover.0.reference.cell(at: ItemPosition(section: 1, item: 1)).serial == dragged,
      "the dragged cell stays")
    #expect(watcher.0.batches.contains { $0.moveItems.count == 1 })
  }

  @Test("writes from other tasks during a drag are held, not lost, and arrive after the drop, consistent")
  func writesDuringDrag() async throws {
    let (source, mover, watcher) = try await twoViews("A: a b c d | B: e f")
    mover.0.beginInteractiveMove()
    // While the user drags "a" to between "c" and "d", other tasks write, deleting "c" among others.
    let writer = Task {
      try await source.appendItems([item("g")], toSection: "B")
      try await source.deleteItems(["c"])
      try await source.replaceItem(item("b", 1))
      try await source.insertSections([TestSection(id: "C", header: "C v0", items: [item("h")])], after: "B")
      try await source.moveItem("e", after: "f")
    }
    try await writer.value
    await source.settled()
    let batchesBeforeDrop = mover.0.batchCount
    await watcher.1.showing(await source.snapshot)
    mover.0.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 2))
    let final = await settle(source, mover, watcher)
    #expect(batchesBeforeDrop == 0, "nothing is performed under the user's finger")
    #expect(final.sections == layout("A: b' a d | B: f e g | C: h"), "every write kept; a lands before d")
    #expect(
      mover.0.batches.allSatisfy { $0.moveItems.allSatisfy { $0.from != ItemPosition(section: 0, item: 0) } })
  }

  @Test(
    "a view of one's own reports a drag through the public calls; calls out of order are errors, not traps")
  func dragsThroughPublicCalls() async throws {
    let (host, dataSource) = makeView()
    let source = try TestSource(sections: layout("A: a b c"))
    await dataSource.follow(source)
    // No reordering delegate: nothing can move, and a drop of it is reported by the host.
    #expect(!dataSource.canMoveItem(at: ItemPosition(section: 0, item: 0)))
    host.beginInteractiveMove()
    host.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 2))
    #expect(host.errors.count == 1 && dataSource.sections == layout("A: a b c"), "\(host.errors)")
    // A drop with no drag begun, and an end with no hold: reported by the host, ignored by the data source.
    dataSource.reorderingDelegate = RejectingDelegate()
    host.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 2))
    dataSource.endInteractiveMove()
    #expect(host.errors.count == 2 && dataSource.sections == layout("A: a b c"), "\(host.errors)")
    // What a ListView of one's own does on a drop: begin, move, end. Batches still flow after it.
    dataSource.reorderingDelegate = source
    dataSource.beginInteractiveMove()
    dataSource.moveItem(at: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 2))
    dataSource.endInteractiveMove()
    await dataSource.settled()  // the move landed in the source
    try await source.appendItems([item("d")], toSection: "A")
    await source.settled()
    let final = await source.snapshot
    await dataSource.showing(final)
    #expect(final.sections == layout("A: b c a d"))
    #expect(dataSource.sections == final.sections)
  }

  @Test("a move the delegate rejects is undone in the view, and reported")
  func rejectedMove() async throws {
    let (host, dataSource) = makeView()
    let source = try TestSource(sections: layout("A: a b c"))
    dataSource.reorderingDelegate = RejectingDelegate()
    await dataSource.follow(source)
    var failures: [String] = []
    dataSource.reorderingFailed = { move, error in failures.append("\(move.itemID): \(type(of: error))") }
    host.beginInteractiveMove()
    host.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 2), to: ItemPosition(section: 0, item: 0))
    #expect(dataSource.sections == layout("A: c a b"), "shown at once")
    let original = await source.snapshot
    await dataSource.showing(original)
    expectShowing(original, host, dataSource)
    #expect(failures == ["c: Rejected"])
  }

  @Test("following another source while batches are held and a move is on its way shows only the new source")
  func followAnotherSourceMidDrag() async throws {
    let (old, mover, _) = try await twoViews("A: a b c d | B: e f")
    mover.0.beginInteractiveMove()
    mover.0.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 3))
    mover.0.beginInteractiveMove()
    // A batch of the old source waits behind the hold (or in its stream) when the view switches sources.
    try await old.appendItems([item("g")], toSection: "B")
    await old.settled()
    let new = try TestSource(sections: layout("X: x y | Y: z"))
    await mover.1.follow(new)
    mover.1.endInteractiveMove()
    try await new.moveItem("z", before: "x")
    await mover.1.settled()
    await new.settled()
    let final = await new.snapshot
    await mover.1.showing(final)
    expectShowing(final, mover.0, mover.1)
    #expect(mover.1.version == new.counter.version(1))
  }

  @Test("many drags while other tasks write: every view ends showing the source, every batch valid")
  func dragsWhileWriting() async throws {
    let settings = RandomTestSettings.current(defaultCases: 20, casesVariable: "SIMPLESOURCE_DRAG_CASES")
    print("Reordering drags: \(settings.replay)")
    var random = SeededGenerator(seed: settings.seed)
    let (source, mover, watcher) = try await twoViews("A: a b c d e | B: f g h | C: i")
    let writers = Task {
      await withTaskGroup(of: Void.self) { group in
        for writer in 0..<2 {
          group.addTask {
            for index in 0..<60 {
              let id = "w\(writer)-\(index)"
              _ = try? await source.appendItems([item(id)], toSection: ["A", "B", "C"][index % 3])
              if index % 3 == 0 { _ = try? await source.moveItem(id, before: "a") }
              if index % 4 == 1 { _ = try? await source.deleteItems(["w\(writer)-\(index - 1)"]) }
              if index % 5 == 2 { _ = try? await source.replaceItem(item("f", index)) }
              // Items the user drags move on the source too: a stale replay of a drag would undo these.
              if index % 7 == 3 {
                _ = try? await source.moveItem(["a", "b", "g", "i"][index % 4], toSection: "C")
              }
              if index % 7 == 5 {
                _ = try? await source.moveItem(["c", "h"][index % 2], before: "w0-\(index - 5)")
              }
            }
          }
        }
      }
    }
    for _ in 0..<settings.cases {
      let shown = mover.1.sections
      let nonEmpty = shown.indices.filter { !shown[$0].items.isEmpty }
      guard let from = nonEmpty.randomElement(using: &random) else { continue }
      let start = ItemPosition(
        section: from, item: Int.random(in: 0..<shown[from].items.count, using: &random))
      let toSection = Int.random(in: 0..<shown.count, using: &random)
      let room = shown[toSection].items.count - (toSection == from ? 1 : 0)
      let destination = ItemPosition(section: toSection, item: Int.random(in: 0...room, using: &random))
      mover.0.beginInteractiveMove()
      await source.settled()  // Writers go on while the user drags.
      mover.0.endInteractiveMove(movingItemAt: start, to: destination)
      if Bool.random(using: &random) { await source.settled() }
    }
    await writers.value
    let final = await settle(source, mover, watcher)
    #expect(!final.sections.isEmpty, "\(settings.replay)")
  }
}

/// A delegate whose moves stay on their way until the gate opens, then are rejected.
private struct GatedDelegate: ReorderingDelegate {
  struct Rejected: Error {}
  let gate: AsyncStream<Void>
  func reorder(_ move: InteractiveMove<Section<Int, ProbeItem>>) async throws -> Version {
    for await _ in gate { break }
    throw Rejected()
  }
}

@Suite("G9 for views", .timeLimit(.minutes(30)))
@MainActor
struct ViewOffMainActorTests {
  @Test("rebasing a batch onto a user's move diffs off the main actor")
  func rebaseOffMain() async throws {
    let probe = ThreadProbe()
    let items = (0..<50).map { ProbeItem(id: $0, version: 0, probe: probe) }
    let source = try BasicDataSource(sections: [Section(id: 0, items: items)])
    let view = SilentListView()
    let factory = ViewFactory<Section<Int, ProbeItem>, SilentListView> { _, _ in "Cell" }
    let (applied, reportApplied) = AsyncStream.makeStream(of: Int.self)
    let dataSource = ListViewDataSource(
      view: view, factory: factory,
      update: .custom { context in
        context.performStages()
        reportApplied.yield(context.batch.to.number)
      })
    let (gate, openGate) = AsyncStream.makeStream(of: Void.self)
    dataSource.reorderingDelegate = GatedDelegate(gate: gate)
    await dataSource.follow(source)
    dataSource.moveItem(at: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 1))
    try await source.replaceItem(ProbeItem(id: 10, version: 1, probe: probe))
    var heldVersions = applied.makeAsyncIterator()
    #expect(await heldVersions.next() == 1)
    #expect(
      dataSource.sections[0].items.prefix(2).map(\.id) == [1, 0], "the user's move stays while on its way")
    #expect(probe.offMain > 0)
    #expect(probe.onMain == 0, "a diff ran on the main actor")
    openGate.yield()
    openGate.finish()
  }
}
