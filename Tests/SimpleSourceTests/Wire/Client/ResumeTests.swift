// Resuming from a version (G11): the history's state machine, and sources that resume or reset.

import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Retained history")
struct RetainedHistoryTests {
  typealias History = RetainedHistory<TestSection>

  /// A batch from `from` to `to` that changes item `id` of a one-section list of `count` items.
  static func batch(_ from: Int, _ to: Int, old: Snapshot<TestSection>, edit id: String) -> UpdateBatch<
    TestSection
  > {
    var sections = old.sections
    if let index = sections[0].items.firstIndex(where: { $0.id == id }) {
      sections[0].items[index].version += 1
    } else {
      sections[0].items.append(TestItem(id))
    }
    let new = Snapshot(trusted: sections)
    return UpdateBatch(from: from, to: to, changeset: Changeset(from: old, to: new))
  }

  static func run(_ limit: HistoryLimit, batches count: Int, items: Int = 300) -> (
    History, [Snapshot<TestSection>]
  ) {
    var snapshot = Snapshot(trusted: [TestSection(id: "S", items: (0..<items).map { TestItem("i\($0)") })])
    var history = History(version: 0, snapshot: snapshot, limit: limit)
    var snapshots = [snapshot]
    for version in stride(from: 1, through: count, by: 1) {
      let batch = batch(version - 1, version, old: snapshot, edit: "i\(version % items)")
      history.record(batch, edits: batch.edits)
      snapshot = batch.snapshot
      snapshots.append(snapshot)
    }
    return (history, snapshots)
  }

  @Test("every retained version resumes with its own snapshot and the ids changed since; others do not")
  func startsFromRetained() {
    let (history, snapshots) = Self.run(HistoryLimit(versions: 5), batches: 12)
    #expect(history.versions == [8, 9, 10, 11, 12])
    for version in 0...13 {
      let start = history.start(from: version)
      if (8...12).contains(version) {
        #expect(start?.snapshot == snapshots[version])
        #expect(start?.touched == Set((version + 1..<13).map { "i\($0)" }), "from \(version)")
      } else {
        #expect(start == nil, "from \(version)")
      }
    }
  }

  @Test("the versions bound holds however many batches are recorded, and the dead prefix is compacted")
  func boundedByVersions() {
    let (history, _) = Self.run(HistoryLimit(versions: 3), batches: 1000)
    #expect(history.versions == [998, 999, 1000])
    #expect(history.entries.count <= 3 * 2 + 66)
  }

  @Test("a forgotten version's snapshot is released at once, not when the dead entries are compacted")
  func forgottenReleased() {
    var snapshot = Snapshot(trusted: [TestSection(id: "S", items: (0..<30).map { TestItem("i\($0)") })])
    var history = History(version: 0, snapshot: snapshot, limit: HistoryLimit(versions: 3))
    weak let first = snapshot.storage
    var recorded: [(version: Int, storage: () -> SnapshotStorage<TestSection>?)] = []
    for version in 1...40 {
      let batch = Self.batch(version - 1, version, old: snapshot, edit: "i\(version % 30)")
      history.record(batch, edits: batch.edits)
      snapshot = batch.snapshot
      weak let storage = snapshot.storage
      recorded.append((version, { storage }))
    }
    // 40 entries are far below the compaction threshold: only forgetting can have released them.
    #expect(history.entries.count == 41)
    #expect(history.versions == [38, 39, 40])
    #expect(first == nil)
    // Versions between the base and the newest are kept as edits: their snapshots go with the next batch.
    // The base (38) was rebuilt from the forgotten base when 37 was forgotten: a snapshot of its own.
    for (version, storage) in recorded {
      #expect((storage() != nil) == (version == 40), "version \(version)")
    }
    #expect(
      history.entries[history.start].snapshot?.sections
        == Self.run(.default, batches: 38, items: 30).1[38].sections)
  }

  @Test("the bytes bound forgets old versions; the newest is always kept")
  func boundedByBytes() {
    let items = 300
    let base = History.snapshotBytes(Self.run(.default, batches: 0, items: items).1[0])
    // A one-item batch: its entry, one id changed, one edit.
    let perVersion = History.entryOverhead + History.idBytes + History.editBytes
    let (history, _) = Self.run(HistoryLimit(versions: 100, bytes: base + 5 * perVersion), batches: 20)
    #expect(history.versions == [16, 17, 18, 19, 20])
    #expect(history.bytes <= base + 5 * perVersion)
    let (newest, _) = Self.run(.newest, batches: 20)
    #expect(newest.versions == [20])
    let (none, _) = Self.run(HistoryLimit(versions: 100, bytes: 0), batches: 20)
    #expect(none.versions == [20])
  }

  @Test("a checkpoint every list's worth of edits: a rebuild applies at most that many")
  func checkpoints() {
    // 300 items: a checkpoint once 300 edits were recorded since the last.
    let (history, snapshots) = Self.run(.default, batches: 1_000)
    #expect(history.versions == Array(0...1_000))
    let kept = history.entries.filter { $0.snapshot != nil }.map(\.version)
    #expect(kept == [0, 300, 600, 900, 1_000])
    for version in [0, 1, 299, 300, 301, 599, 899, 999, 1_000] {
      let rebuild = history.rebuild(to: version)
      #expect(rebuild?.steps.count == version - (version / 300) * 300 || version == 1_000)
      #expect(rebuild?.state()?.sections == snapshots[version].sections, "version \(version)")
    }
  }

  @Test("a version reached without a batch is kept: it resumes with the state before it, and edits follow it")
  func unchangedVersions() {
    let old = Snapshot(trusted: [TestSection(id: "S", items: (0..<300).map { TestItem("i\($0)") })])
    var history = History(version: 0, snapshot: old, limit: .default)
    let first = Self.batch(0, 1, old: old, edit: "i1")
    history.record(first, edits: first.edits)
    history.recordUnchanged(at: 3)
    history.recordUnchanged(at: 2)  // not after the newest: nothing
    history.recordUnchanged(at: 4)
    // The next batch starts from a version reached since, or from the last batch's end: edits either way.
    let next = Self.batch(4, 6, old: first.snapshot, edit: "i2")
    history.record(next, edits: next.edits)
    history.recordUnchanged(at: 7)
    let last = Self.batch(6, 8, old: next.snapshot, edit: "i3")
    history.record(last, edits: last.edits)
    #expect(history.versions == [0, 1, 3, 4, 6, 7, 8])
    #expect(history.entries.map(\.isCheckpoint) == [true, false, false, false, false, false, false])
    for (version, expected) in [
      (1, first.snapshot), (3, first.snapshot), (4, first.snapshot), (6, next.snapshot), (7, next.snapshot),
      (8, last.snapshot),
    ] {
      #expect(history.start(from: version)?.snapshot.sections == expected.sections, "version \(version)")
    }
    #expect(history.start(from: 3)?.touched == ["i2", "i3"])
    #expect(history.start(from: 2) == nil)
    #expect(history.start(from: 5) == nil)
  }

  @Test("a batch the edits cannot follow keeps its snapshot: a gap in versions, or a replacement of the list")
  func snapshotsWhereEditsCannotFollow() {
    let old = Snapshot(trusted: [TestSection(id: "S", items: (0..<300).map { TestItem("i\($0)") })])
    var history = History(version: 0, snapshot: old, limit: .default)
    let first = Self.batch(0, 1, old: old, edit: "i1")
    history.record(first, edits: first.edits)
    // A gap: 1 → 5 is recorded as from 3.
    let gap = Self.batch(3, 5, old: first.snapshot, edit: "i2")
    history.record(gap, edits: gap.edits)
    let next = Self.batch(5, 6, old: gap.snapshot, edit: "i3")
    history.record(next, edits: next.edits)
    let replaced = Self.batch(6, 7, old: next.snapshot, edit: "i4")
    history.record(replaced, edits: nil)
    let last = Self.batch(7, 8, old: replaced.snapshot, edit: "i5")
    history.record(last, edits: last.edits)
    #expect(history.entries.map(\.isCheckpoint) == [true, false, true, false, true, false])
    #expect(history.entries.map { $0.snapshot != nil } == [true, false, true, false, true, true])
    for (version, expected) in [
      (1, first.snapshot), (5, gap.snapshot), (6, next.snapshot), (7, replaced.snapshot), (8, last.snapshot),
    ] {
      #expect(history.start(from: version)?.snapshot.sections == expected.sections, "version \(version)")
    }
  }

  @Test("a batch that cannot say which ids it changed makes the resume a full diff, not a wrong one")
  func unknownTouched() {
    var snapshot = Snapshot(trusted: [TestSection(id: "S", items: (0..<300).map { TestItem("i\($0)") })])
    var history = History(version: 0, snapshot: snapshot, limit: .default)
    let first = Self.batch(0, 1, old: snapshot, edit: "i1")
    history.record(first, edits: first.edits)
    snapshot = first.snapshot
    // Replacing everything: far over a sixteenth of the list, so the batch names no ids.
    let all = Snapshot(trusted: [
      TestSection(id: "S", items: (0..<300).map { TestItem("i\($0)", version: 9) })
    ])
    let replacing = UpdateBatch(from: 1, to: 2, changeset: Changeset(from: snapshot, to: all))
    history.record(replacing, edits: replacing.edits)
    #expect(history.start(from: 0).map { $0.touched == nil } == true)
    #expect(history.start(from: 1).map { $0.touched == nil } == true)
    #expect(history.start(from: 2)?.touched == [])
  }
}

@Suite("Resume from a version", .timeLimit(.minutes(30)))
struct ResumeTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 12, casesVariable: "SIMPLESOURCE_RESUME_RUNS")

  @Test("every version a source retains resumes with exactly the state it had, rebuilt from edits")
  func everyRetainedVersionRebuilt() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 66))
    var resumed = 0
    for run in 0..<settings.cases {
      // Few versions and few bytes: the base moves on every few batches, and is rebuilt each time.
      let limit = HistoryLimit(versions: 1 + run % 9, bytes: run % 3 == 0 ? 40_000 : 64 << 20)
      let source = try BasicDataSource(
        sections: [
          TestSection(id: "A", items: (0..<6).map { TestItem("a\($0)") }),
          TestSection(id: "B", items: (0..<4).map { TestItem("b\($0)") }),
        ], history: limit)
      var states = [0: await source.snapshot]
      for step in 0..<30 {
        let picks = (0..<4).map { _ in Int.random(in: 0..<1_000, using: &random) }
        try await BatchEditsTests.mutate(
          source, kind: Int.random(in: 0..<8, using: &random), picks: picks, fresh: "n\(run)-\(step)")
        await source.settled()
        states[await source.version.number] = await source.snapshot
        for version in source.retainedVersions {
          let resumption = await source.subscribe(from: version)
          let held = resumption.subscription.snapshot
          #expect(resumption.isResumed, "run \(run) step \(step): \(version) not resumed; \(settings.replay)")
          #expect(
            held.sections == states[version]?.sections,
            "run \(run) step \(step): \(version) rebuilt as \(held.sections); \(settings.replay)")
          resumption.subscription.cancel()
          resumed += 1
        }
      }
    }
    print("Retained versions rebuilt: \(settings.cases) runs, \(resumed) resumes checked; \(settings.replay)")
  }

  /// Applies every batch of `subscription` until it reaches `version`; returns the snapshot.
  static func follow(_ subscription: Subscription<TestSection>, until version: Int) async -> Snapshot<
    TestSection
  > {
    var held = subscription.snapshot
    var at = subscription.version
    for await batch in subscription.batches {
      #expect(batch.from == at, "no gap, no duplicate")
      #expect(check(held, batch.snapshot, changeset: batch.changeset) == nil)
      held = batch.snapshot
      at = batch.to
      if at >= version { break }
    }
    subscription.cancel()
    return held
  }

  @Test("a subscriber resumes from a retained version with one batch to the newest, from the ids changed")
  func resumesRetained() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c d | B: e f"))
    var versions: [Int: Snapshot<TestSection>] = [0: await source.snapshot]
    for id in ["a", "c", "e"] {
      try await source.replaceItem(TestItem(id, version: 1))
      await source.settled()
      versions[await source.version.number] = await source.snapshot
    }
    try await source.moveItem("f", before: "a")
    await source.settled()
    let newest = await source.version.number
    for from in 0..<newest {
      guard case .resumed(let subscription) = await source.subscribe(from: from) else {
        Issue.record("version \(from) was not resumed")
        continue
      }
      #expect(subscription.version == from)
      #expect(subscription.snapshot == versions[from])
      var iterator = subscription.batches.makeAsyncIterator()
      let batch = await iterator.next()
      #expect(batch?.from.number == from)
      #expect(batch?.to.number == newest)
      #expect(batch?.snapshot == (await source.snapshot))
      if let batch { #expect(check(versions[from]!, batch.snapshot, changeset: batch.changeset) == nil) }
      subscription.cancel()
    }
    let current = await source.subscribe(from: newest)
    #expect(current.isResumed && current.subscription.version == newest)
  }

  @Test(
    "a version whose mutations cancelled out resumes after the source moved on, as subscribers hold it (G13)")
  func resumesUnbatchedVersion() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    try await source.replaceItem(TestItem("a", version: 1))
    await source.settled()
    // One transaction that inserts and deletes: a version, and no batch.
    try await source.transaction { transaction in
      try transaction.appendItems([TestItem("x")], toSection: "A")
      try transaction.deleteItems(["x"])
    }
    await source.settled()
    let unbatched = await source.version.number
    let held = await source.snapshot
    try await source.replaceItem(TestItem("b", version: 1))
    await source.settled()
    #expect(source.retainedVersions.contains(unbatched))
    let resumption = await source.subscribe(from: unbatched)
    try #require(resumption.isResumed)
    #expect(resumption.subscription.snapshot.sections == held.sections)
    let final = await Self.follow(resumption.subscription, until: await source.version.number)
    #expect(final.sections == (await source.snapshot).sections)
  }

  @Test("every version a subscriber holds resumes with the state it held, while several tasks write")
  func everyHeldVersionResumes() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 67))
    var checked = 0
    for run in 0..<settings.cases {
      let source = try BasicDataSource(sections: layout("A: a b c d | B: e f"))
      let subscription = await source.subscribe()
      let plans = (0..<3).map { _ in (0..<40).map { _ in Int.random(in: 0..<6, using: &random) } }
      // Three writers whose inserts and deletes of one id often cancel out within a batch.
      let writers = plans.enumerated().map { writer, plan in
        Task {
          for (step, kind) in plan.enumerated() {
            let id = "w\(writer)"
            switch kind {
            case 0, 1:
              _ = try? await source.transaction { transaction in
                try transaction.appendItems([TestItem(id)], toSection: "A")
                try transaction.deleteItems([id])
              }
            case 2: _ = try? await source.appendItems([TestItem(id)], toSection: "B")
            case 3: _ = try? await source.deleteItems([id])
            default: _ = try? await source.replaceItem(TestItem("a", version: writer * 100 + step))
            }
          }
        }
      }
      let consumer = Task {
        var state = subscription.snapshot
        var seen: [(version: Int, snapshot: Snapshot<TestSection>)] = [
          (subscription.heldVersion.number, state)
        ]
        for await batch in subscription.batches {
          // While it handles a batch it holds the state before it, at the previous batch's end or at a
          // version no batch carried since (G13).
          seen.append((subscription.heldVersion.number, state))
          state = batch.snapshot
          seen.append((batch.to.number, state))
        }
        return seen
      }
      for writer in writers { await writer.value }
      // The last write cancels out: the subscriber ends up at a version no batch carried.
      try await source.transaction { transaction in
        try transaction.appendItems([TestItem("z")], toSection: "B")
        try transaction.deleteItems(["z"])
      }
      await source.settled()
      _ = await subscription.reached(await source.version.number)
      subscription.cancel()
      var held = await consumer.value
      if let last = held.last { held.append((subscription.heldVersion.number, last.snapshot)) }
      // And the source moves on, so that no held version is the current one.
      try await source.replaceItem(TestItem("f", version: run + 1))
      await source.settled()
      for (version, snapshot) in held {
        let resumption = await source.subscribe(from: version)
        #expect(
          resumption.isResumed, "run \(run): held version \(version) does not resume; \(settings.replay)")
        #expect(
          resumption.subscription.snapshot.sections == snapshot.sections,
          "run \(run): version \(version) resumes elsewhere; \(settings.replay)")
        resumption.subscription.cancel()
        checked += 1
      }
    }
    print("Held versions resumed: \(settings.cases) runs, \(checked) versions; \(settings.replay)")
  }

  @Test("a forgotten, future or never-offered version gets an explicit reset with the whole state")
  func resets() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"), history: HistoryLimit(versions: 2))
    for step in 1...5 {
      try await source.replaceItem(TestItem("a", version: step))
      await source.settled()
    }
    #expect(source.retainedVersions == [4, 5])
    for from in [0, 3, 6, 99, -1] {
      let resumption = await source.subscribe(from: from)
      guard case .reset(let subscription) = resumption else {
        Issue.record("version \(from) was resumed")
        continue
      }
      #expect(subscription.version == 5)
      #expect(subscription.snapshot == (await source.snapshot))
      subscription.cancel()
    }
    #expect(await source.subscribe(from: 4).isResumed)
  }

  @Test("a subscriber resumed mid-stream gets every later batch in order, with no gap and no duplicate")
  func resumedThenFollows() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c | B: d"))
    try await source.appendItems([TestItem("x")], toSection: "A")
    await source.settled()
    let held = await source.snapshot
    let version = await source.version.number
    try await source.deleteItems(["b"])
    await source.settled()
    let resumption = await source.subscribe(from: version)
    #expect(resumption.isResumed)
    #expect(resumption.subscription.snapshot == held)
    try await source.moveItem("d", before: "a")
    try await source.appendSections([TestSection(id: "C", items: [TestItem("y")])])
    let target = await source.version.number
    let final = await Self.follow(resumption.subscription, until: target)
    #expect(final == (await source.snapshot))
  }

  @Test("a broadcaster retains what it publishes, and sources without history resume only at their version")
  func broadcasterAndDefault() async throws {
    let broadcaster = Broadcaster(snapshot: snapshot("A: a b"), history: HistoryLimit(versions: 3))
    for step in 1...4 {
      try await broadcaster.publish(snapshot("A: a b" + String(repeating: "'", count: step)), as: step)
    }
    #expect(broadcaster.retainedVersions == [2, 3, 4])
    #expect(broadcaster.subscribe(from: 2).isResumed)
    #expect(!broadcaster.subscribe(from: 1).isResumed)

    // A source of its own with no history: the protocol's default resumes only at its version.
    let fixed = FixedSource(snapshot: snapshot("A: a"), version: 3)
    #expect(await fixed.subscribe(from: 3, pacing: .immediate).isResumed)
    #expect(!(await fixed.subscribe(from: 2, pacing: .immediate).isResumed))
  }

  @Test("sources built on sources resume from their own retained versions")
  func derivedSourcesResume() async throws {
    let parent = try BasicDataSource(sections: layout("A: a b c d"))
    let projected = try await ProjectedDataSource(parent, projection: Projection(where: { $0.id != "b" }))
    let first = await projected.version.number
    let held = await projected.snapshot
    try await parent.deleteItems(["c"])
    await parent.settled()
    await projected.settled()
    #expect(await projected.version.number > first)
    guard case .resumed(let subscription) = await projected.subscribe(from: first, pacing: .immediate) else {
      Issue.record("the projection did not resume from \(first)")
      return
    }
    #expect(subscription.snapshot == held)
    let final = await Self.follow(subscription, until: await projected.version.number)
    #expect(final == (await projected.snapshot))
  }
}

/// A source with one fixed state and no history: it keeps the protocol's default `subscribe(from:pacing:)`.
final class FixedSource: DataSourceType {
  let fixed: Snapshot<TestSection>
  let fixedVersion: Int
  let counter = VersionCounter()

  init(snapshot: Snapshot<TestSection>, version: Int) {
    fixed = snapshot
    fixedVersion = version
  }

  var snapshot: Snapshot<TestSection> { fixed }
  var version: Version { Version(fixedVersion, of: counter) }
  func subscribe(pacing: Pacing) async -> Subscription<TestSection> {
    Subscription(
      snapshot: fixed, version: fixedVersion, counter: counter, batches: AsyncStream { $0.finish() })
  }
  func settled() async {}
}

extension ResumeTests {
  @Test("a resumed subscriber gets the refreshes of the versions it missed, as a lagging one does")
  func resumeCarriesRefreshes() async throws {
    let source = try BasicDataSource(sections: layout("S: a b c"))
    let lagging = await source.subscribe()
    let from = lagging.version.number
    _ = try await source.refreshItems(["b"])
    await source.settled()  // two batches: the resumed subscriber composes them
    try await source.replaceItem(TestItem("c", version: 1))
    await source.settled()
    var lagged = lagging.batches.makeAsyncIterator()
    let composed = try #require(await lagged.next())
    let resumption = await source.subscribe(from: from)
    guard case .resumed(let resumed) = resumption else {
      Issue.record(
        "version \(from) was not resumed: \(resumption), retained \(source.retainedVersions)")
      return
    }
    var batches = resumed.batches.makeAsyncIterator()
    let caughtUp = try #require(await batches.next())
    for (name, batch) in [("lagging", composed), ("resumed", caughtUp)] {
      #expect(batch.from == from, "\(name)")
      #expect(
        Set(batch.changeset.itemChanges.updates.map(\.id)) == ["b", "c"], "\(name): \(batch.changeset)")
      #expect(batch.changeset.forcedRefreshes == ["b"], "\(name)")
    }
    lagging.cancel()
    resumed.cancel()
  }
}
