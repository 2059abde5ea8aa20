// Changesets derived from the mutation log: what the touched ids did, in O(k log n), with minimal moves.

extension Changeset {
  /// The changes from `source` to `target` when only the items in `touched` were inserted, deleted, moved
  /// or replaced, and the sections kept their ids and order: every other item keeps its section, its
  /// content and its order relative to the other untouched items. A data source's mutation log knows this.
  ///
  /// Equal to ``init(from:to:refreshing:)`` in every part but the choice among equally minimal moves: the
  /// same deletes, inserts and updates, and as many moves, which are minimal. Untouched items are never
  /// hashed or compared; runs of them count as one weighted element of the longest increasing
  /// subsequence, split wherever a touched item stood or lands, so the moves stay exactly minimal.
  ///
  /// - Returns: `nil` when the sections differ in ids or order; use the full diff then.
  /// - Complexity: O(*s* + *k* log *n* + *m* log *n*) for *s* sections and *k* touched ids, where *m* ≤ *n*
  ///   counts untouched items that must move (a run of them moves only when at least as many touched
  ///   items would otherwise move, so *m* ≤ *k*). It reads both snapshots through their persistent form.
  @inlinable
  package init?(
    from source: Snapshot<Section>, to target: Snapshot<Section>, logged touched: Set<Item.ID>,
    refreshing: Set<Item.ID>
  ) {
    let old = source.tree
    let new = target.tree
    guard old.sectionCount == new.sectionCount else { return nil }
    var sectionUpdates: [SectionChange<Section.ID>] = []
    for index in 0..<old.sectionCount {
      let before = old.entries[index].header
      let after = new.entries[index].header
      guard before.id == after.id else { return nil }
      if !after.isContentEqual(to: before) {
        sectionUpdates.append(SectionChange(id: after.id, from: index, to: index))
      }
    }

    var log = LogPlanner<Section>(old: old, new: new)
    for id in touched { log.record(id, refreshing: !refreshing.isEmpty && refreshing.contains(id)) }
    for id in refreshing where !touched.contains(id) { log.record(id, refreshing: true) }
    log.findMoves()
    var items = log.summary
    items.deletes.sort { $0.from < $1.from }
    items.inserts.sort { $0.to < $1.to }
    items.moves.sort { $0.to < $1.to }
    items.updates.sort { $0.from < $1.from }

    var stages: [ChangeStage<Section>] = []
    if !sectionUpdates.isEmpty || !items.updates.isEmpty {
      // The old shape with new contents, for reloads at old positions (R4, R5, R29).
      var refreshed = old
      for update in sectionUpdates {
        refreshed.replaceSectionContent(at: update.from, with: new.entries[update.to].header)
      }
      for update in items.updates { refreshed.replaceItem(at: update.from, with: new.item(at: update.to)) }
      stages.append(
        ChangeStage(
          kind: .refresh, sectionChanges: ChangeList(updates: sectionUpdates),
          itemChanges: ChangeList(
            updates: items.updates.map { ItemChange(id: $0.id, from: $0.from, to: $0.from) }),
          state: Snapshot(tree: refreshed)))
    }
    if !items.deletes.isEmpty || !items.inserts.isEmpty || !items.moves.isEmpty {
      // No section is deleted, inserted or moved, so R28 never splits the structural changes.
      stages.append(
        ChangeStage(
          kind: .structure, sectionChanges: ChangeList(),
          itemChanges: ChangeList(deletes: items.deletes, inserts: items.inserts, moves: items.moves),
          state: target))
    }
    self.init(
      source: source, target: target, stages: stages, sectionChanges: ChangeList(updates: sectionUpdates),
      itemChanges: items, forcedRefreshes: refreshing)
  }
}

/// The item changes of a log-derived changeset: where each touched id was and is, and the minimal moves.
@usableFromInline struct LogPlanner<Section: SectionType> {
  @usableFromInline typealias Item = Section.Item

  @usableFromInline let old: SnapshotTree<Section>
  @usableFromInline let new: SnapshotTree<Section>
  @usableFromInline var summary = ChangeList<Item.ID, ItemPosition>()
  /// For each section, the old ranks of the touched items that were in it.
  @usableFromInline var touchedOld: [[Int]]
  /// For each section, the new ranks of the touched items that are in it.
  @usableFromInline var touchedNew: [[Int]]
  /// For each section, the touched items that stay in it: candidates for the longest increasing
  /// subsequence.
  @usableFromInline var stayers: [[(id: Item.ID, from: Int, to: Int)]]

  /// A planner for trees with the same sections.
  @inlinable init(old: SnapshotTree<Section>, new: SnapshotTree<Section>) {
    self.old = old
    self.new = new
    touchedOld = Array(repeating: [], count: old.sectionCount)
    touchedNew = Array(repeating: [], count: old.sectionCount)
    stayers = Array(repeating: [], count: old.sectionCount)
  }

  /// Records what happened to the touched item `id`.
  /// - Complexity: O(log *n*): one hash and one descent on each side.
  @inlinable mutating func record(_ id: Item.ID, refreshing: Bool) {
    let from = old.locateRetaining(id)
    let to = new.locateRetaining(id)
    if let from { touchedOld[from.position.section].append(from.position.item) }
    if let to { touchedNew[to.position.section].append(to.position.item) }
    switch (from, to) {
    case (let from?, let to?):
      if from.item != to.item || refreshing {
        summary.updates.append(ItemChange(id: id, from: from.position, to: to.position))
      }
      if from.position.section == to.position.section {
        stayers[from.position.section].append((id, from.position.item, to.position.item))
      } else {
        summary.moves.append(ItemChange(id: id, from: from.position, to: to.position))
      }
    case (let from?, nil): summary.deletes.append(.init(id: id, from: from.position))
    case (nil, let to?): summary.inserts.append(.init(id: id, to: to.position))
    case (nil, nil): break
    }
  }

  /// Adds the moves within each section: every element outside a longest increasing subsequence of old
  /// positions taken in new order, where an element is a touched stayer or a run of untouched items.
  @inlinable mutating func findMoves() {
    for (section, stayers) in stayers.enumerated() where !stayers.isEmpty {
      let oldRanks = touchedOld[section].sorted()
      let newRanks = touchedNew[section].sorted()
      if Self.keepOrder(stayers, oldRanks: oldRanks, newRanks: newRanks) { continue }
      // How many untouched items precede each touched one, on each side: nondecreasing.
      let untouchedBeforeOld = oldRanks.enumerated().map { $0.element - $0.offset }
      let untouchedBeforeNew = newRanks.enumerated().map { $0.element - $0.offset }
      let untouched = old.itemCount(inSection: section) - oldRanks.count
      // Untouched item u's rank: u plus the touched items before it.
      func oldRank(ofUntouched u: Int) -> Int { u + upperBound(untouchedBeforeOld, u) }
      func newRank(ofUntouched u: Int) -> Int { u + upperBound(untouchedBeforeNew, u) }

      // Runs of untouched items split wherever a stayer stood or lands: each run is contiguous among the
      // section's survivors on both sides, so a longest increasing subsequence takes all of it or none.
      var cuts = Set([0, untouched])
      for stayer in stayers {
        cuts.insert(stayer.from - lowerBound(oldRanks, stayer.from))
        cuts.insert(stayer.to - lowerBound(newRanks, stayer.to))
      }
      let bounds = cuts.filter { $0 <= untouched }.sorted()
      // Elements: (new rank, old rank, weight, run start or -1 for a stayer, stayer index).
      var elements: [(new: Int, old: Int, weight: Int, run: Int, stayer: Int)] = []
      for (start, end) in zip(bounds, bounds.dropFirst()) where start < end {
        elements.append((newRank(ofUntouched: start), oldRank(ofUntouched: start), end - start, start, -1))
      }
      for (index, stayer) in stayers.enumerated() {
        elements.append((stayer.to, stayer.from, 1, -1, index))
      }
      elements.sort { $0.new < $1.new }
      let stays = weightedLongestIncreasingSubsequence(
        keys: elements.map(\.old), weights: elements.map(\.weight))
      for (element, stays) in zip(elements, stays) where !stays {
        if element.stayer >= 0 {
          let stayer = stayers[element.stayer]
          summary.moves.append(
            ItemChange(
              id: stayer.id, from: ItemPosition(section: section, item: stayer.from),
              to: ItemPosition(section: section, item: stayer.to)))
          continue
        }
        for u in element.run..<(element.run + element.weight) {
          let from = ItemPosition(section: section, item: oldRank(ofUntouched: u))
          summary.moves.append(
            ItemChange(
              id: old.item(at: from).id, from: from,
              to: ItemPosition(section: section, item: newRank(ofUntouched: u))))
        }
      }
    }
  }
}

extension LogPlanner {
  /// Whether the section's survivors keep their order, so that nothing in it moves: the stayers keep
  /// their order among themselves, and each has as many untouched items before it on both sides. Edits
  /// that replace items, or insert and delete them, leave a section so; this answers without the longest
  /// increasing subsequence.
  /// - Complexity: O(*t* log *t*) for *t* touched items in the section.
  @inlinable static func keepOrder(
    _ stayers: [(id: Item.ID, from: Int, to: Int)], oldRanks: [Int], newRanks: [Int]
  ) -> Bool {
    var previousFrom = -1
    for stayer in stayers.sorted(by: { $0.to < $1.to }) {
      guard stayer.from > previousFrom,
        stayer.from - lowerBound(oldRanks, stayer.from) == stayer.to - lowerBound(newRanks, stayer.to)
      else { return false }
      previousFrom = stayer.from
    }
    return true
  }
}

/// The number of elements of the sorted `values` that are at most `value`.
@inlinable func upperBound(_ values: [Int], _ value: Int) -> Int {
  var (low, high) = (0, values.count)
  while low < high {
    let middle = (low + high) / 2
    if values[middle] <= value { low = middle + 1 } else { high = middle }
  }
  return low
}

/// The number of elements of the sorted `values` that are less than `value`.
@inlinable func lowerBound(_ values: [Int], _ value: Int) -> Int {
  var (low, high) = (0, values.count)
  while low < high {
    let middle = (low + high) / 2
    if values[middle] < value { low = middle + 1 } else { high = middle }
  }
  return low
}

/// Marks the elements of one strictly increasing subsequence of `keys` of the greatest total weight.
///
/// - Parameters:
///   - keys: Distinct integers.
///   - weights: Positive weights, one per key.
/// - Complexity: O(*m* log *m*) for *m* keys: a Fenwick tree of prefix maxima over the keys' ranks.
@inlinable func weightedLongestIncreasingSubsequence(keys: [Int], weights: [Int]) -> [Bool] {
  let count = keys.count
  let rankOf = Dictionary(
    uniqueKeysWithValues: keys.sorted().enumerated().map { ($0.element, $0.offset + 1) })
  // tree[i]: the best (total, element) over the ranks it covers.
  var tree = [(total: Int, element: Int)](repeating: (0, -1), count: count + 1)
  var best = [Int](repeating: 0, count: count)
  var previous = [Int](repeating: -1, count: count)
  for element in 0..<count {
    let rank = rankOf[keys[element]]!
    var query = rank - 1
    var found = (total: 0, element: -1)
    while query > 0 {
      if tree[query].total > found.total { found = tree[query] }
      query -= query & -query
    }
    best[element] = found.total + weights[element]
    previous[element] = found.element
    var update = rank
    while update <= count {
      if best[element] > tree[update].total { tree[update] = (best[element], element) }
      update += update & -update
    }
  }
  var inSequence = [Bool](repeating: false, count: count)
  var element = best.indices.max { best[$0] < best[$1] } ?? -1
  while element >= 0 {
    inSequence[element] = true
    element = previous[element]
  }
  return inSequence
}
