// The linear-time matching and staging behind Changeset: one hash pass, flat arrays, minimal moves.

/// Plans a ``Changeset``: matches sections and items by id, finds minimal moves and builds the stages.
///
/// Items are addressed by their *global* index (the item's offset in the snapshot's flattened order), so
/// every per-item table is a flat array. A matched pair is *carried* when both its old and its new section
/// survive; only carried items are moved or refreshed, the rest are deleted and inserted (R21, R22).
@usableFromInline
struct ChangesetPlanner<Section: SectionType> {
  @usableFromInline typealias Item = Section.Item

  @usableFromInline static var none: UInt64 { .max }

  /// The flat forms of the two snapshots: the planner walks their arrays and hash indexes.
  @usableFromInline let source: FlatSnapshot<Section>
  @usableFromInline let target: FlatSnapshot<Section>

  /// The new index of each old section, or -1 when it is deleted.
  @usableFromInline var oldToNewSection: [Int] = []
  /// The old index of each new section, or -1 when it is inserted.
  @usableFromInline var newToOldSection: [Int] = []
  /// For each old item (by global index), its packed new position if it is carried, else `none`.
  @usableFromInline var oldMatch: [UInt64] = []
  /// For each new item (by global index), its packed old position if it is carried, else `none`.
  @usableFromInline var newMatch: [UInt64] = []

  @usableFromInline var sectionSummary = ChangeList<Section.ID, Int>()
  @usableFromInline var itemSummary = ChangeList<Item.ID, ItemPosition>()
  /// Item deletes inside surviving sections, at old positions (what a stage deletes).
  @usableFromInline var stageItemDeletes: [ChangeList<Item.ID, ItemPosition>.Removal] = []
  /// Item inserts inside surviving sections, at new positions (what a stage inserts).
  @usableFromInline var stageItemInserts: [ChangeList<Item.ID, ItemPosition>.Insertion] = []
  /// Whether an old section has item deletes in a stage (R28).
  @usableFromInline var oldSectionHasItemDeletes: [Bool] = []
  /// Whether an old section is the source of an item move (R28).
  @usableFromInline var oldSectionHasMovesOut: [Bool] = []
  /// Whether a new section has item inserts or is the destination of an item move (R28).
  @usableFromInline var newSectionHasInsertsOrMovesIn: [Bool] = []

  /// Items to refresh although `==` reports no change.
  @usableFromInline let refreshing: Set<Item.ID>

  @inlinable
  init(source: Snapshot<Section>, target: Snapshot<Section>, refreshing: Set<Item.ID> = []) {
    self.source = source.flat
    self.target = target.flat
    self.refreshing = refreshing
  }

  /// Pairs sections by id; records section deletes, inserts and content updates.
  @inlinable
  mutating func matchSections() {
    let old = source.sections
    let new = target.sections
    oldToNewSection = [Int](repeating: -1, count: old.count)
    newToOldSection = [Int](repeating: -1, count: new.count)
    oldSectionHasItemDeletes = [Bool](repeating: false, count: old.count)
    oldSectionHasMovesOut = [Bool](repeating: false, count: old.count)
    newSectionHasInsertsOrMovesIn = [Bool](repeating: false, count: new.count)
    for oldIndex in old.indices {
      let id = old[oldIndex].id
      guard let newIndex = target.sectionIndexByID[id] else {
        sectionSummary.deletes.append(.init(id: id, from: oldIndex))
        continue
      }
      oldToNewSection[oldIndex] = newIndex
      newToOldSection[newIndex] = oldIndex
      if !new[newIndex].isContentEqual(to: old[oldIndex]) {
        sectionSummary.updates.append(SectionChange(id: id, from: oldIndex, to: newIndex))
      }
    }
    for newIndex in new.indices where newToOldSection[newIndex] < 0 {
      sectionSummary.inserts.append(.init(id: new[newIndex].id, to: newIndex))
    }
  }

  /// Pairs items by id; records deletes, inserts and content updates. Within a section that survives, the
  /// items its old and new lists start and end with pair by position (see ``commonEnds(_:_:)``). Between
  /// them, once two old items stand in a row in the new list, the next is first compared with the item
  /// after them, so a run of items that shifted together costs two lookups; any other item costs one.
  @inlinable
  mutating func matchItems() {
    let old = source.sections
    let sourceOffsets = source.itemOffsets
    oldMatch = [UInt64](repeating: Self.none, count: source.itemCount)
    newMatch = [UInt64](repeating: Self.none, count: target.itemCount)
    // Without deleted (inserted) sections the stage's deletes (inserts) are exactly the summary's: they
    // share its storage instead of being built a second time.
    let anySectionDeleted = !sectionSummary.deletes.isEmpty
    let anySectionInserted = !sectionSummary.inserts.isEmpty
    defer {
      if !anySectionDeleted { stageItemDeletes = itemSummary.deletes }
      if !anySectionInserted { stageItemInserts = itemSummary.inserts }
    }
    for oldSection in old.indices {
      let items = old[oldSection].items
      let base = sourceOffsets[oldSection]
      let newSection = oldToNewSection[oldSection]
      let oldSectionSurvives = newSection >= 0
      // The runs of ids both lists of a surviving section start and end with match without a lookup.
      let (prefix, suffix) =
        oldSectionSurvives ? Self.commonEnds(items, target.sections[newSection].items) : (0, 0)
      let suffixStart = items.count - suffix
      let newItems = oldSectionSurvives ? target.sections[newSection].items : []
      let suffixShift = newItems.count - items.count
      // The run of old items just before this one that stand in a row in the new list too, and where the
      // last of them went. Once two do, the next is first looked for right after them, with one id
      // comparison: a run that shifted together costs two lookups, and a shuffled list few comparisons.
      var run = 0
      var runEnd = -1
      for oldItem in items.indices {
        let item = items[oldItem]
        if oldItem < prefix || oldItem >= suffixStart {
          let newItem = oldItem < prefix ? oldItem : oldItem + suffixShift
          carry(
            item, at: oldSection, oldItem, oldIndex: base + oldItem,
            to: PackedPosition(section: newSection, item: newItem))
          (run, runEnd) = (0, -1)
        } else if run >= 2, runEnd + 1 < newItems.count, newItems[runEnd + 1].id == item.id {
          runEnd += 1
          run += 1
          carry(
            item, at: oldSection, oldItem, oldIndex: base + oldItem,
            to: PackedPosition(section: newSection, item: runEnd))
        } else if oldSectionSurvives, let packed = target.positionByItemID[item.id],
          newToOldSection[packed.section] >= 0
        {
          if packed.section == newSection {
            run = packed.item == runEnd + 1 && run > 0 ? run + 1 : 1
            runEnd = packed.item
          } else {
            (run, runEnd) = (0, -1)
          }
          carry(item, at: oldSection, oldItem, oldIndex: base + oldItem, to: packed)
        } else {
          delete(
            item.id, at: oldSection, oldItem, sectionSurvives: oldSectionSurvives, staged: anySectionDeleted)
        }
      }
    }
    insertUnmatched(staged: anySectionInserted)
  }

  /// Pairs every item with the one at its own position when both snapshots hold the same sections and
  /// item ids in the same order (only contents changed, as when every row is refreshed or one item is
  /// edited in a copy of the sections): records the content updates; nothing is deleted, inserted or
  /// moved. Call after ``matchSections()``.
  ///
  /// - Returns: `false`, having recorded nothing, when a section or item id is not in place: pair them
  ///   with ``matchItems()`` and ``findMoves()`` then.
  /// - Complexity: O(1) for a section whose items share storage on both sides (unless `refreshing` is not
  ///   empty); O(*m*) id comparisons and `==` for one of *m* items that does not. Nothing is hashed, and
  ///   nothing of size *n* is allocated.
  @inlinable
  mutating func matchItemsInPlace() -> Bool {
    let old = source.sections
    let new = target.sections
    guard old.count == new.count, oldToNewSection.indices.allSatisfy({ oldToNewSection[$0] == $0 }) else {
      return false
    }
    for section in old.indices where !FlatSnapshot<Section>.sameIDs(old[section].items, new[section].items) {
      return false
    }
    for section in old.indices {
      let (items, newItems) = (old[section].items, new[section].items)
      if refreshing.isEmpty && FlatSnapshot<Section>.sharesStorage(items, newItems) { continue }
      for index in items.indices
      where items[index] != newItems[index] || (!refreshing.isEmpty && refreshing.contains(items[index].id)) {
        let position = ItemPosition(section: section, item: index)
        itemSummary.updates.append(ItemChange(id: items[index].id, from: position, to: position))
      }
    }
    return true
  }

  /// How many items `old` and `new` start with that have equal ids in the same order, and how many they
  /// end with, not overlapping: those pair up by position. Ids are unique in a snapshot, so a lookup would
  /// pair them the same way.
  /// - Complexity: O(*p* + *s*) id comparisons for a prefix of *p* and a suffix of *s*.
  @inlinable
  static func commonEnds(_ old: [Item], _ new: [Item]) -> (prefix: Int, suffix: Int) {
    let limit = min(old.count, new.count)
    var prefix = 0
    while prefix < limit && old[prefix].id == new[prefix].id { prefix += 1 }
    var suffix = 0
    while suffix < limit - prefix && old[old.count - 1 - suffix].id == new[new.count - 1 - suffix].id {
      suffix += 1
    }
    return (prefix, suffix)
  }

  /// Pairs the old item at (`oldSection`, `oldItem`) with the new one at `packed`, and records an update
  /// when its content changed or it is to be refreshed.
  @inlinable
  mutating func carry(
    _ item: Item, at oldSection: Int, _ oldItem: Int, oldIndex: Int, to packed: PackedPosition
  ) {
    oldMatch[oldIndex] = packed.raw
    newMatch[target.itemOffsets[packed.section] + packed.item] =
      PackedPosition(section: oldSection, item: oldItem).raw
    if item != target.sections[packed.section].items[packed.item]
      || (!refreshing.isEmpty && refreshing.contains(item.id))
    {
      itemSummary.updates.append(
        ItemChange(id: item.id, from: ItemPosition(section: oldSection, item: oldItem), to: packed.position))
    }
  }

  /// Records the old item at (`oldSection`, `oldItem`) as deleted; `staged` also lists it for the stages
  /// (which otherwise share the summary's list).
  @inlinable
  mutating func delete(_ id: Item.ID, at oldSection: Int, _ oldItem: Int, sectionSurvives: Bool, staged: Bool)
  {
    let change = ChangeList<Item.ID, ItemPosition>.Removal(
      id: id, from: ItemPosition(section: oldSection, item: oldItem))
    itemSummary.deletes.append(change)
    if sectionSurvives {
      if staged { stageItemDeletes.append(change) }
      oldSectionHasItemDeletes[oldSection] = true
    }
  }

  /// Records every new item without a match as inserted, in order; `staged` also lists them for the
  /// stages (which otherwise share the summary's list).
  @inlinable
  mutating func insertUnmatched(staged: Bool) {
    let new = target.sections
    let targetOffsets = target.itemOffsets
    for newSection in new.indices {
      let items = new[newSection].items
      let base = targetOffsets[newSection]
      let newSectionSurvives = newToOldSection[newSection] >= 0
      for newItem in items.indices where newMatch[base + newItem] == Self.none {
        let change = ChangeList<Item.ID, ItemPosition>.Insertion(
          id: items[newItem].id, to: ItemPosition(section: newSection, item: newItem))
        itemSummary.inserts.append(change)
        if newSectionSurvives {
          if staged { stageItemInserts.append(change) }
          newSectionHasInsertsOrMovesIn[newSection] = true
        }
      }
    }
  }

  /// Finds the minimal section and item moves: everything outside a longest increasing subsequence of
  /// old positions taken in new order, plus every item that changes section.
  @inlinable
  mutating func findMoves() {
    let new = target.sections
    var survivingNewSections = [Int]()
    var keys = [Int]()
    for newSection in new.indices where newToOldSection[newSection] >= 0 {
      survivingNewSections.append(newSection)
      keys.append(newToOldSection[newSection])
    }
    let sectionStays = longestIncreasingSubsequence(keys)
    for (rank, newSection) in survivingNewSections.enumerated() where !sectionStays[rank] {
      sectionSummary.moves.append(
        SectionChange(id: new[newSection].id, from: newToOldSection[newSection], to: newSection))
    }

    let targetOffsets = target.itemOffsets
    for newSection in survivingNewSections {
      let ownOldSection = newToOldSection[newSection]
      let items = new[newSection].items
      let base = targetOffsets[newSection]
      keys.removeAll(keepingCapacity: true)
      for newItem in items.indices {
        let match = newMatch[base + newItem]
        if match != Self.none, PackedPosition(raw: match).section == ownOldSection {
          keys.append(PackedPosition(raw: match).item)
        }
      }
      let itemStays = longestIncreasingSubsequence(keys)
      var rank = 0
      for newItem in items.indices {
        let match = newMatch[base + newItem]
        if match == Self.none { continue }
        let from = PackedPosition(raw: match)
        if from.section == ownOldSection {
          rank += 1
          if itemStays[rank - 1] { continue }
        }
        itemSummary.moves.append(
          ItemChange(
            id: items[newItem].id, from: from.position, to: ItemPosition(section: newSection, item: newItem)))
        oldSectionHasMovesOut[from.section] = true
        newSectionHasInsertsOrMovesIn[newSection] = true
      }
    }
  }

  /// Builds the stages: a refresh stage, then the structural changes in as few batches as R28 allows.
  ///
  /// Structural changes fall in three groups: deletes (D), section inserts and moves (S), item inserts
  /// and moves (I). Only a moved section makes two groups conflict (R28): D and S when it has item
  /// deletes, S and I when it has item inserts or moves. Groups that do not conflict share a batch, so
  /// there are one, two ([D][SI] or [DS][I]) or three structural stages.
  ///
  /// Without structural changes the refresh stage is the last one, and its state is `target` itself: the
  /// old shape is the new one, and every item not refreshed is equal to its new content.
  @inlinable
  func makeStages(target targetSnapshot: Snapshot<Section>) -> [ChangeStage<Section>] {
    var stages: [ChangeStage<Section>] = []
    let hasStructure =
      !sectionSummary.deletes.isEmpty || !sectionSummary.inserts.isEmpty || !sectionSummary.moves.isEmpty
      || !stageItemDeletes.isEmpty || !stageItemInserts.isEmpty || !itemSummary.moves.isEmpty
    if !sectionSummary.updates.isEmpty || !itemSummary.updates.isEmpty {
      stages.append(makeRefreshStage(state: hasStructure ? nil : targetSnapshot))
    }
    guard hasStructure else { return stages }
    let deletesConflict = sectionSummary.moves.contains { oldSectionHasItemDeletes[$0.from] }
    let itemsConflict = sectionSummary.moves.contains { move in
      oldSectionHasMovesOut[move.from] || newSectionHasInsertsOrMovesIn[move.to]
    }
    if !deletesConflict && !itemsConflict {
      stages.append(
        ChangeStage(
          kind: .structure,
          sectionChanges: ChangeList(
            deletes: sectionSummary.deletes, inserts: sectionSummary.inserts, moves: sectionSummary.moves),
          itemChanges: ChangeList(
            deletes: stageItemDeletes, inserts: stageItemInserts, moves: itemSummary.moves),
          data: target.sections))
    } else {
      stages.append(contentsOf: makeSplitStages(mergeDeletes: !deletesConflict, mergeItems: !itemsConflict))
    }
    return stages
  }

  /// The refresh stage: the old shape, with new contents for updated items and sections; its state is
  /// `state` when given (the caller knows it is that), else built from the old sections.
  @inlinable
  func makeRefreshStage(state: Snapshot<Section>?) -> ChangeStage<Section> {
    let sectionChanges = ChangeList(
      updates: sectionSummary.updates.map { SectionChange(id: $0.id, from: $0.from, to: $0.from) })
    let itemChanges = ChangeList(
      updates: itemSummary.updates.map { ItemChange(id: $0.id, from: $0.from, to: $0.from) })
    if let state {
      return ChangeStage(
        kind: .refresh, sectionChanges: sectionChanges, itemChanges: itemChanges, state: state)
    }
    var data = source.sections
    for update in sectionSummary.updates {
      var section = target.sections[update.to]
      section.items = data[update.from].items
      data[update.from] = section
    }
    for update in itemSummary.updates {
      let from = update.from
      data[from.section].items[from.item] = target[update.to]
    }
    return ChangeStage(kind: .refresh, sectionChanges: sectionChanges, itemChanges: itemChanges, data: data)
  }

  /// Deletes, section inserts and moves, and item inserts and moves in separate batches (S1 stages
  /// 2–4, S4), sharing a batch where `mergeDeletes` (D with S) or `mergeItems` (S with I) allows.
  @inlinable
  func makeSplitStages(mergeDeletes: Bool, mergeItems: Bool) -> [ChangeStage<Section>] {
    let old = source.sections
    let new = target.sections
    let sourceOffsets = source.itemOffsets
    // The carried items of each surviving old section, in old order with new contents, and each carried
    // item's index among them: the item's position once deletes are done.
    var carriedItems = [[Item]](repeating: [], count: old.count)
    var carriedRank = [Int](repeating: -1, count: source.itemCount)
    for oldSection in old.indices where oldToNewSection[oldSection] >= 0 {
      let base = sourceOffsets[oldSection]
      var items = [Item]()
      for oldItem in old[oldSection].items.indices where oldMatch[base + oldItem] != Self.none {
        carriedRank[base + oldItem] = items.count
        items.append(target[PackedPosition(raw: oldMatch[base + oldItem]).position])
      }
      carriedItems[oldSection] = items
    }
    // Section indices once deletes are done: the survivors in old order.
    var afterDeletesIndex = [Int](repeating: -1, count: old.count)
    var afterDeletes = [Section]()
    for oldSection in old.indices where oldToNewSection[oldSection] >= 0 {
      afterDeletesIndex[oldSection] = afterDeletes.count
      var section = new[oldToNewSection[oldSection]]
      section.items = carriedItems[oldSection]
      afterDeletes.append(section)
    }
    // Sections in final order once section inserts and moves are done; survivors hold carried items.
    var afterSections = new
    for newSection in new.indices where newToOldSection[newSection] >= 0 {
      afterSections[newSection].items = carriedItems[newToOldSection[newSection]]
    }

    let deletes = (sections: sectionSummary.deletes, items: stageItemDeletes)
    // Section moves start after the deletes, unless they share the deletes' batch.
    let sectionMoves =
      mergeDeletes
      ? sectionSummary.moves
      : sectionSummary.moves.map { SectionChange(id: $0.id, from: afterDeletesIndex[$0.from], to: $0.to) }
    // Item moves start after the section changes, or after the deletes when they share that batch.
    let itemMoves = itemSummary.moves.map { move in
      let from = move.from
      let section = mergeItems ? afterDeletesIndex[from.section] : oldToNewSection[from.section]
      return ItemChange(
        id: move.id,
        from: ItemPosition(section: section, item: carriedRank[sourceOffsets[from.section] + from.item]),
        to: move.to)
    }

    var stages: [ChangeStage<Section>] = []
    func append(
      _ kind: ChangeStage<Section>.Kind, _ sections: ChangeList<Section.ID, Int>,
      _ items: ChangeList<Item.ID, ItemPosition>, _ data: [Section]
    ) {
      if !sections.isEmpty || !items.isEmpty {
        stages.append(ChangeStage(kind: kind, sectionChanges: sections, itemChanges: items, data: data))
      }
    }
    if mergeDeletes {
      append(
        .structure,
        ChangeList(deletes: deletes.sections, inserts: sectionSummary.inserts, moves: sectionMoves),
        ChangeList(deletes: deletes.items), afterSections)
      append(.itemInsertsAndMoves, ChangeList(), ChangeList(inserts: stageItemInserts, moves: itemMoves), new)
    } else if mergeItems {
      append(
        .deletes, ChangeList(deletes: deletes.sections), ChangeList(deletes: deletes.items), afterDeletes)
      append(
        .structure, ChangeList(inserts: sectionSummary.inserts, moves: sectionMoves),
        ChangeList(inserts: stageItemInserts, moves: itemMoves), new)
    } else {
      append(
        .deletes, ChangeList(deletes: deletes.sections), ChangeList(deletes: deletes.items), afterDeletes)
      append(
        .sectionInsertsAndMoves, ChangeList(inserts: sectionSummary.inserts, moves: sectionMoves),
        ChangeList(), afterSections)
      append(.itemInsertsAndMoves, ChangeList(), ChangeList(inserts: stageItemInserts, moves: itemMoves), new)
    }
    return stages
  }
}

extension PackedPosition {
  @inlinable
  init(raw: UInt64) { self.raw = raw }
}
