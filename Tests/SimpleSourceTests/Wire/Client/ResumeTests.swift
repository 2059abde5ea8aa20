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
    for version in 1...count {
      let batch = batch(version - 1, version, old: snapshot, edit: "i\(version % items)")
      history.record(batch)
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
      history.record(batch)
      snapshot = batch.snapshot
      weak let storage = snapshot.storage
      recorded.append((version, { storage }))
    }
    // 40 entries are far below the compaction threshold: only forgetting can have released them.
    #expect(history.entries.count == 41)
    #expect(history.versions == [38, 39, 40])
    #expect(first == nil)
    for (version, storage) in recorded {
      #expect((storage() != nil) == (version >= 38), "version \(version)")
    }
  }

  @Test("the bytes bound forgets old versions; the newest is always kept")
  func boundedByBytes() {
    let perEdit = History.estimatedBytes(of: Snapshot(), touched: ["x"])
    let (history, _) = Self.run(HistoryLimit(versions: 100, bytes: perEdit * 4), batches: 20)
    #expect(history.versions == [16, 17, 18, 19, 20])
    let (newest, _) = Self.run(.newest, batches: 20)
    #expect(newest.versions == [20])
    let (none, _) = Self.run(HistoryLimit(versions: 100, bytes: 0), batches: 20)
    #expect(none.versions == [20])
  }

  @Test("a batch that cannot say which ids it changed makes the resume a full diff, not a wrong one")
  func unknownTouched() {
    var snapshot = Snapshot(trusted: [TestSection(id: "S", items: (0..<300).map { TestItem("i\($0)") })])
    var history = History(version: 0, snapshot: snapshot, limit: .default)
    let first = Self.batch(0, 1, old: snapshot, edit: "i1")
    history.record(first)
    snapshot = first.snapshot
    // Replacing everything: far over a sixteenth of the list, so the batch names no ids.
    let all = Snapshot(trusted: [
      TestSection(id: "S", items: (0..<300).map { TestItem("i\($0)", version: 9) })
    ])
    history.record(UpdateBatch(from: 1, to: 2, changeset: Changeset(from: snapshot, to: all)))
    #expect(history.start(from: 0).map { $0.touched == nil } == true)
    #expect(history.start(from: 1).map { $0.touched == nil } == true)
    #expect(history.start(from: 2)?.touched == [])
  }
}

@Suite("Resume from a version", .timeLimit(.minutes(20)))
struct ResumeTests {
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
      #expect(batch?.from == from)
      #expect(batch?.to == newest)
      #expect(batch?.snapshot == (await source.snapshot))
      if let batch { #expect(check(versions[from]!, batch.snapshot, changeset: batch.changeset) == nil) }
      subscription.cancel()
    }
    let current = await source.subscribe(from: newest)
    #expect(current.isResumed && current.subscription.version == newest)
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
    let from = lagging.version
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
