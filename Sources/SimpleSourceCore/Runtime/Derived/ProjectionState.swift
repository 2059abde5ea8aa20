// The synchronous heart of a projected source: the parent's state, what is shown, and how a parent batch
// turns into a batch of what is shown.

/// A parent snapshot and its projection, and the pure steps that move them forward.
///
/// Nothing here awaits: ``ProjectedDataSource`` runs these steps on its own actor and publishes what they
/// return. A step that throws returns nothing and leaves the state as it was.
@usableFromInline
package struct ProjectionState<Section: SectionType>: Sendable {
  @usableFromInline typealias Item = Section.Item

  /// The rule.
  @usableFromInline var projection: Projection<Section>
  /// The parent's state that ``shown`` reflects (or, when not ``isCurrent``, the newest one seen).
  @usableFromInline var parent: Snapshot<Section>
  /// What is shown: every item the projection shows, before its ``Projection/rows``.
  @usableFromInline var shown: Snapshot<Section>
  /// What is published: ``shown``, or its ``Projection/rows`` when the projection has a window. Kept by
  /// ``windowing(_:after:)``, which every step that changes ``shown`` ends with.
  @usableFromInline package var published: Snapshot<Section>
  /// Sections that pass the section predicate but are hidden because none of their items is shown.
  @usableFromInline var hiddenEmpty: Set<Section.ID>
  /// Whether ``shown`` is the projection of ``parent``; `false` after an error kept an older projection.
  @usableFromInline var isCurrent: Bool

  /// Projects `parent` in full.
  /// - Complexity: O(*n*) predicate calls, and O(*n* log *n*) comparisons when sorting.
  @inlinable
  init(parent: Snapshot<Section>, projection: Projection<Section>) throws(ProjectionError) {
    let (sections, hiddenEmpty) = try Self.project(parent, with: projection)
    self.projection = projection
    self.parent = parent
    self.shown = Snapshot(trusted: sections)
    self.published = shown
    self.hiddenEmpty = hiddenEmpty
    self.isCurrent = true
    if let rows = projection.rows { published = Self.window(rows, of: shown, projection) }
  }

  /// The state with a new rule, and the change of what is shown: a full projection and a full diff.
  /// - Complexity: O(*n*) predicate calls (O(*n* log *n*) comparisons when sorting) and a full diff.
  @inlinable
  func replacingProjection(with projection: Projection<Section>) throws(ProjectionError) -> (
    Self, Changeset<Section>
  ) {
    var next = try Self(parent: parent, projection: projection)
    let changeset = Changeset(from: shown, to: next.shown)
    next.shown = changeset.isEmpty ? shown : next.shown
    return (next, changeset)
  }

  /// The state after the parent's batch `changeset` (from ``parent``), and the change of what is shown.
  ///
  /// By descent on the persistent shown list when the parent kept its sections
  /// (``applyingByDescent(_:)``): O(*k* log *n*) for *k* touched items. Otherwise derived from the batch
  /// over the arrays: the predicate and the order are asked only about the items the batch touched, and
  /// the items it did not touch are paired without hashing (``Changeset/init(from:to:touching:refreshing:)``).
  /// When the state is not current, or the batch does not start at ``parent``, it projects in full.
  ///
  /// - Complexity: O(*k*) predicate calls and O(*k* log *n*) for *k* touched items when the parent's
  ///   sections stay; otherwise O(*k*) predicate calls, O(*k* log *n*) comparisons and O(*n*) steps.
  @inlinable
  func applying(_ changeset: Changeset<Section>, startsAtParent: Bool) throws(ProjectionError) -> (
    Self, Changeset<Section>
  ) {
    let target = changeset.target
    guard isCurrent && startsAtParent else {
      var next = try Self(parent: target, projection: projection)
      let change = Changeset(from: shown, to: next.shown, refreshing: changeset.forcedRefreshes)
      if change.isEmpty { next.shown = shown }
      return (next, change)
    }
    if let result = try applyingByDescent(changeset) { return result }
    var touched = changeset.forcedRefreshes
    touched.formUnion(changeset.itemChanges.ids)
    // Touched items by section: item indices in the parent's new state and in what is shown now.
    var touchedInParent: [Int: [Int]] = [:]
    var touchedInShown: [Int: [Int]] = [:]
    var touchedSections = Set<Section.ID>()
    for id in touched {
      if let position = target.position(ofItem: id) {
        touchedInParent[position.section, default: []].append(position.item)
        touchedSections.insert(target.sections[position.section].id)
      }
      if let position = shown.position(ofItem: id) {
        touchedInShown[position.section, default: []].append(position.item)
      }
      if let position = parent.position(ofItem: id) {
        touchedSections.insert(parent.sections[position.section].id)
      }
    }

    var sections: [Section] = []
    sections.reserveCapacity(target.sections.count)
    var hiddenEmpty = Set<Section.ID>()
    for (sectionIndex, section) in target.sections.enumerated() {
      guard try Self.includes(section, projection) else { continue }
      let shownIndex = shown.index(ofSection: section.id)
      let previous =
        shownIndex.map { shown.sections[$0].items } ?? (self.hiddenEmpty.contains(section.id) ? [] : nil)
      var items: [Item]
      if let previous {
        if !touchedSections.contains(section.id) {
          items = previous
        } else {
          var parentFlags = [Bool](repeating: false, count: section.items.count)
          for index in touchedInParent[sectionIndex] ?? [] { parentFlags[index] = true }
          var shownFlags = [Bool](repeating: false, count: previous.count)
          for index in shownIndex.flatMap({ touchedInShown[$0] }) ?? [] { shownFlags[index] = true }
          items = try Self.update(
            previous, touched: shownFlags, in: section, parentTouched: parentFlags,
            sectionIndex: sectionIndex,
            parent: target, projection)
        }
      } else {
        items = try Self.projectItems(of: section, projection)
      }
      if items.isEmpty && projection.hidesEmptySections {
        hiddenEmpty.insert(section.id)
        continue
      }
      var shownSection = section
      shownSection.items = items
      sections.append(shownSection)
    }
    let next = Snapshot(trusted: sections, reindexing: shown)
    let change = Changeset(from: shown, to: next, touching: touched, refreshing: changeset.forcedRefreshes)
    var state = self
    state.parent = target
    state.shown = change.isEmpty ? shown : next
    state.hiddenEmpty = hiddenEmpty
    return (state, change)
  }

  /// The state after a batch whose projection failed: what is shown stays, and the next batch projects in
  /// full.
  @inlinable
  func skipping(to parent: Snapshot<Section>) -> Self {
    var state = self
    state.parent = parent
    state.isCurrent = false
    return state
  }

  // MARK: - Projecting

  /// Projects a whole snapshot: the shown sections, and the sections hidden for having no shown item.
  @inlinable
  static func project(_ parent: Snapshot<Section>, with projection: Projection<Section>)
    throws(ProjectionError)
    -> ([Section], Set<Section.ID>)
  {
    var sections: [Section] = []
    var hiddenEmpty = Set<Section.ID>()
    for section in parent.sections where try includes(section, projection) {
      var shownSection = section
      shownSection.items = try projectItems(of: section, projection)
      if shownSection.items.isEmpty && projection.hidesEmptySections {
        hiddenEmpty.insert(section.id)
      } else {
        sections.append(shownSection)
      }
    }
    return (sections, hiddenEmpty)
  }

  @inlinable
  static func includes(_ section: Section, _ projection: Projection<Section>) throws(ProjectionError) -> Bool
  {
    guard let isSectionIncluded = projection.isSectionIncluded else { return true }
    do {
      return try isSectionIncluded(section)
    } catch {
      throw ProjectionError(.sectionPredicateThrew, section: "\(section.id)", underlying: "\(error)")
    }
  }

  @inlinable
  static func includes(_ item: Item, in section: Section, _ projection: Projection<Section>)
    throws(ProjectionError)
    -> Bool
  {
    guard let isIncluded = projection.isIncluded else { return true }
    do {
      return try isIncluded(item)
    } catch {
      throw ProjectionError(
        .predicateThrew, section: "\(section.id)", item: "\(item.id)", underlying: "\(error)")
    }
  }

  /// The shown items of one section, filtered and sorted (stable: equivalent items keep parent order).
  @inlinable
  static func projectItems(of section: Section, _ projection: Projection<Section>) throws(ProjectionError)
    -> [Item]
  {
    var items: [Item]
    if let isIncluded = projection.isIncluded {
      items = []
      // Room for every item: growing the array step by step costs more than the predicate.
      items.reserveCapacity(section.items.count)
      for item in section.items {
        do {
          if try isIncluded(item) { items.append(item) }
        } catch {
          throw ProjectionError(
            .predicateThrew, section: "\(section.id)", item: "\(item.id)", underlying: "\(error)")
        }
      }
    } else {
      items = section.items
    }
    guard let order = projection.areInIncreasingOrder, items.count > 1 else { return items }
    var failure: ProjectionError?
    // Swift's sort is stable, so equivalent items keep the parent's order.
    items.sort { lhs, rhs in
      if failure != nil { return false }
      do {
        return try order(lhs, rhs)
      } catch {
        failure = ProjectionError(
          .orderThrew, section: "\(section.id)", item: "\(lhs.id)", underlying: "\(error)")
        return false
      }
    }
    if let failure { throw failure }
    try checkOrder(items, at: 0..<items.count, in: section, order)
    return items
  }

  /// Updates one section's shown items from the previous ones: `touched` marks the previous items the
  /// batch touched, `parentTouched` the touched items of the parent's new section.
  @inlinable
  static func update(
    _ previous: [Item], touched: [Bool], in section: Section, parentTouched: [Bool], sectionIndex: Int,
    parent: Snapshot<Section>, _ projection: Projection<Section>
  ) throws(ProjectionError) -> [Item] {
    let parentItems = section.items
    guard let order = projection.areInIncreasingOrder else {
      // Parent order: the untouched shown items are, in order, the untouched parent items that are shown.
      var items: [Item] = []
      items.reserveCapacity(previous.count + 8)
      var cursor = 0
      for index in parentItems.indices {
        let item = parentItems[index]
        if parentTouched[index] {
          if try includes(item, in: section, projection) { items.append(item) }
          continue
        }
        while cursor < previous.count && touched[cursor] { cursor += 1 }
        if cursor < previous.count && previous[cursor].id == item.id {
          items.append(item)
          cursor += 1
        }
      }
      return items
    }
    // Sorted: the untouched shown items keep their order; each touched item that is shown is inserted by
    // binary search, ties going by parent position.
    var kept: [Item] = []
    kept.reserveCapacity(previous.count)
    for index in previous.indices where !touched[index] { kept.append(previous[index]) }
    var additions: [(item: Item, parentIndex: Int)] = []
    for index in parentItems.indices where parentTouched[index] {
      let item = parentItems[index]
      if try includes(item, in: section, projection) { additions.append((item, index)) }
    }
    func before(_ lhs: Item, _ lhsIndex: Int, _ rhs: Item, _ rhsIndex: Int) throws(ProjectionError) -> Bool {
      do {
        if try order(lhs, rhs) { return true }
        if try order(rhs, lhs) { return false }
      } catch {
        throw ProjectionError(
          .orderThrew, section: "\(section.id)", item: "\(lhs.id)", underlying: "\(error)")
      }
      return lhsIndex < rhsIndex
    }
    func parentIndex(of item: Item) -> Int { parent.position(ofItem: item.id)?.item ?? 0 }
    // Sort the additions (few) by the same rule.
    var sortFailure: ProjectionError?
    additions.sort { lhs, rhs in
      do throws(ProjectionError) {
        return try before(lhs.item, lhs.parentIndex, rhs.item, rhs.parentIndex)
      } catch {
        sortFailure = sortFailure ?? error
        return false
      }
    }
    if let sortFailure { throw sortFailure }
    var items: [Item] = []
    items.reserveCapacity(kept.count + additions.count)
    var insertedAt: [Int] = []
    var low = 0
    for addition in additions {
      var high = kept.count
      var start = low
      while start < high {
        let middle = (start + high) / 2
        if try before(addition.item, addition.parentIndex, kept[middle], parentIndex(of: kept[middle])) {
          high = middle
        } else {
          start = middle + 1
        }
      }
      items.append(contentsOf: kept[low..<start])
      insertedAt.append(items.count)
      items.append(addition.item)
      low = start
    }
    items.append(contentsOf: kept[low...])
    for index in insertedAt {
      try checkOrder(items, at: max(0, index - 1)..<min(items.count, index + 2), in: section, order)
    }
    return items
  }

  /// Checks that `order` is consistent on `range` of sorted `items`: no item before itself, and no item
  /// before its predecessor.
  @inlinable
  static func checkOrder(
    _ items: [Item], at range: Range<Int>, in section: Section, _ order: (Item, Item) throws -> Bool
  ) throws(ProjectionError) {
    for index in range {
      do {
        let selfBefore = try order(items[index], items[index])
        let outOfOrder = index > range.lowerBound ? try order(items[index], items[index - 1]) : false
        if selfBefore || outOfOrder {
          throw ProjectionError(.invalidOrdering, section: "\(section.id)", item: "\(items[index].id)")
        }
      } catch let error as ProjectionError {
        throw error
      } catch {
        throw ProjectionError(
          .orderThrew, section: "\(section.id)", item: "\(items[index].id)", underlying: "\(error)")
      }
    }
  }
}
