// A batch read as edits addressed by id, for storage kept outside the package: a dictionary with an
// order by neighbours, a table with an order column.

/// Where an item goes: after an item, or first in a section. Both name ids, so that storage that keeps
/// its order by neighbours (a linked list in a dictionary) or by an order key finds the place in O(1) or
/// O(log *n*), not by counting positions.
public enum ItemPlace<SectionID: Hashable & Sendable, ItemID: Hashable & Sendable>: Hashable, Sendable,
  CustomStringConvertible
{
  /// Right after this item, in its section.
  case after(ItemID)
  /// First in this section.
  case first(in: SectionID)

  /// `after 7`, `first in A`.
  public var description: String {
    switch self {
    case .after(let id): "after \(id)"
    case .first(let section): "first in \(section)"
    }
  }
}

/// One change of a batch, addressed by id: what storage kept outside the package does to follow it.
///
/// ``UpdateBatch/edits`` lists a batch's edits in an order that storage can apply one at a time, each
/// against the state the ones before it left, and that ends at ``UpdateBatch/snapshot``:
///
/// 1. ``deleteItem(_:)`` for every item that is gone (those of deleted sections too).
/// 2. ``insertSection(_:after:)`` and ``moveSection(_:after:)``, in the new order of sections; each names
///    the section it follows, which is in place by then (`nil`: first).
/// 3. ``updateSection(_:)`` for every section whose own content changed.
/// 4. ``insertItem(_:at:)`` and ``moveItem(_:to:)``, in the new order of items, each at a place that is in
///    place by then. The items of an inserted section come here, as inserts.
/// 5. ``updateItem(_:)`` for every surviving item whose content changed.
/// 6. ``deleteSection(_:)`` for every section that is gone: it holds no item by then.
///
/// Sections and items the batch did not name keep their order, so the places are all a copy needs.
public enum BatchEdit<Section: SectionType>: Sendable {
  /// The item type.
  public typealias Item = Section.Item
  /// Where an item goes.
  public typealias Place = ItemPlace<Section.ID, Item.ID>

  /// The item with this id is gone.
  case deleteItem(Item.ID)
  /// A new section, its own content only (`items` empty: its items follow as ``insertItem(_:at:)``),
  /// after the section with this id, or first.
  case insertSection(Section, after: Section.ID?)
  /// The section with this id moves after the section with the other id, or first; its items move with it.
  case moveSection(Section.ID, after: Section.ID?)
  /// The section's own content changed (`items` empty: its items are not part of this edit).
  case updateSection(Section)
  /// A new item, at a place.
  case insertItem(Item, at: Place)
  /// The item with this id moves to a place (in its section, or in another).
  case moveItem(Item.ID, to: Place)
  /// The item's content changed; it stays where it is.
  case updateItem(Item)
  /// The section with this id is gone; its items were deleted or moved out before.
  case deleteSection(Section.ID)
}

extension BatchEdit: Equatable where Section: Equatable {}

extension BatchEdit: CustomStringConvertible {
  /// `insert 7 after 3`, `delete section B`.
  public var description: String {
    switch self {
    case .deleteItem(let id): "delete \(id)"
    case .insertSection(let section, let after):
      "insert section \(section.id) after \(after.map { "\($0)" } ?? "nothing")"
    case .moveSection(let id, let after): "move section \(id) after \(after.map { "\($0)" } ?? "nothing")"
    case .updateSection(let section): "update section \(section.id)"
    case .insertItem(let item, let place): "insert \(item.id) \(place)"
    case .moveItem(let id, let place): "move \(id) \(place)"
    case .updateItem(let item): "update \(item.id)"
    case .deleteSection(let id): "delete section \(id)"
    }
  }
}

extension UpdateBatch {
  /// The batch as edits addressed by id, in an order storage can apply one at a time (see ``BatchEdit``):
  /// a copy kept in a dictionary with an order by neighbours, or in a table with an order column, follows
  /// the batch in O(*k*) of its own operations.
  ///
  /// ```swift
  /// for await batch in subscription.batches {
  ///   for edit in batch.edits { store.apply(edit) }
  /// }
  /// ```
  ///
  /// The edits are made once per batch and shared by every subscriber that reads them: the source makes
  /// them off its actor when its history keeps versions (it keeps them too), the first reader otherwise.
  ///
  /// - Complexity: O(1) when they are made already; otherwise O(*k* log *n*) for the *k* sections and
  ///   items the batch names (the items of inserted and deleted sections included) in a snapshot of *n*
  ///   items: each place is the previous element in ``snapshot``, found by position. Nothing is read per
  ///   untouched item or section, and no item is looked up by id unless the batch inserts or deletes a
  ///   section.
  @inlinable
  public var edits: [BatchEdit<Section>] {
    if let made = storage.shared.withLock({ $0.edits }) { return made }
    // Two readers racing may both make them; the first stored is kept, and both are the same.
    let made = changeset.edits
    return storage.shared.withLock { shared in
      if let edits = shared.edits { return edits }
      shared.edits = made
      return made
    }
  }

  /// Keeps `edits`, the batch's ``edits`` made by the source for its history, for every subscriber that
  /// reads them.
  /// - Complexity: O(1).
  @inlinable
  package func keep(_ edits: [BatchEdit<Section>]) {
    storage.shared.withLock { shared in
      if shared.edits == nil { shared.edits = edits }
    }
  }
}

extension Changeset {
  /// The change as edits addressed by id; see ``UpdateBatch/edits``.
  /// - Complexity: O(*k* log *n*).
  @inlinable
  public var edits: [BatchEdit<Section>] {
    var edits: [BatchEdit<Section>] = []
    edits.reserveCapacity(itemChanges.count + sectionChanges.count)
    // Only an item whose old section is deleted or whose new section is inserted is listed both as deleted
    // and as inserted (it survives): with no section deleted or inserted, a delete is a delete and an
    // insert an insert, and neither is looked up by id.
    let reshaped = !sectionChanges.inserts.isEmpty || !sectionChanges.deletes.isEmpty
    // 1. Items gone. One that survives is moved in step 4.
    for removal in itemChanges.deletes where !reshaped || !target.contains(item: removal.id) {
      edits.append(.deleteItem(removal.id))
    }
    // 2. Sections placed, in their new order: inserts and moves are each sorted by their new index.
    var inserts = sectionChanges.inserts[...]
    var moves = sectionChanges.moves[...]
    while inserts.first != nil || moves.first != nil {
      let isInsert = moves.first.map { move in inserts.first.map { $0.to < move.to } ?? false } ?? true
      let index = isInsert ? inserts.removeFirst().to : moves.removeFirst().to
      let after = index == 0 ? nil : target.sectionContent(at: index - 1).id
      if isInsert {
        edits.append(.insertSection(Self.header(target.sectionContent(at: index)), after: after))
      } else {
        edits.append(.moveSection(target.sectionContent(at: index).id, after: after))
      }
    }
    // 3. Section contents.
    for update in sectionChanges.updates {
      edits.append(.updateSection(Self.header(target.sectionContent(at: update.to))))
    }
    // 4. Items placed, in their new order: inserts (the items of inserted sections among them) and moves,
    // each sorted by their new position.
    var itemInserts = itemChanges.inserts[...]
    var changedAcross: [Item] = []
    var itemMoves = itemChanges.moves[...]
    while itemInserts.first != nil || itemMoves.first != nil {
      let isInsert =
        itemMoves.first.map { move in itemInserts.first.map { $0.to < move.to } ?? false } ?? true
      let id: Item.ID
      let position: ItemPosition
      if isInsert {
        let insert = itemInserts.removeFirst()
        (id, position) = (insert.id, insert.to)
      } else {
        let move = itemMoves.removeFirst()
        (id, position) = (move.id, move.to)
      }
      let place: BatchEdit<Section>.Place =
        position.item == 0
        ? .first(in: target.sectionContent(at: position.section).id)
        : .after(target[ItemPosition(section: position.section, item: position.item - 1)].id)
      if !isInsert {
        edits.append(.moveItem(id, to: place))
      } else if reshaped, let old = source.item(withID: id) {
        // Deleted and inserted for UIKit, but it survives: moved, and updated when it changed (the
        // summary lists no update for it).
        edits.append(.moveItem(id, to: place))
        if old != target[position] { changedAcross.append(target[position]) }
      } else {
        edits.append(.insertItem(target[position], at: place))
      }
    }
    // 5. Item contents.
    for update in itemChanges.updates { edits.append(.updateItem(target[update.to])) }
    for item in changedAcross { edits.append(.updateItem(item)) }
    // 6. Sections gone, empty by now.
    for removal in sectionChanges.deletes { edits.append(.deleteSection(removal.id)) }
    return edits
  }

  /// A section's own content: `items` empty.
  @inlinable static func header(_ section: Section) -> Section {
    var header = section
    header.items = []
    return header
  }
}

extension Changeset {
  /// What a retained history keeps of this change to rebuild its target later: its ``edits``; `nil` when
  /// it named about as much as the list holds (the history keeps the snapshot then).
  /// - Complexity: O(*k* log *n*) for the *k* sections and items it names; O(1) when `nil`.
  @inlinable
  var historyEdits: [BatchEdit<Section>]? {
    let named =
      itemChanges.inserts.count + itemChanges.deletes.count + itemChanges.moves.count
      + itemChanges.updates.count + sectionChanges.inserts.count + sectionChanges.deletes.count
      + sectionChanges.moves.count + sectionChanges.updates.count
    return named * 2 > target.itemCount + target.sectionCount ? nil : edits
  }
}

extension Snapshot {
  /// The state `edits` lead to from this one, each made in turn as storage outside the package makes
  /// it (see ``BatchEdit``): how a history rebuilds a version it keeps as edits.
  /// - Throws: The ``DataSourceError`` of the first edit that does not apply (a place or id this state does
  ///   not have).
  /// - Complexity: O(*e* log *n*) for *e* item edits in a snapshot of *n* items that has its persistent
  ///   form (O(*n*) once to build it otherwise); a section edit costs O(*s* + log *n*) with *s* sections.
  @inlinable
  func applying(_ edits: [BatchEdit<Section>]) throws(DataSourceError<Section.ID, Item.ID>) -> Snapshot {
    if edits.isEmpty { return self }
    var store = SectionStore(trusted: self)
    for edit in edits {
      switch edit {
      case .deleteItem(let id): _ = try store.deleteItems([id])
      case .insertSection(let header, let after):
        let index = try after.map { (id) throws(DataSourceError<Section.ID, Item.ID>) in
          try store.index(ofSection: id) + 1
        }
        _ = try store.insertSections([header], at: index ?? 0)
      case .moveSection(let id, after: .some(let anchor)):
        _ = try store.moveSection(id, relativeTo: anchor, after: true)
      case .moveSection(let id, after: .none): _ = try store.moveSection(id, to: 0)
      case .updateSection(let header): _ = try store.replaceSectionContent(header)
      case .insertItem(let item, at: .after(let anchor)):
        var position = try store.position(ofItem: anchor)
        position.item += 1
        _ = try store.insertItems([item], at: position)
      case .insertItem(let item, at: .first(let section)):
        _ = try store.insertItems(
          [item], at: ItemPosition(section: try store.index(ofSection: section), item: 0))
      case .moveItem(let id, to: .after(let anchor)):
        _ = try store.moveItem(id, relativeTo: anchor, after: true)
      case .moveItem(let id, to: .first(let section)):
        let source = try store.position(ofItem: id)
        _ = try store.moveItem(
          at: source, to: ItemPosition(section: try store.index(ofSection: section), item: 0))
      case .updateItem(let item): _ = try store.replaceItem(item)
      case .deleteSection(let id): _ = try store.deleteSections([id])
      }
    }
    return store.settledSnapshot()
  }
}
