// Matching when the caller knows which items changed: the untouched ones are paired by walking, not hashed.

extension ChangesetPlanner {
  /// Pairs items like ``matchItems()``, when every item whose id is not in `touched` is known to keep its
  /// section, its content and its order relative to the other untouched items.
  ///
  /// Untouched items are paired by walking each surviving section in step on both sides: no hash, and
  /// only their ids are compared (to check the promise), never their contents. Each touched id costs two hash lookups, and touched items that survive are compared
  /// with `==` as in the full match. The result is identical to ``matchItems()`` when the promise holds.
  ///
  /// - Returns: `false` when the walk finds that the promise does not hold (an untouched item is not where
  ///   the promise puts it); the planner is then in an unspecified state and must not be used.
  /// - Complexity: O(*n*) integer steps and id comparisons, plus O(*k*) hash lookups and `==` for *k*
  ///   touched ids; the full match costs O(*n*) hash lookups and `==`.
  @inlinable
  mutating func matchItems(touching touched: some Sequence<Item.ID>) -> Bool {
    let old = source.sections
    let new = target.sections
    let sourceOffsets = source.itemOffsets
    let targetOffsets = target.itemOffsets
    var oldTouched = [Bool](repeating: false, count: source.itemCount)
    var newTouched = [Bool](repeating: false, count: target.itemCount)
    for id in touched {
      if let packed = source.positionByItemID[id] {
        oldTouched[sourceOffsets[packed.section] + packed.item] = true
      }
      if let packed = target.positionByItemID[id] {
        newTouched[targetOffsets[packed.section] + packed.item] = true
      }
    }
    oldMatch = [UInt64](repeating: Self.none, count: source.itemCount)
    newMatch = [UInt64](repeating: Self.none, count: target.itemCount)
    let anySectionDeleted = !sectionSummary.deletes.isEmpty
    let anySectionInserted = !sectionSummary.inserts.isEmpty

    for oldSection in old.indices {
      let items = old[oldSection].items
      let base = sourceOffsets[oldSection]
      let newSection = oldToNewSection[oldSection]
      // The next untouched item of the new section: where the next untouched old item must be.
      var cursor = 0
      let newItems = newSection >= 0 ? new[newSection].items : []
      let newBase = newSection >= 0 ? targetOffsets[newSection] : 0
      for oldItem in items.indices {
        let item = items[oldItem]
        if newSection >= 0 && !oldTouched[base + oldItem] {
          while cursor < newItems.count && newTouched[newBase + cursor] { cursor += 1 }
          guard cursor < newItems.count, newItems[cursor].id == item.id else { return false }
          oldMatch[base + oldItem] = PackedPosition(section: newSection, item: cursor).raw
          newMatch[newBase + cursor] = PackedPosition(section: oldSection, item: oldItem).raw
          cursor += 1
          continue
        }
        if newSection >= 0, let packed = target.positionByItemID[item.id],
          newToOldSection[packed.section] >= 0
        {
          carry(item, at: oldSection, oldItem, oldIndex: base + oldItem, to: packed)
        } else {
          delete(
            item.id, at: oldSection, oldItem, sectionSurvives: newSection >= 0, staged: anySectionDeleted)
        }
      }
      if newSection >= 0 {
        while cursor < newItems.count && newTouched[newBase + cursor] { cursor += 1 }
        if cursor < newItems.count { return false }  // an untouched item appeared from nowhere
      }
    }
    // Every untouched new item of a surviving section is matched now (checked above): the rest are inserts.
    insertUnmatched(staged: anySectionInserted)
    if !anySectionDeleted { stageItemDeletes = itemSummary.deletes }
    if !anySectionInserted { stageItemInserts = itemSummary.inserts }
    return true
  }
}

extension Changeset {
  /// Computes the changes from `source` to `target` when only the items in `touched` may have changed:
  /// every other item keeps its section, its content and its order relative to the other untouched
  /// items. Such items are paired without hashing them or comparing their contents (only their ids are
  /// checked to match); the result equals
  /// ``init(from:to:refreshing:)``.
  ///
  /// For sources that know what changed (a projection deriving its batch from its parent's). When the
  /// promise turns out not to hold, the full diff is computed instead, so a wrong hint costs time, never
  /// correctness (except for content changes of untouched items, which are not compared).
  ///
  /// - Complexity: O(*n*) integer steps plus O(*k*) hashes and `==` for *k* touched ids, and the moves'
  ///   O(*m* log *m*).
  @inlinable
  init(
    from source: Snapshot<Section>, to target: Snapshot<Section>, touching touched: some Sequence<Item.ID>,
    refreshing: Set<Item.ID> = []
  ) {
    var planner = ChangesetPlanner(source: source, target: target, refreshing: refreshing)
    planner.matchSections()
    if planner.matchItems(touching: touched) {
      planner.findMoves()
      self.init(source: source, target: target, planner: planner, refreshing: refreshing)
    } else {
      self.init(from: source, to: target, refreshing: refreshing)
    }
  }

  /// The changeset a finished planner describes.
  @inlinable
  init(
    source: Snapshot<Section>, target: Snapshot<Section>, planner: ChangesetPlanner<Section>,
    refreshing: Set<Item.ID>
  ) {
    self.init(
      source: source, target: target, stages: planner.makeStages(target: target),
      sectionChanges: planner.sectionSummary,
      itemChanges: planner.itemSummary, forcedRefreshes: refreshing)
  }

  /// A changeset from its parts, known to agree.
  @inlinable
  init(
    source: Snapshot<Section>, target: Snapshot<Section>, stages: [ChangeStage<Section>],
    sectionChanges: ChangeList<Section.ID, Int>, itemChanges: ChangeList<Item.ID, ItemPosition>,
    forcedRefreshes: Set<Item.ID>
  ) {
    self.source = source
    self.target = target
    self.stages = stages
    self.sectionChanges = sectionChanges
    self.itemChanges = itemChanges
    self.forcedRefreshes = forcedRefreshes
  }
}
