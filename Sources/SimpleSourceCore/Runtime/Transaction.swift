// A transaction: a sequence of recorded edits that become the next state of a source as one step.

/// Edits of a ``BasicDataSource``'s state that become its next version together, each recorded so the
/// batch is derived from what they touched (see ``BasicDataSource/transaction(_:)->_``).
///
/// The edits are those of ``BasicDataSource``, with the same validation and typed errors; each returns
/// whether it changed anything. An edit that throws changes nothing, and when the error leaves the body
/// the whole transaction is dropped. ``snapshot`` is the state so far, for reading as you go. A direct
/// transaction whose task was cancelled while it waited for its turn behind a prepared write
/// (``PreparedWrite``) makes nothing: every edit throws ``DataSourceErrorCode/cancelled``.
///
/// ```swift
/// try await source.transaction { transaction in
///   try transaction.replaceItem(updated)
///   try transaction.moveItem(updated.id, before: first)
///   try transaction.deleteItems(expired)
/// }
/// ```
///
/// SwiftUI has a `Transaction` too: in a file that imports SwiftUI, name this one
/// `SimpleSource.Transaction` (or `SimpleSourceCore.Transaction`).
///
/// - Complexity: Each item edit is O(log *n*) (amortised for inserts), each section edit O(*s* + log *n*)
///   plus O(log *n*) per item of an inserted or deleted section. A transaction of *k* item edits costs
///   O(*k* log *n*) to make and to publish, however large the source.
public struct Transaction<Section: SectionType>: Sendable {
  /// The item type.
  public typealias Item = Section.Item
  /// The error every edit throws for bad input.
  public typealias Error = DataSourceError<Section.ID, Item.ID>

  @usableFromInline var store: SectionStore<Section>
  /// Items to refresh although `==` saw no change (``refreshItems(_:)``).
  @usableFromInline var refreshing = Set<Item.ID>()
  /// Whether an edit changed something (or asked for a refresh).
  @usableFromInline var changed = false
  /// Why every edit is refused, if one is: the task was cancelled while it waited for its turn
  /// (``DataSourceErrorCode/cancelled``).
  @usableFromInline let refusal: DataSourceErrorCode?

  @inlinable
  init(store: SectionStore<Section>, refusal: DataSourceErrorCode? = nil) {
    self.store = store
    self.refusal = refusal
  }

  /// The state with the edits made so far.
  /// - Complexity: O(1).
  @inlinable public var snapshot: Snapshot<Section> { store.snapshot }

  /// Runs `change` as a transaction of its own on `store`, in place: one edit that throws changes nothing
  /// (G8), so it may edit the store itself, moved out of `store` (which is vacant meanwhile), and its
  /// nodes change in place unless a published snapshot holds them. Adds its refreshes to `refreshing`;
  /// returns whether it changed something.
  @inlinable
  static func run(
    _ change: (inout Transaction) throws(Error) -> Bool, on store: inout SectionStore<Section>,
    refreshing: inout Set<Item.ID>
  ) throws(Error) -> Bool {
    var transaction = Transaction(store: .vacant)
    swap(&transaction.store, &store)
    defer { swap(&transaction.store, &store) }
    guard try change(&transaction) else { return false }
    if !transaction.refreshing.isEmpty { refreshing.formUnion(transaction.refreshing) }
    return true
  }

  /// Runs `body` on a copy of this transaction, keeps its edits when it returns, and returns the ids of
  /// the items it touched: `nil` when it inserted, deleted, moved or updated sections. What it throws
  /// leaves this transaction as it was.
  /// - Complexity: `body`'s edits, and O(*k*) to add the *k* ids it touched to this transaction's log.
  @inlinable
  package mutating func logging<Failure: Swift.Error>(
    _ body: (inout Transaction) throws(Failure) -> Void
  ) throws(Failure) -> Set<Item.ID>? {
    var inner = Transaction(store: store.withEmptyLog(), refusal: refusal)
    try body(&inner)
    let touched = inner.store.log.touching.map { $0.union(inner.refreshing) }
    store.take(inner.store)
    refreshing.formUnion(inner.refreshing)
    changed = changed || inner.changed
    return touched
  }

  @inlinable
  mutating func record(_ edit: (inout SectionStore<Section>) throws(Error) -> Bool) throws(Error) -> Bool {
    if let refusal { throw Error(code: refusal) }
    let didChange = try edit(&store)
    changed = changed || didChange
    return didChange
  }

  // MARK: - Sections

  /// Appends sections at the end; see ``BasicDataSource/appendSections(_:)``.
  @discardableResult
  @inlinable public mutating func appendSections(_ sections: [Section]) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.insertSections(sections, at: store.sectionCount)
    }
  }

  /// Inserts sections before another; see ``BasicDataSource/insertSections(_:before:)``.
  @discardableResult
  @inlinable public mutating func insertSections(_ sections: [Section], before anchor: Section.ID)
    throws(Error) -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.insertSections(sections, at: store.index(ofSection: anchor))
    }
  }

  /// Inserts sections after another; see ``BasicDataSource/insertSections(_:after:)``.
  @discardableResult
  @inlinable public mutating func insertSections(_ sections: [Section], after anchor: Section.ID)
    throws(Error) -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.insertSections(sections, at: store.index(ofSection: anchor) + 1)
    }
  }

  /// Deletes sections; see ``BasicDataSource/deleteSections(_:)``.
  @discardableResult
  @inlinable public mutating func deleteSections(_ ids: [Section.ID]) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in try store.deleteSections(ids) }
  }

  /// Moves a section before another; see ``BasicDataSource/moveSection(_:before:)``.
  @discardableResult
  @inlinable public mutating func moveSection(_ id: Section.ID, before anchor: Section.ID) throws(Error)
    -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.moveSection(id, relativeTo: anchor, after: false)
    }
  }

  /// Moves a section after another; see ``BasicDataSource/moveSection(_:after:)``.
  @discardableResult
  @inlinable public mutating func moveSection(_ id: Section.ID, after anchor: Section.ID) throws(Error)
    -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.moveSection(id, relativeTo: anchor, after: true)
    }
  }

  /// Moves a section to an index; see ``BasicDataSource/moveSection(_:to:)``.
  @discardableResult
  @inlinable public mutating func moveSection(_ id: Section.ID, to index: Int) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in try store.moveSection(id, to: index) }
  }

  /// Replaces a section's own content; see ``BasicDataSource/updateSection(_:)``.
  @discardableResult
  @inlinable public mutating func updateSection(_ section: Section) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.replaceSectionContent(section)
    }
  }

  // MARK: - Items

  /// Appends items to a section; see ``BasicDataSource/appendItems(_:toSection:)``.
  @discardableResult
  @inlinable public mutating func appendItems(_ items: [Item], toSection id: Section.ID) throws(Error) -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      let section = try store.index(ofSection: id)
      return try store.insertItems(
        items, at: ItemPosition(section: section, item: store.itemCount(inSection: section)))
    }
  }

  /// Inserts items before another; see ``BasicDataSource/insertItems(_:before:)``.
  @discardableResult
  @inlinable public mutating func insertItems(_ items: [Item], before anchor: Item.ID) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.insertItems(items, at: store.position(ofItem: anchor))
    }
  }

  /// Inserts items after another; see ``BasicDataSource/insertItems(_:after:)``.
  @discardableResult
  @inlinable public mutating func insertItems(_ items: [Item], after anchor: Item.ID) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      var position = try store.position(ofItem: anchor)
      position.item += 1
      return try store.insertItems(items, at: position)
    }
  }

  /// Deletes items; see ``BasicDataSource/deleteItems(_:)``.
  @discardableResult
  @inlinable public mutating func deleteItems(_ ids: [Item.ID]) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in try store.deleteItems(ids) }
  }

  /// Replaces the item with the same id; see ``BasicDataSource/replaceItem(_:)``.
  @discardableResult
  @inlinable public mutating func replaceItem(_ item: Item) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in try store.replaceItem(item) }
  }

  /// Changes the item `id` in place; see ``BasicDataSource/updateItem(_:_:)``.
  @discardableResult
  @inlinable public mutating func updateItem(_ id: Item.ID, _ body: (inout Item) -> Void) throws(Error)
    -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in try store.updateItem(id, body) }
  }

  /// Moves an item before another; see ``BasicDataSource/moveItem(_:before:)``.
  @discardableResult
  @inlinable public mutating func moveItem(_ id: Item.ID, before anchor: Item.ID) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.moveItem(id, relativeTo: anchor, after: false)
    }
  }

  /// Moves an item after another; see ``BasicDataSource/moveItem(_:after:)``.
  @discardableResult
  @inlinable public mutating func moveItem(_ id: Item.ID, after anchor: Item.ID) throws(Error) -> Bool {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.moveItem(id, relativeTo: anchor, after: true)
    }
  }

  /// Moves an item to the end of a section; see ``BasicDataSource/moveItem(_:toSection:)``.
  @discardableResult
  @inlinable public mutating func moveItem(_ id: Item.ID, toSection section: Section.ID) throws(Error) -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.moveItem(id, toSection: section)
    }
  }

  /// Moves the item at a position; see ``BasicDataSource/moveItem(at:to:)``.
  @discardableResult
  @inlinable public mutating func moveItem(at source: ItemPosition, to destination: ItemPosition)
    throws(Error) -> Bool
  {
    try record { (store: inout SectionStore<Section>) throws(Error) in
      try store.moveItem(at: source, to: destination)
    }
  }

  /// Makes `target` the state: this transaction's state with the item edits that touched the ids of
  /// `touched` made, or with its sections reshaped when `touched` is `nil`, and `refreshing` refreshed.
  /// For a layer that checked that `target` follows from ``snapshot`` that way (the wire's checked apply
  /// of a batch); nothing here checks it again.
  /// - Complexity: O(*k*) for the *k* ids touched.
  @inlinable
  package mutating func adopt(_ target: Snapshot<Section>, touched: Set<Item.ID>?, refreshing: Set<Item.ID>)
    throws(Error)
  {
    if let refusal { throw Error(code: refusal) }
    var log = store.takeLog()
    log.merge(EditLog(touching: touched))
    store = SectionStore(trusted: target)
    store.log = log
    self.refreshing.formUnion(refreshing)
    changed = true
  }

  /// Refreshes items whose `==` did not change, in the transaction's batch; see
  /// ``BasicDataSource/refreshItems(_:)``.
  @discardableResult
  @inlinable public mutating func refreshItems(_ ids: some Sequence<Item.ID>) throws(Error) -> Bool {
    if let refusal { throw Error(code: refusal) }
    let existing = try store.checkExisting(ids)
    refreshing.formUnion(existing)
    changed = changed || !existing.isEmpty
    return !existing.isEmpty
  }
}
