// One stage's changes with the content a receiver needs, applied to a snapshot only once every change is checked.

/// The changes of one ``ChangeStage`` named by id and position, with the content of every placed or
/// refreshed section and item: what a receiver that does not hold the sender's snapshot applies to its own
/// (the wire's `WireStage` is its encoded form).
///
/// Deletes, move sources and updates are positions before the stage; inserts and move destinations are
/// positions after it (UIKit's rules R1–R3). An inserted section carries its items; a refreshed section
/// carries its own content, and its items are kept.
@usableFromInline
package struct StagePatch<Section: SectionType> {
  @usableFromInline package typealias Item = Section.Item

  @usableFromInline package var sectionDeletes: [(id: Section.ID, at: Int)]
  @usableFromInline package var sectionInserts: [(at: Int, section: Section)]
  @usableFromInline package var sectionMoves: [(id: Section.ID, from: Int, to: Int)]
  @usableFromInline package var sectionUpdates: [(at: Int, section: Section)]
  @usableFromInline package var itemDeletes: [(id: Item.ID, at: ItemPosition)]
  @usableFromInline package var itemInserts: [(at: ItemPosition, item: Item)]
  @usableFromInline package var itemMoves: [(id: Item.ID, from: ItemPosition, to: ItemPosition)]
  @usableFromInline package var itemUpdates: [(at: ItemPosition, item: Item)]

  @inlinable
  package init(
    sectionDeletes: [(id: Section.ID, at: Int)], sectionInserts: [(at: Int, section: Section)],
    sectionMoves: [(id: Section.ID, from: Int, to: Int)], sectionUpdates: [(at: Int, section: Section)],
    itemDeletes: [(id: Item.ID, at: ItemPosition)], itemInserts: [(at: ItemPosition, item: Item)],
    itemMoves: [(id: Item.ID, from: ItemPosition, to: ItemPosition)],
    itemUpdates: [(at: ItemPosition, item: Item)]
  ) {
    self.sectionDeletes = sectionDeletes
    self.sectionInserts = sectionInserts
    self.sectionMoves = sectionMoves
    self.sectionUpdates = sectionUpdates
    self.itemDeletes = itemDeletes
    self.itemInserts = itemInserts
    self.itemMoves = itemMoves
    self.itemUpdates = itemUpdates
  }

  /// The patch of `stage`, its contents read from the stage's state.
  /// - Complexity: O(*k* log *n*) for *k* changes, plus the size of inserted sections.
  @inlinable
  package init(_ stage: ChangeStage<Section>) {
    let state = stage.state
    let sections = stage.sectionChanges
    let items = stage.itemChanges
    self.init(
      sectionDeletes: sections.deletes.map { ($0.id, $0.from) },
      sectionInserts: sections.inserts.map { ($0.to, state.section(at: $0.to)) },
      sectionMoves: sections.moves.map { ($0.id, $0.from, $0.to) },
      sectionUpdates: sections.updates.map { change in
        var content = state.sectionContent(at: change.to)
        content.items = []
        return (change.to, content)
      },
      itemDeletes: items.deletes.map { ($0.id, $0.from) },
      itemInserts: items.inserts.map { ($0.to, state[$0.to]) },
      itemMoves: items.moves.map { ($0.id, $0.from, $0.to) },
      itemUpdates: items.updates.map { ($0.to, state[$0.to]) })
  }

  /// Whether the stage changes nothing.
  @inlinable package var isEmpty: Bool {
    sectionDeletes.isEmpty && sectionInserts.isEmpty && sectionMoves.isEmpty && sectionUpdates.isEmpty
      && itemDeletes.isEmpty && itemInserts.isEmpty && itemMoves.isEmpty && itemUpdates.isEmpty
  }

  /// Whether the stage deletes, inserts or moves sections.
  @inlinable package var reshapes: Bool {
    !sectionDeletes.isEmpty || !sectionInserts.isEmpty || !sectionMoves.isEmpty
  }
}

/// Why a ``StagePatch`` does not apply to a snapshot: the first problem found, before anything was made.
@usableFromInline
package struct StagePatchProblem: Error, Sendable {
  @usableFromInline
  package enum Kind: Sendable {
    /// The stage changes nothing.
    case empty
    /// A position or index past the state it is applied to.
    case positionOutOfRange
    /// A position that holds another id than the one the change names.
    case idMismatch
    /// An id placed where the state already holds it, or one position named twice.
    case duplicateID
  }

  /// The kind of problem.
  @usableFromInline package let kind: Kind
  /// The index of the stage in its batch.
  @usableFromInline package let stage: Int
  /// What was wrong, naming the change, the id and the position: "item delete at [0, 3] names a but holds b".
  @usableFromInline package let detail: String

  @inlinable
  package init(_ kind: Kind, stage: Int, _ detail: String) {
    self.kind = kind
    self.stage = stage
    self.detail = detail
  }
}

extension Snapshot {
  /// Applies `stages` in order to this snapshot, checking every change against what the state holds before
  /// anything is made: a position out of range, a position that holds another id than the one named, an
  /// id placed where it is already held, one position named twice, an empty stage.
  ///
  /// - Returns: The new state; the ids of every item deleted, inserted, moved or refreshed; whether
  ///   sections were deleted, inserted or moved.
  /// - Throws: The first problem; this snapshot is a value and is never changed.
  /// - Complexity: O(*k* log *n*) for *k* changes, plus the size of sections placed; O(*n*) once when
  ///   this snapshot was made from arrays.
  @inlinable
  package func applyingChecked(_ stages: [StagePatch<Section>]) throws(StagePatchProblem) -> (
    snapshot: Snapshot, touched: Set<Section.Item.ID>, reshaped: Bool
  ) {
    var tree = self.tree
    var touched = Set<Section.Item.ID>()
    var reshaped = false
    for (index, stage) in stages.enumerated() {
      try tree.applyChecked(stage, stage: index, touched: &touched)
      reshaped = reshaped || stage.reshapes
    }
    return (Snapshot(tree: tree), touched, reshaped)
  }
}

extension SnapshotTree {
  /// Applies `patch` after checking every change; the tree is unchanged when it throws.
  ///
  /// Order: item removals (deletes and move sources, old coordinates), section removals, section
  /// placements in ascending new index, item placements in ascending new position, then refreshes. Each
  /// placement at its final index, in ascending order, leaves the earlier ones where they belong.
  @inlinable
  mutating func applyChecked(
    _ patch: StagePatch<Section>, stage: Int, touched: inout Set<Item.ID>
  ) throws(StagePatchProblem) {
    if patch.isEmpty { throw StagePatchProblem(.empty, stage: stage, "has no change") }
    var next = self
    let problem = { (kind: StagePatchProblem.Kind, detail: String) in
      StagePatchProblem(kind, stage: stage, detail)
    }

    // Item removals, in old coordinates, checked against what is there.
    var removedItems: [Item.ID: Item] = [:]
    var itemRemovals: [(position: ItemPosition, id: Item.ID, kind: String)] =
      patch.itemDeletes.map { ($0.at, $0.id, "item delete") }
    itemRemovals += patch.itemMoves.map { ($0.from, $0.id, "item move") }
    for removal in itemRemovals {
      try next.check(removal.position, holds: removal.id, problem: problem, what: removal.kind)
    }
    itemRemovals.sort { $0.position > $1.position }
    for (earlier, later) in zip(itemRemovals, itemRemovals.dropFirst())
    where earlier.position == later.position {
      throw problem(.duplicateID, "names the item at \(later.position) twice")
    }
    for removal in itemRemovals { removedItems[removal.id] = next.removeItem(at: removal.position) }

    // Section removals, in old coordinates.
    var sectionRemovals: [(index: Int, id: Section.ID, kind: String)] =
      patch.sectionDeletes.map { ($0.at, $0.id, "section delete") }
    sectionRemovals += patch.sectionMoves.map { ($0.from, $0.id, "section move") }
    for removal in sectionRemovals {
      guard removal.index >= 0, removal.index < next.sectionCount else {
        throw problem(
          .positionOutOfRange, "\(removal.kind) at \(removal.index): \(next.sectionCount) sections")
      }
      let held = next.entries[removal.index].header.id
      guard held == removal.id else {
        throw problem(
          .idMismatch, "\(removal.kind) at \(removal.index) names \(removal.id) but holds \(held)")
      }
    }
    sectionRemovals.sort { $0.index > $1.index }
    for (earlier, later) in zip(sectionRemovals, sectionRemovals.dropFirst())
    where earlier.index == later.index {
      throw problem(.duplicateID, "names the section at \(later.index) twice")
    }
    let movedIDs = Set(patch.sectionMoves.map(\.id))
    var movedSections: [Section.ID: Section] = [:]
    for removal in sectionRemovals {
      let section = next.removeSection(at: removal.index)
      if movedIDs.contains(removal.id) { movedSections[removal.id] = section }
    }

    // Section placements, in ascending new index.
    var sectionPlacements: [(index: Int, section: Section)] = patch.sectionInserts.map { ($0.at, $0.section) }
    for move in patch.sectionMoves {
      // Every moved id was removed above: its removal was checked against the id it names.
      guard let section = movedSections[move.id] else {
        preconditionFailure("SimpleSource: internal inconsistency")
      }
      sectionPlacements.append((move.to, section))
    }
    sectionPlacements.sort { $0.index < $1.index }
    for placement in sectionPlacements {
      guard placement.index >= 0, placement.index <= next.sectionCount else {
        throw problem(
          .positionOutOfRange, "section placed at \(placement.index): \(next.sectionCount) sections")
      }
      guard next.sectionIndexByID[placement.section.id] == nil else {
        throw problem(
          .duplicateID, "section \(placement.section.id) placed at \(placement.index) is already held")
      }
      var ids = Set<Item.ID>()
      for item in placement.section.items where next.contains(item: item.id) || !ids.insert(item.id).inserted
      {
        throw problem(.duplicateID, "item \(item.id) of section \(placement.section.id) is already held")
      }
      next.insertSections([placement.section], at: placement.index)
    }

    // Item placements, in ascending new position.
    var itemPlacements: [(position: ItemPosition, item: Item)] = patch.itemInserts.map { ($0.at, $0.item) }
    for move in patch.itemMoves {
      guard let item = removedItems[move.id] else {
        preconditionFailure("SimpleSource: internal inconsistency")
      }
      itemPlacements.append((move.to, item))
    }
    itemPlacements.sort { $0.position < $1.position }
    for (earlier, later) in zip(itemPlacements, itemPlacements.dropFirst())
    where earlier.position == later.position {
      throw problem(.positionOutOfRange, "places two items at \(later.position)")
    }
    for placement in itemPlacements {
      let position = placement.position
      guard position.section >= 0, position.section < next.sectionCount, position.item >= 0,
        position.item <= next.itemCount(inSection: position.section)
      else { throw problem(.positionOutOfRange, "item placed at \(position) is out of range") }
      guard !next.contains(item: placement.item.id) else {
        throw problem(.duplicateID, "item \(placement.item.id) placed at \(position) is already held")
      }
      next.insertItem(placement.item, at: position)
    }

    // Refreshes: same position before and after.
    for update in patch.sectionUpdates {
      guard update.at >= 0, update.at < next.sectionCount else {
        throw problem(.positionOutOfRange, "section update at \(update.at): \(next.sectionCount) sections")
      }
      let held = next.entries[update.at].header.id
      guard held == update.section.id else {
        throw problem(
          .idMismatch, "section update at \(update.at) names \(update.section.id) but holds \(held)")
      }
      next.replaceSectionContent(at: update.at, with: update.section)
    }
    for update in patch.itemUpdates {
      try next.check(update.at, holds: update.item.id, problem: problem, what: "item update")
      next.replaceItem(at: update.at, with: update.item)
    }

    for id in removedItems.keys { touched.insert(id) }
    for insert in patch.itemInserts { touched.insert(insert.item.id) }
    for update in patch.itemUpdates { touched.insert(update.item.id) }
    self = next
  }

  /// Throws unless `position` is in range and holds `id`.
  @inlinable
  func check(
    _ position: ItemPosition, holds id: Item.ID,
    problem: (StagePatchProblem.Kind, String) -> StagePatchProblem, what: String
  ) throws(StagePatchProblem) {
    guard position.section >= 0, position.section < sectionCount, position.item >= 0,
      position.item < itemCount(inSection: position.section)
    else { throw problem(.positionOutOfRange, "\(what) at \(position) is out of range") }
    let held = item(at: position).id
    guard held == id else {
      throw problem(.idMismatch, "\(what) at \(position) names \(id) but holds \(held)")
    }
  }
}
