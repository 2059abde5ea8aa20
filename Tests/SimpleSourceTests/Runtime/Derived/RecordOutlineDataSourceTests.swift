// RecordOutlineDataSource against its model (the records grouped by parent, sorted, and flattened with
// the expansion state), under random record edits from concurrent writers and expansions, with bad
// parent states and the conformance suite.

import SimpleSource
import SimpleSourceTesting
import Testing

/// A note that names its parent.
struct Note: OutlineRecord, CustomStringConvertible {
  var id: Int
  var parentID: Int?
  var siblingOrder: Int
  var title = ""

  var description: String { "\(id)<\(parentID.map(String.init) ?? "-")#\(siblingOrder)" }
}

typealias Notebook = Section<String, Note>

/// The model: each section's top-level notes by (order, id), each followed by its children when
/// expanded, recursively; `hasChildren` from the children found.
func flattenedNotes(_ sections: [Notebook], expanded: Set<Int>) -> [[RecordOutlineRow<Note>]] {
  sections.map { section in
    var children: [Int?: [Note]] = [:]
    for note in section.items { children[note.parentID, default: []].append(note) }
    func sorted(_ notes: [Note]) -> [Note] {
      notes.sorted { ($0.siblingOrder, $0.id) < ($1.siblingOrder, $1.id) }
    }
    func rows(_ note: Note, _ depth: Int) -> [RecordOutlineRow<Note>] {
      let isExpanded = expanded.contains(note.id)
      let below = children[note.id] ?? []
      let row = RecordOutlineRow(
        record: note, depth: depth, isExpanded: isExpanded, hasChildren: !below.isEmpty)
      return [row] + (isExpanded ? sorted(below).flatMap { rows($0, depth + 1) } : [])
    }
    return sorted(children[nil] ?? []).flatMap { rows($0, 0) }
  }
}

/// The ids of `id`'s subtree in `section`, `id` first.
func subtree(of id: Int, in section: Notebook) -> [Int] {
  var result = [id]
  var index = 0
  while index < result.count {
    result += section.items.filter { $0.parentID == result[index] }.map(\.id)
    index += 1
  }
  return result
}

/// A random edit of notebooks that keeps them trees, drawn before it meets the state it applies to (a
/// writer's edit may find a state other writers changed): insert a note, delete a subtree, move a note to
/// another parent (or to the top, or with its subtree to the other section), retitle one, reorder one
/// among its siblings, or move one in the flat list alone.
struct RandomNoteEdit: Sendable {
  let kind: Int
  let picks: [Int]
  let fresh: Int

  init(using random: inout SeededGenerator, fresh: Int) {
    kind = Int.random(in: 0..<7, using: &random)
    picks = (0..<4).map { _ in Int.random(in: 0..<1_000, using: &random) }
    self.fresh = fresh
  }

  func apply(to sections: inout [Notebook]) {
    let sectionIndex = picks[0] % sections.count
    var section = sections[sectionIndex]
    defer { sections[sectionIndex] = section }
    let notes = section.items
    guard !notes.isEmpty, kind != 0 else {
      let parent = notes.isEmpty || picks[1] % 4 == 0 ? nil : notes[picks[1] % notes.count].id
      let note = Note(id: fresh, parentID: parent, siblingOrder: picks[2] % 8, title: "new")
      section.items.insert(note, at: picks[3] % (notes.count + 1))
      return
    }
    let index = picks[1] % notes.count
    let id = notes[index].id
    switch kind {
    case 1:
      let gone = Set(subtree(of: id, in: section))
      section.items.removeAll { gone.contains($0.id) }
    case 2:
      let below = Set(subtree(of: id, in: section))
      let targets = notes.map(\.id).filter { !below.contains($0) }
      section.items[index].parentID =
        picks[2] % 5 == 0 || targets.isEmpty ? nil : targets[picks[2] % targets.count]
      section.items[index].siblingOrder = picks[3] % 8
    case 3:
      // The subtree to the other section, its top at the top there.
      let other = (sectionIndex + 1) % sections.count
      guard other != sectionIndex else { return }
      let moving = Set(subtree(of: id, in: section))
      var moved = section.items.filter { moving.contains($0.id) }
      section.items.removeAll { moving.contains($0.id) }
      if let top = moved.firstIndex(where: { $0.id == id }) { moved[top].parentID = nil }
      sections[other].items.append(contentsOf: moved)
    case 4: section.items[index].title += "!"
    case 5: section.items[index].siblingOrder = picks[2] % 8
    default:
      let note = section.items.remove(at: index)
      section.items.insert(note, at: picks[2] % (section.items.count + 1))
    }
  }
}

@Suite("RecordOutlineDataSource", .timeLimit(.minutes(30)))
struct RecordOutlineDataSourceTests {
  static let settings = ProjectedDataSourceTests.settings

  /// Two notebooks: a(a1, a2(a21)), b in the first, c(c1) in the second, as ids 1..., with orders that
  /// differ from the flat order.
  static func notebooks() -> [Notebook] {
    [
      Notebook(
        id: "N",
        items: [
          Note(id: 22, parentID: 2, siblingOrder: 0, title: "a21"),
          Note(id: 2, parentID: 1, siblingOrder: 5, title: "a2"),
          Note(id: 3, parentID: nil, siblingOrder: 1, title: "b"),
          Note(id: 1, parentID: nil, siblingOrder: 0, title: "a"),
          Note(id: 11, parentID: 1, siblingOrder: 2, title: "a1"),
        ]),
      Notebook(
        id: "M",
        items: [
          Note(id: 4, parentID: nil, siblingOrder: 0, title: "c"),
          Note(id: 41, parentID: 4, siblingOrder: 0, title: "c1"),
        ]),
    ]
  }

  static func rows(_ snapshot: Snapshot<RecordOutlineSection<Notebook>>) -> [[String]] {
    snapshot.sections.map { $0.items.map { "\($0.depth):\($0.id)" } }
  }

  @Test("after every step two outlines of one parent show its records flattened with their own expansion")
  func model() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 71))
    var batches = 0
    var fresh = 100
    for run in 0..<settings.cases {
      let parent = try BasicDataSource(sections: Self.notebooks())
      let outlines = [
        try await RecordOutlineDataSource(parent, expanded: [1]), try await RecordOutlineDataSource(parent),
      ]
      let recorders = [
        await BatchRecorder(await outlines[0].subscribe(), refreshStyle: .reconfigure),
        await BatchRecorder(await outlines[1].subscribe()),
      ]
      var expanded: [Set<Int>] = [[1], []]
      for step in 0..<14 {
        let place = "run \(run) step \(step); \(settings.replay)"
        if Int.random(in: 0..<3, using: &random) > 0 {
          let edit = RandomNoteEdit(using: &random, fresh: fresh)
          fresh += 1
          _ = try await parent.update { edit.apply(to: &$0) }
        } else {
          let which = Int.random(in: 0..<2, using: &random)
          let all = await parent.snapshot.sections.flatMap { $0.items.map(\.id) }
          if let id = all.randomElement(using: &random) {
            if expanded[which].contains(id) {
              await outlines[which].collapse([id])
              expanded[which].remove(id)
            } else {
              try await outlines[which].expand([id])
              expanded[which].insert(id)
            }
          }
        }
        let sections = await parent.snapshot.sections
        // A record that left the parent is no longer expanded.
        let present = Set(sections.flatMap { $0.items.map(\.id) })
        for which in 0..<2 { expanded[which].formIntersection(present) }
        for which in 0..<2 {
          await outlines[which].settled()
          #expect(await outlines[which].expanded == expanded[which], "\(place)")
          let shown = await outlines[which].snapshot
          #expect(
            shown.sections.map(\.items) == flattenedNotes(sections, expanded: expanded[which]), "\(place)")
          #expect(
            shown.sections.map(\.id) == sections.map(\.id) && shown.sections.allSatisfy(\.base.items.isEmpty))
        }
      }
      for (outline, recorder) in zip(outlines, recorders) {
        await recorder.showing(await outline.snapshot)
        let violations = await recorder.violations
        #expect(violations.isEmpty, "\(violations), run \(run); \(settings.replay)")
        batches += await recorder.batches.count
        await recorder.cancel()
      }
    }
    print(
      "RecordOutlineDataSource model: \(settings.cases) runs, \(batches) batches checked; \(settings.replay)")
  }

  @Test(
    "three writers and an expanding task at once: after one settle the outline shows the parent's records")
  func concurrentWriters() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 72))
    var batches = 0
    for run in 0..<max(4, settings.cases / 4) {
      let parent = try BasicDataSource(sections: Self.notebooks())
      let outline = try await RecordOutlineDataSource(parent, expanded: [1, 2])
      let recorder = await BatchRecorder(await outline.subscribe())
      let seeds = (0..<4).map { _ in random.next() }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<3 {
          group.addTask {
            var random = SeededGenerator(seed: seeds[writer])
            for step in 0..<40 {
              let edit = RandomNoteEdit(using: &random, fresh: 1_000 * (writer + 1) + step)
              _ = try await parent.update { edit.apply(to: &$0) }
            }
          }
        }
        group.addTask {
          var random = SeededGenerator(seed: seeds[3])
          for _ in 0..<40 {
            let all = await parent.snapshot.sections.flatMap { $0.items.map(\.id) }
            guard let id = all.randomElement(using: &random) else { continue }
            if Bool.random(using: &random) {
              // The record may be deleted meanwhile: then expanding it is refused, typed.
              do throws(OutlineError) { try await outline.expand([id]) } catch {
                #expect(error.code == .unknownItem)
              }
            } else {
              await outline.collapse([id])
            }
          }
        }
        try await group.waitForAll()
      }
      await outline.settled()
      let sections = await parent.snapshot.sections
      let expanded = await outline.expanded
      let present = Set(sections.flatMap { $0.items.map(\.id) })
      let place = "run \(run); \(settings.replay)"
      #expect(expanded.isSubset(of: present), "\(place)")
      #expect(
        (await outline.snapshot).sections.map(\.items) == flattenedNotes(sections, expanded: expanded),
        "\(place)")
      await recorder.showing(await outline.snapshot)
      let violations = await recorder.violations
      #expect(violations.isEmpty, "\(violations), \(place)")
      batches += await recorder.batches.count
      await recorder.cancel()
    }
    print("RecordOutlineDataSource writers: \(batches) batches checked; \(settings.replay)")
  }

  @Test(
    "moving a record moves its rows and subtree; its old and new parents' rows show whether they have children"
  )
  func subtreeMoves() async throws {
    let parent = try BasicDataSource(sections: Self.notebooks())
    let outline = try await RecordOutlineDataSource(parent, expanded: [1, 2, 3])
    #expect(Self.rows(await outline.snapshot) == [["0:1", "1:11", "1:2", "2:22", "0:3"], ["0:4"]])
    #expect(await outline.snapshot.sections[0].items.map(\.hasChildren) == [true, false, true, false, false])
    let recorder = await BatchRecorder(await outline.subscribe())
    // a2 (with a21) under b: a2's row and a21's leave a, arrive under b; b gains a disclosure indicator.
    var a2 = try #require(await parent.snapshot.item(withID: 2))
    a2.parentID = 3
    try await parent.replaceItem(a2)
    await outline.settled()
    #expect(Self.rows(await outline.snapshot) == [["0:1", "1:11", "0:3", "1:2", "2:22"], ["0:4"]])
    #expect(await outline.snapshot.sections[0].items.map(\.hasChildren) == [true, false, true, true, false])
    // a1 after b's children by order: no row moves but a1's.
    var a1 = try #require(await parent.snapshot.item(withID: 11))
    a1.parentID = nil
    a1.siblingOrder = 9
    try await parent.replaceItem(a1)
    await outline.settled()
    #expect(Self.rows(await outline.snapshot) == [["0:1", "0:3", "1:2", "2:22", "0:11"], ["0:4"]])
    #expect(await outline.snapshot.sections[0].items.first?.hasChildren == false, "a lost its last child")
    // The whole subtree of b deleted in one batch.
    try await parent.deleteItems([3, 2, 22])
    await outline.settled()
    #expect(Self.rows(await outline.snapshot) == [["0:1", "0:11"], ["0:4"]])
    #expect(await outline.expanded == [1])
    await recorder.showing(await outline.snapshot)
    #expect(await recorder.violations.isEmpty)
    let last = try #require(await recorder.batches.last)
    #expect(Set(last.changeset.itemChanges.deletes.map(\.id)) == [3, 2, 22])
  }

  @Test("a deleted record leaves the expanded set, collapsing it is no error, and it comes back collapsed")
  func expansionFollowsDeletions() async throws {
    let parent = try BasicDataSource(sections: Self.notebooks())
    let outline = try await RecordOutlineDataSource(parent, expanded: [1, 2, 999])
    #expect(await outline.expanded == [1, 2], "an id that is not a record is not kept")
    let gone = await parent.snapshot.sections[0].items.filter { [1, 2, 11, 22].contains($0.id) }
    try await parent.deleteItems([1, 2, 11, 22])
    await outline.settled()
    #expect(await outline.expanded == [])
    await outline.collapse([1])
    await #expect(throws: OutlineError(.unknownItem, id: "1")) { try await outline.expand([1]) }
    try await parent.appendItems(gone, toSection: "N")
    await outline.settled()
    #expect(Self.rows(await outline.snapshot)[0] == ["0:1", "0:3"], "back, collapsed")
    // Moved to another parent, a record stays expanded.
    try await outline.expand([1])
    var a = try #require(await parent.snapshot.item(withID: 1))
    a.parentID = 3
    try await parent.replaceItem(a)
    try await outline.expand([3])
    await outline.settled()
    #expect(await outline.expanded == [1, 3])
    #expect(Self.rows(await outline.snapshot)[0] == ["0:3", "1:1", "2:11", "2:2"])
  }

  @Test("a missing parent, a parent in another section and a cycle are typed errors; nothing shown changes")
  func badParents() async throws {
    let parent = try BasicDataSource(sections: Self.notebooks())
    let outline = try await RecordOutlineDataSource(parent, expanded: [1])
    let before = await outline.snapshot
    var errors = outline.errors.makeAsyncIterator()

    try await parent.appendItems([Note(id: 50, parentID: 77, siblingOrder: 0)], toSection: "N")
    await outline.settled()
    #expect(await errors.next() == OutlineError(.unknownParent, id: "50", path: ["77"]))
    try await parent.deleteItems([50])
    await outline.settled()
    #expect(Self.rows(await outline.snapshot) == Self.rows(before))

    try await parent.deleteItems([2])  // a21 is left without its parent
    await outline.settled()
    #expect(await errors.next() == OutlineError(.unknownParent, id: "22", path: ["2"]))
    #expect(Self.rows(await outline.snapshot) == Self.rows(before))
    try await parent.deleteItems([22])  // a tree again: shown, built anew
    await outline.settled()
    #expect(Self.rows(await outline.snapshot) == [["0:1", "1:11", "0:3"], ["0:4"]])

    try await parent.update { $0[1].items.append(Note(id: 60, parentID: 1, siblingOrder: 0)) }
    await outline.settled()
    #expect(await errors.next() == OutlineError(.unknownParent, id: "60", path: ["1"]))
    try await parent.deleteItems([60])
    await outline.settled()  // a tree again, so that the cycle below is found by the batch's own check

    var a = try #require(await parent.snapshot.item(withID: 1))
    a.parentID = 11  // below its own child
    try await parent.replaceItem(a)
    await outline.settled()
    let cycle = await errors.next()
    #expect(cycle == OutlineError(.cycle, id: "1", path: ["1", "11"]))
    #expect(Self.rows(await outline.snapshot) == [["0:1", "1:11", "0:3"], ["0:4"]])

    let looped = try BasicDataSource(sections: [
      Notebook(
        id: "L",
        items: [Note(id: 1, parentID: 2, siblingOrder: 0), Note(id: 2, parentID: 1, siblingOrder: 0)])
    ])
    await #expect(throws: OutlineError.self) { _ = try await RecordOutlineDataSource(looped) }
    do {
      _ = try await RecordOutlineDataSource(looped)
    } catch {
      #expect(
        error.code == .cycle && Set(error.path) == ["1", "2"] && error.path.first == error.id, "\(error)")
    }
  }

  @Test("keeps the contract (conformance suite), with expansions among the mutations")
  func conformance() async {
    var conformance = DataSourceConformance(
      makeSource: {
        let outline = try await RecordOutlineDataSource(
          try BasicDataSource(sections: Self.notebooks()), expanded: [1, 4])
        return (source: outline, driver: outline)
      },
      subscriberCount: { $0.subscriberCount },
      // Its own state: the parent's records flattened by plain code, with its expanded records (G10).
      expecting: { outline, _ in
        guard let parent = outline.parent as? BasicDataSource<Notebook> else { return Snapshot() }
        let notebooks = await parent.snapshot.sections
        let rows = flattenedNotes(notebooks, expanded: await outline.expanded)
        let sections = zip(notebooks, rows).map {
          var base = $0
          base.items = []
          return RecordOutlineSection(base: base, items: $1)
        }
        return (try? Snapshot(sections)) ?? Snapshot()
      }
    ) { outline, random in
      if Int.random(in: 0..<4, using: &random) == 0 {
        let all = await outline.snapshot.sections.flatMap { $0.items.map(\.id) }
        if let id = all.randomElement(using: &random) { try await outline.expand([id]) }
      } else {
        let parent = try #require(outline.parent as? BasicDataSource<Notebook>)
        let edit = RandomNoteEdit(using: &random, fresh: Int(truncatingIfNeeded: random.next() >> 1))
        try await parent.update { edit.apply(to: &$0) }
      }
    }
    conformance.runs = ConformanceTests.settings.cases
    let report = await conformance.run(seed: ConformanceTests.settings.seed(forShard: 7))
    print("Conformance, RecordOutlineDataSource: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }

  @Test("a parent's refreshItems refreshes the record's row")
  func parentRefreshes() async throws {
    let parent = try BasicDataSource(sections: Self.notebooks())
    let outline = try await RecordOutlineDataSource(parent)
    var batches = await outline.subscribe().batches.makeAsyncIterator()
    _ = try await parent.refreshItems([1])
    await outline.settled()
    try await parent.deleteItems([3])
    await outline.settled()
    let batch = try #require(await batches.next())
    #expect(batch.changeset.itemChanges.updates.map(\.id) == [1])
    #expect(batch.changeset.forcedRefreshes == [1])
  }
}
