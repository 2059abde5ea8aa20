// The mutations a SimpleSource or diffable-data-source user expects, each atomic with typed errors.

extension BasicDataSource {
  // Every method here is atomic: it validates all its input first and, if it throws, leaves the source
  // exactly as it was (G8). Each returns the version after it: unchanged when it changed nothing (G4).
  // Each takes its turn behind a prepared write that holds the source, and throws
  // ``DataSourceErrorCode/cancelled``, making nothing, when its task is cancelled while it waits.

  // MARK: - Sections

  /// Replaces every section.
  /// - Throws: ``DataSourceError`` for duplicate section or item ids.
  /// - Complexity: O(*n*). When `sections` keep every section and item id of the current state in place
  ///   (only contents changed), the new state shares the current id index and the batch pairs items by
  ///   position: id comparisons and `==`, no hashing. Sections that share their items' storage with the
  ///   current state's (an unedited copy) cost O(1).
  @inlinable
  @discardableResult
  public func setSections(_ sections: [Section]) async throws(Error) -> Version {
    try await inTurn { () throws(Error) in
      try replaceAll(store.snapshot, with: sections)
      return stamped(publishing.version)
    }
  }

  /// Appends sections at the end.
  /// - Throws: ``DataSourceError`` when a section or item id already exists or repeats.
  @inlinable
  @discardableResult
  public nonisolated func appendSections(_ sections: [Section]) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.appendSections(sections)
    }
  }

  /// Inserts sections before the section with id `anchor`.
  /// - Throws: ``DataSourceError`` for an unknown `anchor`, or ids that exist or repeat.
  @inlinable
  @discardableResult
  public nonisolated func insertSections(_ sections: [Section], before anchor: Section.ID) async throws(Error)
    -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.insertSections(sections, before: anchor)
    }
  }

  /// Inserts sections after the section with id `anchor`.
  /// - Throws: ``DataSourceError`` for an unknown `anchor`, or ids that exist or repeat.
  @inlinable
  @discardableResult
  public nonisolated func insertSections(_ sections: [Section], after anchor: Section.ID) async throws(Error)
    -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.insertSections(sections, after: anchor)
    }
  }

  /// Deletes the sections with the given ids, and their items. An id listed twice is deleted once.
  /// - Throws: ``DataSourceErrorCode/unknownSectionID`` for the first unknown id.
  @inlinable
  @discardableResult
  public nonisolated func deleteSections(_ ids: [Section.ID]) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.deleteSections(ids)
    }
  }

  /// Moves a section to just before another.
  /// - Throws: ``DataSourceError`` for unknown ids, or ``DataSourceErrorCode/moveRelativeToItself``.
  @inlinable
  @discardableResult
  public nonisolated func moveSection(_ id: Section.ID, before anchor: Section.ID) async throws(Error)
    -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.moveSection(id, before: anchor)
    }
  }

  /// Moves a section to just after another.
  /// - Throws: ``DataSourceError`` for unknown ids, or ``DataSourceErrorCode/moveRelativeToItself``.
  @inlinable
  @discardableResult
  public nonisolated func moveSection(_ id: Section.ID, after anchor: Section.ID) async throws(Error)
    -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.moveSection(id, after: anchor)
    }
  }

  /// Moves a section so that it ends at `index`.
  /// - Throws: ``DataSourceError`` for an unknown id or an index out of range.
  @inlinable
  @discardableResult
  public nonisolated func moveSection(_ id: Section.ID, to index: Int) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.moveSection(id, to: index)
    }
  }

  /// Replaces a section's own content (its header and footer), keeping its items.
  /// - Throws: ``DataSourceErrorCode/unknownSectionID`` when no section has `section.id`.
  @inlinable
  @discardableResult
  public nonisolated func updateSection(_ section: Section) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.updateSection(section)
    }
  }

  // MARK: - Items

  /// Appends items at the end of a section.
  /// - Throws: ``DataSourceError`` for an unknown section, or item ids that exist or repeat.
  @inlinable
  @discardableResult
  public nonisolated func appendItems(_ items: [Item], toSection id: Section.ID) async throws(Error)
    -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.appendItems(items, toSection: id)
    }
  }

  /// Inserts items just before the item with id `anchor`, in its section.
  /// - Throws: ``DataSourceError`` for an unknown `anchor`, or item ids that exist or repeat.
  @inlinable
  @discardableResult
  public nonisolated func insertItems(_ items: [Item], before anchor: Item.ID) async throws(Error) -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.insertItems(items, before: anchor)
    }
  }

  /// Inserts items just after the item with id `anchor`, in its section.
  /// - Throws: ``DataSourceError`` for an unknown `anchor`, or item ids that exist or repeat.
  @inlinable
  @discardableResult
  public nonisolated func insertItems(_ items: [Item], after anchor: Item.ID) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.insertItems(items, after: anchor)
    }
  }

  /// Deletes the items with the given ids. An id listed twice is deleted once.
  /// - Throws: ``DataSourceErrorCode/unknownItemID`` for the first unknown id.
  @inlinable
  @discardableResult
  public nonisolated func deleteItems(_ ids: [Item.ID]) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.deleteItems(ids)
    }
  }

  /// Replaces the item that has the same id.
  /// - Throws: ``DataSourceErrorCode/unknownItemID`` when no item has `item.id`.
  @inlinable
  @discardableResult
  public nonisolated func replaceItem(_ item: Item) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.replaceItem(item)
    }
  }

  /// Reads the item `id`, lets `body` change it, and stores the result, as one step: no other writer
  /// comes between the read and the write.
  ///
  /// ```swift
  /// try await source.updateItem("grace") { $0.title = "Director" }
  /// ```
  ///
  /// - Returns: The new version, or the current one when `body` left the item equal (G4).
  /// - Throws: ``DataSourceErrorCode/unknownItemID`` when no item has `id`;
  ///   ``DataSourceErrorCode/changedItemID`` when `body` changed the item's id. The source is left as it
  ///   was (G8).
  /// - Complexity: O(log *n*) to find the item, plus `body`.
  @inlinable
  @discardableResult
  public nonisolated func updateItem(_ id: Item.ID, _ body: @Sendable (inout Item) -> Void)
    async throws(Error) -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.updateItem(id, body)
    }
  }

  /// Moves an item to just before another, in that item's section.
  /// - Throws: ``DataSourceError`` for unknown ids, or ``DataSourceErrorCode/moveRelativeToItself``.
  @inlinable
  @discardableResult
  public nonisolated func moveItem(_ id: Item.ID, before anchor: Item.ID) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.moveItem(id, before: anchor)
    }
  }

  /// Moves an item to just after another, in that item's section.
  /// - Throws: ``DataSourceError`` for unknown ids, or ``DataSourceErrorCode/moveRelativeToItself``.
  @inlinable
  @discardableResult
  public nonisolated func moveItem(_ id: Item.ID, after anchor: Item.ID) async throws(Error) -> Version {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.moveItem(id, after: anchor)
    }
  }

  /// Moves an item to the end of a section.
  /// - Throws: ``DataSourceError`` for an unknown item or section.
  @inlinable
  @discardableResult
  public nonisolated func moveItem(_ id: Item.ID, toSection section: Section.ID) async throws(Error)
    -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.moveItem(id, toSection: section)
    }
  }

  /// Moves the item at `source` so that it ends at `destination`, as interactive reordering reports it:
  /// `destination` is a position in the list after the move.
  /// - Throws: ``DataSourceErrorCode/sectionIndexOutOfRange`` or
  ///   ``DataSourceErrorCode/itemIndexOutOfRange`` naming the bad index.
  @inlinable
  @discardableResult
  public nonisolated func moveItem(at source: ItemPosition, to destination: ItemPosition) async throws(Error)
    -> Version
  {
    try await applyEdit { (transaction: inout Transaction<Section>) throws(Error) in
      try transaction.moveItem(at: source, to: destination)
    }
  }
}

extension BasicDataSource {
  /// Runs one validated edit from outside the actor, as ``edit(_:)``; the item and section conveniences
  /// call this one.
  ///
  /// It is `nonisolated` so that the client's build specialises the closure it hands to ``apply(_:)``:
  /// everything an edit does then runs specialised, and the generic actor method only hands it the
  /// state and counts the version.
  @inlinable
  @discardableResult
  nonisolated func applyEdit(_ change: @Sendable (inout Transaction<Section>) throws(Error) -> Bool)
    async throws(Error) -> Version
  {
    stamped(
      try await apply { (store, refreshing) throws(Error) in
        try Transaction.run(change, on: &store, refreshing: &refreshing)
      })
  }
}
