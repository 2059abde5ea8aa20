// Seeded randomised property tests of Changeset: replay, UIKit validity, minimal moves, exact refreshes.

import SimpleSource
@testable import SimpleSourceCore
import SimpleSourceTesting
import Testing

@Suite("Changeset on random snapshot pairs")
struct ChangesetRandomTests {
  static let shards = 0..<8
  static let settings = RandomTestSettings.current(defaultCases: 1_500)

  @Test("every random pair replays exactly, passes the reference view and is minimal", arguments: shards)
  func randomPairs(shard: Int) throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: shard))
    let cases = settings.cases / Self.shards.count + (shard < settings.cases % Self.shards.count ? 1 : 0)
    let pairs = RandomSnapshotPairs()
    var patterns: [String: Int] = [:]
    for index in 0..<cases {
      let (oldSections, newSections) = pairs.next(using: &random)
      let old = try Snapshot(oldSections)
      let new = try Snapshot(newSections)
      patterns[
        Changeset(from: old, to: new).stages.map { "\($0.kind)" }.joined(separator: "+"), default: 0] += 1
      let failure = check(old, new)
      if let failure {
        Issue.record(
          "shard \(shard) case \(index): \(failure)\nold: \(try Snapshot(oldSections))\nnew: \(try Snapshot(newSections))\n\(settings.replay)"
        )
        return
      }
    }
    let seen = patterns.sorted { $0.value > $1.value }.map {
      "\($0.key.isEmpty ? "empty" : $0.key) \($0.value)"
    }
    print(
      "Changeset random shard \(shard): \(cases) cases passed (\(seen.joined(separator: ", "))); \(settings.replay)"
    )
  }
}

/// Checks one pair and its changeset (the full diff unless given); returns what is wrong, or `nil`.
func check(
  _ old: Snapshot<TestSection>, _ new: Snapshot<TestSection>, changeset given: Changeset<TestSection>? = nil
) -> String? {
  let changeset = given ?? Changeset(from: old, to: new)
  let carried = carriedItemIDs(old, new)

  // Exact replay through the reference view, both refresh styles, stage by stage.
  for style in [RefreshStyle.reload, .reconfigure] {
    var view = ReferenceListView(old)
    for (number, stage) in changeset.stages.enumerated() {
      if stage.isEmpty { return "stage \(number) is empty" }
      do {
        try view.apply(stage, refreshing: style)
      } catch {
        return
          "stage \(number) (\(stage.kind)) rejected with \(style): \(error)\n  batch: \(stage.calls(refreshing: style))"
      }
      if !view.shows(stage.state.sections) { return "stage \(number) does not show its data" }
    }
    if !view.shows(new.sections) { return "replay with \(style) does not give the new snapshot" }
    if !view.warnings.isEmpty { return "needless or fragile updates with \(style): \(view.warnings)" }
    // Carried items keep their cells with reconfigure: moves stayed moves, nothing was recreated.
    if style == .reconfigure {
      let initial = cellSerials(ReferenceListView(old))
      let final = cellSerials(view)
      if let lost = carried.first(where: { initial[$0] != final[$0] }) {
        return "carried item \(lost) lost its cell"
      }
    }
  }

  // Nothing changed ⇔ empty.
  let identical = old.sections == new.sections
  if identical != changeset.isEmpty {
    return "isEmpty is \(changeset.isEmpty) but snapshots identical: \(identical)"
  }

  // Minimal moves, computed independently.
  let expected = minimalMoves(old, new, carried: carried)
  let itemMoves = changeset.stages.reduce(0) { $0 + $1.itemChanges.moves.count }
  let sectionMoves = changeset.stages.reduce(0) { $0 + $1.sectionChanges.moves.count }
  if itemMoves != expected.items || changeset.itemChanges.moves.count != expected.items {
    return "item moves \(itemMoves) (summary \(changeset.itemChanges.moves.count)), minimal \(expected.items)"
  }
  if sectionMoves != expected.sections || changeset.sectionChanges.moves.count != expected.sections {
    return "section moves \(sectionMoves), minimal \(expected.sections)"
  }

  // Every changed carried item refreshed exactly once; nothing else.
  let changed = Set(carried.filter { old.item(withID: $0) != new.item(withID: $0) })
  let refreshed = changeset.stages.flatMap { $0.itemChanges.updates.map(\.id) }
  if refreshed.count != Set(refreshed).count { return "an item is refreshed twice: \(refreshed)" }
  if Set(refreshed) != changed {
    return "refreshed \(Set(refreshed).sorted()) but changed \(changed.sorted())"
  }
  let changedSections = Set(
    old.sections.compactMap { section in
      new.section(withID: section.id).flatMap { $0.header != section.header ? section.id : nil }
    })
  let refreshedSections = changeset.stages.flatMap { $0.sectionChanges.updates.map(\.id) }
  if Set(refreshedSections) != changedSections || refreshedSections.count != changedSections.count {
    return "refreshed sections \(refreshedSections) but changed \(changedSections.sorted())"
  }

  // The edits by id, applied one at a time to a copy kept by neighbours, give the new snapshot.
  if let failure = checkEdits(changeset, old, new) { return failure }

  // The summary addresses every change by id and by old and new position.
  return checkSummary(changeset, old, new, carried: carried)
}

/// Applies `changeset.edits` to a ``KeyedCopy`` of `old`, and to `old` itself; returns what is wrong when
/// either does not end at `new`.
func checkEdits(
  _ changeset: Changeset<TestSection>, _ old: Snapshot<TestSection>, _ new: Snapshot<TestSection>
) -> String? {
  var copy = KeyedCopy(old)
  let edits = changeset.edits
  do {
    try copy.apply(edits)
  } catch {
    return "edits do not apply: \(error)\n  edits: \(edits)"
  }
  if copy.sections.map(\.id) != new.sectionIDs || copy.sections.map(\.header) != new.sections.map(\.header)
    || copy.sections.map(\.items) != new.sections.map(\.items)
  {
    return "edits give \(copy.sections), not the new snapshot\n  edits: \(edits)"
  }
  // A snapshot follows them too, as a retained history rebuilds a version it keeps as edits.
  do {
    let rebuilt = try old.applying(edits)
    if rebuilt.sections != new.sections {
      return "edits applied to the old snapshot give \(rebuilt.sections), not the new one\n  edits: \(edits)"
    }
  } catch {
    return "edits do not apply to the old snapshot: \(error)\n  edits: \(edits)"
  }
  // Each edit is needed: no item or section is named twice, and nothing unchanged is named.
  if edits.count > changeset.itemChanges.count + changeset.sectionChanges.count {
    return "\(edits.count) edits for \(changeset.itemChanges.count + changeset.sectionChanges.count) changes"
  }
  return nil
}

func checkSummary(
  _ changeset: Changeset<TestSection>, _ old: Snapshot<TestSection>, _ new: Snapshot<TestSection>,
  carried: [String]
) -> String? {
  let items = changeset.itemChanges
  let removed =
    items.deletes.map { ($0.id, $0.from) } + (items.moves + items.updates).map { ($0.id, $0.from) }
  for (id, from) in removed where !old.contains(from) || old[from].id != id {
    return "summary change of \(id) does not name its old position \(from)"
  }
  let placed = items.inserts.map { ($0.id, $0.to) } + (items.moves + items.updates).map { ($0.id, $0.to) }
  for (id, to) in placed where !new.contains(to) || new[to].id != id {
    return "summary change of \(id) does not name its new position \(to)"
  }
  let oldIDs = Set(old.sections.flatMap { $0.items.map(\.id) })
  let newIDs = Set(new.sections.flatMap { $0.items.map(\.id) })
  if Set(items.deletes.map(\.id)) != oldIDs.subtracting(carried) { return "summary deletes are wrong" }
  if Set(items.inserts.map(\.id)) != newIDs.subtracting(carried) { return "summary inserts are wrong" }
  let sections = changeset.sectionChanges
  let oldSectionIDs = Set(old.sectionIDs)
  let newSectionIDs = Set(new.sectionIDs)
  if Set(sections.deletes.map(\.id)) != oldSectionIDs.subtracting(newSectionIDs) {
    return "section deletes wrong"
  }
  if Set(sections.inserts.map(\.id)) != newSectionIDs.subtracting(oldSectionIDs) {
    return "section inserts wrong"
  }
  return nil
}

/// Items whose old and new sections both survive: the ones that can be moved and refreshed.
func carriedItemIDs(_ old: Snapshot<TestSection>, _ new: Snapshot<TestSection>) -> [String] {
  old.sections.flatMap { section -> [String] in
    guard new.index(ofSection: section.id) != nil else { return [] }
    return section.items.compactMap { item in
      guard let position = new.position(ofItem: item.id),
        old.index(ofSection: new.sections[position.section].id) != nil
      else { return nil }
      return item.id
    }
  }
}

func cellSerials(_ view: ReferenceListView<TestSection>) -> [String: Int] {
  var serials: [String: Int] = [:]
  for section in view.sections { for cell in section.cells { serials[cell.itemID] = cell.serial } }
  return serials
}

/// The minimal number of moves, by a deliberately simple quadratic longest-increasing-subsequence.
func minimalMoves(_ old: Snapshot<TestSection>, _ new: Snapshot<TestSection>, carried: [String])
  -> (sections: Int, items: Int)
{
  func lisLength(_ keys: [Int]) -> Int {
    var best = [Int](repeating: 1, count: keys.count)
    for i in keys.indices {
      for j in 0..<i where keys[j] < keys[i] { best[i] = max(best[i], best[j] + 1) }
    }
    return best.max() ?? 0
  }
  let survivingKeys = new.sections.compactMap { old.index(ofSection: $0.id) }
  let sectionMoves = survivingKeys.count - lisLength(survivingKeys)
  let carried = Set(carried)
  var itemMoves = 0
  for section in new.sections {
    guard let oldSection = old.index(ofSection: section.id) else { continue }
    var keys: [Int] = []
    for item in section.items where carried.contains(item.id) {
      let from = old.position(ofItem: item.id)!
      if from.section == oldSection { keys.append(from.item) } else { itemMoves += 1 }
    }
    itemMoves += keys.count - lisLength(keys)
  }
  return (sectionMoves, itemMoves)
}
