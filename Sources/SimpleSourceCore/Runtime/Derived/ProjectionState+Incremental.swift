// A parent batch applied to what is shown in O(k log n): the touched items are taken out of the persistent
// shown list and put back where the projection places them, by descent; nothing else is visited.

extension ProjectionState {
  /// The state after the parent's batch `changeset`, when the batch kept the parent's sections (ids and
  /// order; their own content may change) and no section's inclusion flips: the shown persistent tree is
  /// edited, and the batch of what is shown is derived from the touched ids.
  ///
  /// Each touched item that was shown is removed; each that is in the parent's new state and passes the
  /// projection is placed by descent on its shown section: in the parent's order (comparing parent
  /// positions) or in the projection's (ties by parent position). Where it was shown before is tried first,
  /// so an edited item that stays in place costs two comparisons, not a search.
  ///
  /// - Returns: `nil` when the batch inserts, deletes or moves parent sections, or a section update flips
  ///   whether the section is shown: the section path handles those.
  /// - Complexity: O(*k*) predicate calls and O(*k* log *n*) for *k* touched items: one descent per removal
  ///   and insertion, and O(log *n*) comparisons per item that does not stay where it was (O(1) for one
  ///   that does), each tie or unsorted comparison one parent lookup. When a section is shown or hidden
  ///   for becoming non-empty or empty, the batch of what is shown is computed by
  ///   ``Changeset/init(from:to:touching:refreshing:)``, O(*n*) integer steps.
  @inlinable
  func applyingByDescent(_ changeset: Changeset<Section>) throws(ProjectionError) -> (
    Self, Changeset<Section>
  )? {
    let sectionChanges = changeset.sectionChanges
    guard !sectionChanges.hasStructuralChanges else { return nil }
    let target = changeset.target
    var tree = shown.tree
    var hiddenEmpty = self.hiddenEmpty
    var reshaped = false
    for update in sectionChanges.updates {
      let section = target.sectionContent(at: update.to)
      let shownIndex = tree.sectionIndexByID[section.id]
      if projection.isSectionIncluded != nil {
        let wasIncluded = shownIndex != nil || hiddenEmpty.contains(section.id)
        if try Self.includes(section, projection) != wasIncluded { return nil }
      }
      if let shownIndex { tree.replaceSectionContent(at: shownIndex, with: section) }
    }

    let items = changeset.itemChanges
    let structural = items.structuralIDs
    var touched = structural
    for update in items.updates { touched.insert(update.id) }

    // Items the parent only edited that stay shown where they are: replaced in place.
    let (settled, included) = try replacingInPlace(items.updates, besides: structural, of: target, in: &tree)

    // Take every other touched shown item out, from the last position back so that the others stay valid;
    // remember where each was among the items that stay, to try that place first.
    var removed: [(id: Item.ID, position: ItemPosition)] = []
    for id in touched where !settled.contains(id) {
      if let position = tree.position(ofItem: id) { removed.append((id, position)) }
    }
    removed.sort { ($0.position.section, $0.position.item) < ($1.position.section, $1.position.item) }
    var hints: [Item.ID: (section: Section.ID, index: Int)] = [:]
    var emptied = Set<Section.ID>()
    var removedBefore = 0
    for (offset, entry) in removed.enumerated() {
      if offset > 0 && removed[offset - 1].position.section != entry.position.section { removedBefore = 0 }
      let sectionID = tree.entries[entry.position.section].header.id
      hints[entry.id] = (sectionID, entry.position.item - removedBefore)
      emptied.insert(sectionID)
      removedBefore += 1
    }
    for entry in removed.reversed() { tree.removeItem(at: entry.position) }

    // Put back each touched item the projection shows, in the parent's order.
    var placed: [(item: Item, position: ItemPosition)] = []
    for id in touched where !settled.contains(id) {
      if let position = target.position(ofItem: id) { placed.append((target[position], position)) }
    }
    placed.sort { ($0.position.section, $0.position.item) < ($1.position.section, $1.position.item) }
    for (item, parentPosition) in placed {
      let section = target.sectionContent(at: parentPosition.section)
      var sectionIndex = tree.sectionIndexByID[section.id]
      if sectionIndex == nil && !hiddenEmpty.contains(section.id) { continue }  // not shown
      let isIncluded: Bool
      if let known = included[item.id] {
        isIncluded = known
      } else {
        isIncluded = try Self.includes(item, in: section, projection)
      }
      guard isIncluded else { continue }
      if sectionIndex == nil {
        // A hidden empty section gets its first shown item: show it where the parent has it.
        var index = 0
        for before in 0..<parentPosition.section
        where tree.sectionIndexByID[target.sectionContent(at: before).id] != nil {
          index += 1
        }
        var header = section
        header.items = []
        tree.insertSections([header], at: index)
        hiddenEmpty.remove(section.id)
        sectionIndex = index
        reshaped = true
      }
      guard let sectionIndex else { continue }
      // Where it was first (an edit that keeps its place), then, in the parent's order, right after its
      // shown parent neighbour (an insert, or a move however far): both O(1) lookups when they fit.
      let wasAt = hints[item.id].flatMap { $0.section == section.id ? $0.index : nil }
      let sortsByParent = projection.areInIncreasingOrder == nil
      let index = try place(
        item, parentIndex: parentPosition.item, in: tree.entries[sectionIndex].items, hint: wasAt,
        fallbackHint: sortsByParent
          ? { afterShownNeighbour(of: parentPosition, in: target, shown: tree) } : nil,
        section: section, parent: target)
      tree.insertItem(item, at: ItemPosition(section: sectionIndex, item: index))
    }

    if projection.hidesEmptySections {
      for id in emptied {
        guard let index = tree.sectionIndexByID[id], tree.itemCount(inSection: index) == 0 else { continue }
        tree.removeSection(at: index)
        hiddenEmpty.insert(id)
        reshaped = true
      }
    }

    let next = Snapshot(tree: tree)
    let refreshing = changeset.forcedRefreshes.filter { tree.contains(item: $0) }
    let change =
      (reshaped ? nil : Changeset(from: shown, to: next, logged: touched, refreshing: refreshing))
      ?? Changeset(from: shown, to: next, touching: touched, refreshing: refreshing)
    var state = self
    state.parent = target
    state.shown = change.isEmpty ? shown : next
    state.hiddenEmpty = hiddenEmpty
    return (state, change)
  }

  /// Replaces in `tree` each item the parent only edited (no delete, insert or move) that is shown, stays
  /// shown, and stays in place: in the parent's order always (the parent kept it among the items it did
  /// not move), in the projection's when it still sorts between its neighbours and those are final
  /// (untouched, or replaced before it).
  /// - Returns: The ids replaced (the others are removed and placed by the caller), and whether the
  ///   projection includes each edited item it asked about.
  /// - Complexity: O(*u* log *n*) for *u* edited items: one predicate call and, when sorting, two
  ///   comparisons each.
  @inlinable
  func replacingInPlace(
    _ updates: [Change<Item.ID, ItemPosition>], besides structural: Set<Item.ID>,
    of target: Snapshot<Section>,
    in tree: inout SnapshotTree<Section>
  ) throws(ProjectionError) -> (settled: Set<Item.ID>, included: [Item.ID: Bool]) {
    var settled = Set<Item.ID>()
    var included: [Item.ID: Bool] = [:]
    guard !updates.isEmpty else { return (settled, included) }
    var edited = Set<Item.ID>()
    for update in updates where !structural.contains(update.id) { edited.insert(update.id) }
    for update in updates where edited.contains(update.id) {
      guard let position = tree.position(ofItem: update.id) else { continue }
      let to = update.to
      let item = target[to]
      let section = target.sectionContent(at: to.section)
      let isIncluded = try Self.includes(item, in: section, projection)
      included[update.id] = isIncluded
      guard isIncluded else { continue }
      if projection.areInIncreasingOrder != nil {
        let items = tree.entries[position.section].items
        /// A neighbour is final when the batch did not touch it, or replaced it already.
        func isFinal(_ index: Int) -> Bool {
          guard index >= 0 && index < items.count else { return true }
          let id = items[index].value.id
          return settled.contains(id) || (!structural.contains(id) && !edited.contains(id))
        }
        let (previous, next) = (position.item - 1, position.item + 1)
        guard isFinal(previous), isFinal(next),
          try fits(
            item, parentIndex: to.item, after: previous >= 0 ? items[previous].value : nil,
            before: next < items.count ? items[next].value : nil, section: section, parent: target)
        else { continue }
        try checkOrder(
          item, after: previous >= 0 ? items[previous].value : nil,
          before: next < items.count ? items[next].value : nil, section: section)
      }
      tree.replaceItem(at: position, with: item)
      settled.insert(update.id)
    }
    return (settled, included)
  }

  /// For a projection in the parent's order: the index right after the nearest of the few parent items
  /// before `position` that is shown, or 0 when `position` starts its section; `nil` when none of them is
  /// shown. Items before it are final when items are placed in the parent's order (untouched, or placed
  /// already), so this is where the item goes; ``place(_:parentIndex:in:hint:fallbackHint:section:parent:)`` checks.
  /// - Complexity: O(log *n*) descents and at most four id lookups in `shown`.
  @inlinable
  func afterShownNeighbour(
    of position: ItemPosition, in parent: Snapshot<Section>, shown: SnapshotTree<Section>
  ) -> Int? {
    if position.item == 0 { return 0 }
    for index in stride(from: position.item - 1, through: max(0, position.item - 4), by: -1) {
      let neighbour = parent[ItemPosition(section: position.section, item: index)]
      if let found = shown.position(ofItem: neighbour.id) { return found.item + 1 }
    }
    return nil
  }

  /// Where `item` goes in `items` (a shown section, in the projection's order): `hint` when it fits there,
  /// else `fallbackHint()` when that fits, else found by binary search. Checks that the order is a strict
  /// weak ordering around the place.
  /// - Complexity: O(1) comparisons when it fits at a hint, O(log *n*) otherwise; each comparison that
  ///   needs the parent's order (no sort, or a tie) looks one item up in `parent`.
  @inlinable
  func place(
    _ item: Item, parentIndex: Int, in items: PersistentList<Labeled<Item>>, hint: Int?,
    fallbackHint: (() -> Int?)?, section: Section, parent: Snapshot<Section>
  ) throws(ProjectionError) -> Int {
    func fitsAt(_ hint: Int?) throws(ProjectionError) -> Bool {
      guard let hint, hint >= 0 && hint <= items.count else { return false }
      return try fits(
        item, parentIndex: parentIndex, after: hint > 0 ? items[hint - 1].value : nil,
        before: hint < items.count ? items[hint].value : nil, section: section, parent: parent)
    }
    let index: Int
    if let hint, try fitsAt(hint) {
      index = hint
    } else if let fallback = fallbackHint?(), fallback != hint, try fitsAt(fallback) {
      index = fallback
    } else {
      var (low, high) = (0, items.count)
      while low < high {
        let middle = (low + high) / 2
        if try comes(
          item, parentIndex: parentIndex, before: items[middle].value, section: section, parent: parent)
        {
          high = middle
        } else {
          low = middle + 1
        }
      }
      index = low
    }
    try checkOrder(
      item, after: index > 0 ? items[index - 1].value : nil,
      before: index < items.count ? items[index].value : nil, section: section)
    return index
  }

  /// Whether `item` sorts after `previous` and before `next` (a missing one does not constrain it).
  @inlinable
  func fits(
    _ item: Item, parentIndex: Int, after previous: Item?, before next: Item?, section: Section,
    parent: Snapshot<Section>
  ) throws(ProjectionError) -> Bool {
    if let previous,
      try comes(item, parentIndex: parentIndex, before: previous, section: section, parent: parent)
    {
      return false
    }
    if let next, try !comes(item, parentIndex: parentIndex, before: next, section: section, parent: parent) {
      return false
    }
    return true
  }

  /// Whether `item` (at `parentIndex` in its parent section) is shown before `other`: by the projection's
  /// order, ties and an unsorted projection by parent position (one lookup of `other` in `parent`).
  @inlinable
  func comes(
    _ item: Item, parentIndex: Int, before other: Item, section: Section, parent: Snapshot<Section>
  ) throws(ProjectionError) -> Bool {
    if let order = projection.areInIncreasingOrder {
      do {
        if try order(item, other) { return true }
        if try order(other, item) { return false }
      } catch {
        throw ProjectionError(
          .orderThrew, section: "\(section.id)", item: "\(item.id)", underlying: "\(error)")
      }
    }
    return parentIndex < (parent.position(ofItem: other.id)?.item ?? 0)
  }

  /// Checks that the order is a strict weak ordering where `item` lands: it is not before itself, and
  /// neither neighbour contradicts its place.
  @inlinable
  func checkOrder(_ item: Item, after previous: Item?, before next: Item?, section: Section)
    throws(ProjectionError)
  {
    guard let order = projection.areInIncreasingOrder else { return }
    do {
      var contradicted = try order(item, item)
      if !contradicted, let previous { contradicted = try order(item, previous) }
      if !contradicted, let next { contradicted = try order(next, item) }
      if contradicted {
        throw ProjectionError(.invalidOrdering, section: "\(section.id)", item: "\(item.id)")
      }
    } catch let error as ProjectionError {
      throw error
    } catch {
      throw ProjectionError(.orderThrew, section: "\(section.id)", item: "\(item.id)", underlying: "\(error)")
    }
  }
}
