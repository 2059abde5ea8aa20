// The editable state of a data source: sections plus an incremental id index, edited atomically.

/// The state of a data source and the log of what its edits touched, edited atomically.
///
/// The state is a ``Snapshot``. Whole replacements (``replacing(_:with:)``) keep its flat form; the first
/// item or section edit after one builds the persistent form (O(*n*), once), and from then on every edit
/// costs O(log *n*) for an item and O(*s* + log *n*) with *s* sections, sharing the rest with the snapshots
/// already published.
///
/// Every edit validates all its input before it changes anything, so a thrown error leaves the store
/// exactly as it was (G8). Every edit returns whether it changed anything (G4), and records in ``log``
/// the item ids it inserted, deleted, moved or replaced, or that it reshaped the sections (inserted,
/// deleted or moved one): the log a batch is derived from.
@usableFromInline
struct SectionStore<Section: SectionType>: Sendable {
  @usableFromInline typealias Item = Section.Item
  @usableFromInline typealias Error = DataSourceError<Section.ID, Item.ID>

  /// The current state: a snapshot after a whole replacement, the persistent form once edited. Keeping
  /// the form itself, not a snapshot of it, lets consecutive edits on one path change its nodes in place
  /// when no published snapshot holds them.
  @usableFromInline var state: State

  @usableFromInline
  enum State: Sendable {
    case snapshot(Snapshot<Section>)
    case tree(SnapshotTree<Section>)
    /// Only while an edit holds the tree (``editTree(_:)``) or the whole store (``vacant``): no second
    /// reference to its nodes is left behind, and leaving this costs nothing (an empty snapshot would be
    /// two allocations per edit).
    case vacant
  }

  /// The current state.
  /// - Complexity: O(1).
  @inlinable var snapshot: Snapshot<Section> {
    switch state {
    case .snapshot(let snapshot): snapshot
    case .tree(let tree): Snapshot(tree: tree)
    case .vacant: Self.vacantState()
    }
  }
  /// What edits touched since the log was last taken.
  @usableFromInline var log = EditLog<Item.ID>.nothing

  /// The store that replaces `current` with `sections`, validated, its log marked reshaped (the next
  /// batch is a full diff); `nil` when they are equal.
  ///
  /// When `current` has its flat form and `sections` keep every section and item id in place (only
  /// contents changed: a refresh of every row, or an `update { }` that edits items), the new snapshot
  /// shares the current index: no id is hashed. Otherwise the sections are indexed and validated anew.
  /// - Complexity: O(*n*): id comparisons when the ids stay in place, one hash per id otherwise.
  @inlinable
  static func replacing(_ current: Snapshot<Section>, with sections: [Section]) throws(Error) -> Self? {
    let snapshot: Snapshot<Section>
    if let shared = current.sharingIndex(with: sections) {
      snapshot = shared
    } else {
      snapshot = try Snapshot(sections)
    }
    if Snapshot.same(current.sections, sections) { return nil }
    var store = Self(trusted: snapshot)
    store.log = .reshaped
    return store
  }

  @inlinable
  init(trusted snapshot: Snapshot<Section>) { state = .snapshot(snapshot) }

  /// A store to leave in place of one an edit holds: it allocates nothing, and reading it stops.
  @inlinable static var vacant: Self { Self(state: .vacant) }

  @inlinable init(state: State) { self.state = state }

  /// The sections, with their items.
  /// - Complexity: O(1) after a whole replacement; O(*n*) the first time after edits.
  @inlinable var sections: [Section] { snapshot.sections }

  /// The number of sections.
  @inlinable var sectionCount: Int { read({ $0.sectionCount }, { $0.sectionCount }) }

  /// The number of items in the section at `index`.
  @inlinable func itemCount(inSection index: Int) -> Int {
    read({ $0.itemCount(inSection: index) }, { $0.itemCount(inSection: index) })
  }

  /// Reads the current state in whichever form it is, without making a snapshot of the tree.
  @inlinable func read<Result>(
    _ fromSnapshot: (Snapshot<Section>) -> Result, _ fromTree: (SnapshotTree<Section>) -> Result
  ) -> Result {
    Self.read(state, fromSnapshot, fromTree)
  }

  /// ``read(_:_:)`` on a state passed `borrowing`: the form is read in place. Switched over as a stored
  /// property instead, the tree's fields were copied out, retained and released, on every lookup: about a
  /// seventh of a one-item edit's time (Benchmarks/HISTORY.md).
  @inlinable static func read<Result>(
    _ state: borrowing State,
    _ fromSnapshot: (Snapshot<Section>) -> Result, _ fromTree: (SnapshotTree<Section>) -> Result
  ) -> Result {
    switch state {
    case .snapshot(let snapshot): fromSnapshot(snapshot)
    case .tree(let tree): fromTree(tree)
    case .vacant: Self.vacantState()
    }
  }

  /// Stops at a read of the state while an edit holds it, which no code path does.
  @inlinable static func vacantState() -> Never {
    preconditionFailure("SectionStore: the state was read while an edit held it")
  }

  /// The index of the section `id`, or `nil`.
  @inlinable func sectionIndex(_ id: Section.ID) -> Int? {
    read({ $0.index(ofSection: id) }, { $0.sectionIndexByID[id] })
  }

  /// The position of the item `id`, or `nil`.
  @inlinable func itemPosition(_ id: Item.ID) -> ItemPosition? {
    read({ $0.position(ofItem: id) }, { $0.position(ofItem: id) })
  }

  /// The current state as a snapshot that later reads return again (the same storage), until the next
  /// edit: what a source publishes and hands out.
  /// - Complexity: O(1).
  @inlinable
  mutating func settledSnapshot() -> Snapshot<Section> {
    let current = snapshot
    state = .snapshot(current)
    return current
  }

  /// Runs `change` on the persistent form and makes the result the state.
  @inlinable mutating func editTree<Result>(_ change: (inout SnapshotTree<Section>) -> Result) -> Result {
    var tree: SnapshotTree<Section>
    switch state {
    case .snapshot(let snapshot): tree = snapshot.tree
    case .tree(let current): tree = current
    case .vacant: Self.vacantState()
    }
    // Leave no second reference to the tree's nodes behind while it changes.
    state = .vacant
    let result = change(&tree)
    state = .tree(tree)
    return result
  }

  /// Takes the log of what edits touched since it was last taken, and starts a new one.
  /// - Complexity: O(1).
  @inlinable
  mutating func takeLog() -> EditLog<Item.ID> { log.take() }

  /// This store with an empty log: edits of the copy log only what they touch.
  /// - Complexity: O(1).
  @inlinable
  func withEmptyLog() -> Self {
    var copy = self
    copy.log = .nothing
    return copy
  }

  /// Makes `edited`'s state this store's, its log added to what this store logged since the log was
  /// last taken, as if its edits had been made here (a prepared write, applied).
  /// - Complexity: O(1) when either log is empty; otherwise O(*k*) for the *k* ids `edited` logged.
  @inlinable
  mutating func take(_ edited: Self) {
    var merged = log.take()
    merged.merge(edited.log)
    self = edited
    log = merged
  }

  // MARK: - Lookups

  @inlinable
  func index(ofSection id: Section.ID) throws(Error) -> Int {
    guard let index = sectionIndex(id) else { throw .unknownSection(id) }
    return index
  }

  /// The item's position.
  @inlinable
  func position(ofItem id: Item.ID) throws(Error) -> ItemPosition {
    guard let position = itemPosition(id) else { throw .unknownItem(id) }
    return position
  }

  /// Rejects `items` if an id repeats among them or already exists.
  /// `firstPosition` is where the first new item would land, for the error.
  @inlinable func checkNew(_ items: [Item], at firstPosition: ItemPosition) throws(Error) {
    var seen = [Item.ID: Int]()
    for (offset, item) in items.enumerated() {
      let landing = ItemPosition(section: firstPosition.section, item: firstPosition.item + offset)
      // One item cannot repeat itself: no table for it.
      if items.count > 1, let earlier = seen.updateValue(offset, forKey: item.id) {
        throw .duplicateItem(
          item.id, first: ItemPosition(section: firstPosition.section, item: firstPosition.item + earlier),
          second: landing)
      }
      if let existing = itemPosition(item.id) {
        // Where the existing item would stand once the new items were inserted before or after it.
        let shift =
          existing.section == firstPosition.section && existing.item >= firstPosition.item ? items.count : 0
        let shifted = ItemPosition(section: existing.section, item: existing.item + shift)
        throw .duplicateItem(item.id, first: shifted, second: landing)
      }
    }
  }

  // MARK: - Sections

  /// Inserts sections at `index` (0...count). Their ids and their items' ids must be new.
  @inlinable
  mutating func insertSections(_ newSections: [Section], at index: Int) throws(Error) -> Bool {
    guard (0...sectionCount).contains(index) else { throw .sectionOutOfRange(index) }
    var seenSections = [Section.ID: Int]()
    var seenItems = [Item.ID: ItemPosition]()
    for (offset, section) in newSections.enumerated() {
      if let earlier = seenSections.updateValue(index + offset, forKey: section.id) {
        throw .duplicateSection(section.id, first: earlier, second: index + offset)
      }
      // Existing sections at or after `index` would stand `newSections.count` further on.
      if let existing = sectionIndex(section.id) {
        let shifted = existing >= index ? existing + newSections.count : existing
        throw .duplicateSection(section.id, first: shifted, second: index + offset)
      }
      for (itemOffset, item) in section.items.enumerated() {
        let landing = ItemPosition(section: index + offset, item: itemOffset)
        if let earlier = seenItems.updateValue(landing, forKey: item.id) {
          throw .duplicateItem(item.id, first: earlier, second: landing)
        }
        if let existing = itemPosition(item.id) {
          let shift = existing.section >= index ? newSections.count : 0
          let shifted = ItemPosition(section: existing.section + shift, item: existing.item)
          throw .duplicateItem(item.id, first: shifted, second: landing)
        }
      }
    }
    if newSections.isEmpty { return false }
    editTree { $0.insertSections(newSections, at: index) }
    log.markReshaped()
    return true
  }

  @inlinable
  mutating func deleteSections(_ ids: [Section.ID]) throws(Error) -> Bool {
    var indices = Set<Int>()
    for id in ids { indices.insert(try index(ofSection: id)) }
    if indices.isEmpty { return false }
    editTree { tree in
      for index in indices.sorted(by: >) { tree.removeSection(at: index) }
    }
    log.markReshaped()
    return true
  }

  /// Moves a section so that it ends at `destination` (an index in the final list).
  @inlinable
  mutating func moveSection(_ id: Section.ID, to destination: Int) throws(Error) -> Bool {
    let source = try index(ofSection: id)
    guard (0..<sectionCount).contains(destination) else { throw .sectionOutOfRange(destination) }
    if source == destination { return false }
    editTree { $0.moveSection(from: source, to: destination) }
    log.markReshaped()
    return true
  }

  /// Moves a section before or after another one.
  @inlinable
  mutating func moveSection(_ id: Section.ID, relativeTo other: Section.ID, after: Bool) throws(Error) -> Bool
  {
    let source = try index(ofSection: id)
    let anchor = try index(ofSection: other)
    if id == other {
      throw Error(code: .moveRelativeToItself, sectionID: id, sectionIndices: [source])
    }
    // The anchor's index once the moved section is out of the way.
    let anchorAfterRemoval = anchor > source ? anchor - 1 : anchor
    return try moveSection(id, to: anchorAfterRemoval + (after ? 1 : 0))
  }

  // MARK: - Items

  /// Inserts items at `position` (item in 0...count of that section).
  @inlinable
  mutating func insertItems(_ items: [Item], at position: ItemPosition) throws(Error) -> Bool {
    guard (0..<sectionCount).contains(position.section) else { throw .sectionOutOfRange(position.section) }
    guard (0...itemCount(inSection: position.section)).contains(position.item) else {
      throw .itemOutOfRange(position)
    }
    try checkNew(items, at: position)
    if items.isEmpty { return false }
    editTree { tree in
      for (offset, item) in items.enumerated() {
        tree.insertItem(item, at: ItemPosition(section: position.section, item: position.item + offset))
      }
    }
    log.formUnion(items.lazy.map(\.id))
    return true
  }

  @inlinable
  mutating func deleteItems(_ ids: [Item.ID]) throws(Error) -> Bool {
    var positions = Set<ItemPosition>()
    for id in ids { positions.insert(try position(ofItem: id)) }
    if positions.isEmpty { return false }
    let removed = editTree { tree in positions.sorted(by: >).map { tree.removeItem(at: $0).id } }
    log.formUnion(removed)
    return true
  }

  /// Moves the item at `source` so that it ends at `destination` (a position in the final list), as a
  /// table view's interactive reordering reports it.
  @inlinable
  mutating func moveItem(at source: ItemPosition, to destination: ItemPosition) throws(Error) -> Bool {
    guard (0..<sectionCount).contains(source.section) else { throw .sectionOutOfRange(source.section) }
    guard (0..<itemCount(inSection: source.section)).contains(source.item) else {
      throw .itemOutOfRange(source)
    }
    guard (0..<sectionCount).contains(destination.section) else {
      throw .sectionOutOfRange(destination.section)
    }
    let finalCount =
      itemCount(inSection: destination.section) - (source.section == destination.section ? 1 : 0)
    guard (0...finalCount).contains(destination.item) else { throw .itemOutOfRange(destination) }
    if source == destination { return false }
    let moved = editTree { tree in
      let item = tree.removeItem(at: source)
      tree.insertItem(item, at: destination)
      return item.id
    }
    log.insert(moved)
    return true
  }

  /// Moves an item before or after another item.
  @inlinable
  mutating func moveItem(_ id: Item.ID, relativeTo other: Item.ID, after: Bool) throws(Error) -> Bool {
    let source = try position(ofItem: id)
    var anchor = try position(ofItem: other)
    if id == other { throw Error(code: .moveRelativeToItself, itemID: id, positions: [source]) }
    if anchor.section == source.section && anchor.item > source.item { anchor.item -= 1 }
    anchor.item += after ? 1 : 0
    return try moveItem(at: source, to: anchor)
  }

  /// Moves an item to the end of a section.
  @inlinable
  mutating func moveItem(_ id: Item.ID, toSection sectionID: Section.ID) throws(Error) -> Bool {
    let source = try position(ofItem: id)
    let section = try index(ofSection: sectionID)
    let end = itemCount(inSection: section) - (section == source.section ? 1 : 0)
    return try moveItem(at: source, to: ItemPosition(section: section, item: end))
  }

  /// Replaces the item with the same id. Returns `false` when the new value is equal.
  @inlinable
  mutating func replaceItem(_ item: Item) throws(Error) -> Bool {
    try updateItem(item.id) { $0 = item }
  }

  /// Reads the item `id`, lets `body` change it, and stores the result. Returns `false` when it is equal.
  /// - Throws: ``DataSourceErrorCode/unknownItemID``, or ``DataSourceErrorCode/changedItemID`` when `body`
  ///   changed the id; nothing is stored then.
  @inlinable
  mutating func updateItem(_ id: Item.ID, _ body: (inout Item) -> Void) throws(Error) -> Bool {
    let found = read(
      { snapshot in snapshot.position(ofItem: id).map { ($0, snapshot[$0]) } }, { $0.locate(id) })
    guard let (position, current) = found else { throw .unknownItem(id) }
    var item = current
    body(&item)
    guard item.id == id else { throw Error(code: .changedItemID, itemID: id, positions: [position]) }
    if current == item { return false }
    editTree { $0.replaceItem(at: position, with: item) }
    log.insert(id)
    return true
  }

  /// Replaces a section's own content (header, footer), keeping its items. Returns whether it changed.
  @inlinable
  mutating func replaceSectionContent(_ section: Section) throws(Error) -> Bool {
    let index = try index(ofSection: section.id)
    if read({ $0.sectionContent(at: index) }, { $0.entries[index].header }).isContentEqual(to: section) {
      return false
    }
    editTree { $0.replaceSectionContent(at: index, with: section) }
    return true
  }

  /// The ids among `ids` that exist; throws for the first unknown one.
  @inlinable
  func checkExisting(_ ids: some Sequence<Item.ID>) throws(Error) -> Set<Item.ID> {
    var result = Set<Item.ID>()
    for id in ids {
      guard read({ $0.contains(item: id) }, { $0.contains(item: id) }) else { throw .unknownItem(id) }
      result.insert(id)
    }
    return result
  }
}
