// A transaction over a snapshot held outside any source: the same edits and checks, a new value out.

extension Snapshot {
  /// The state after `body`'s edits: a ``Transaction`` over this snapshot, outside any source (a client
  /// that shows its own edits before a server has them, a test, a preview).
  ///
  /// ```swift
  /// let next = try held.applying { transaction in try transaction.moveItem("b", before: "a") }
  /// ```
  ///
  /// - Returns: The new state; this snapshot itself when no edit changed anything.
  /// - Throws: What `body` throws (an edit's ``DataSourceError`` for bad input); nothing is changed.
  /// - Complexity: O(*k* log *n*) for *k* item edits on a snapshot that has its persistent form (one made by
  ///   a source, or by this method); O(*n*) once to build it otherwise.
  @inlinable
  public func applying<Failure: Swift.Error>(
    _ body: (inout Transaction<Section>) throws(Failure) -> Void
  ) throws(Failure) -> Snapshot<Section> {
    var transaction = Transaction(store: SectionStore(trusted: self))
    try body(&transaction)
    return transaction.changed ? transaction.snapshot : self
  }

  /// The state with `body`'s edits made, and the ids of the items they touched (``Transaction`` logs them
  /// as a source does): `nil` when they inserted, deleted, moved or updated sections.
  /// - Complexity: As the edits, O(*k* log *n*) for *k* item edits.
  @inlinable
  package func applyingLogged<Failure: Swift.Error>(
    _ body: (inout Transaction<Section>) throws(Failure) -> Void
  ) throws(Failure) -> (snapshot: Snapshot<Section>, touched: Set<Item.ID>?) {
    var transaction = Transaction(store: SectionStore(trusted: self).withEmptyLog())
    try body(&transaction)
    guard transaction.changed else { return (self, []) }
    let touched = transaction.store.log.touching.map { $0.union(transaction.refreshing) }
    return (transaction.snapshot, touched)
  }
}
