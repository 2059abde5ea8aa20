// The source applies a move the user made in a view, resolved by ids against its current data.

extension BasicDataSource {
  /// Moves the item where `move` says, resolved against the current data (``InteractiveMove/resolve(in:)-(Snapshot<Section>)``).
  /// - Returns: The version that includes the move (the current one if the item is already there).
  /// - Throws: ``DataSourceError`` if the item or its destination section is gone; nothing changes then.
  /// - Complexity: O(1) lookups in the source's index, plus the move itself.
  @discardableResult
  public func reorder(_ move: InteractiveMove<Section>) async throws(Error) -> Int {
    // Resolved in the write's turn: behind a prepared write, against the state it leaves.
    try await inTurn { () throws(Error) in
      var positions: [Item.ID: ItemPosition] = [:]
      for id in [move.itemID, move.predecessor, move.successor].compactMap({ $0 }) {
        positions[id] = try? store.position(ofItem: id)
      }
      let section = try? store.index(ofSection: move.destinationSectionID)
      let (from, to) = try move.place(
        from: positions[move.itemID], inSection: section,
        itemCount: section.map { store.itemCount(inSection: $0) }
      ) { positions[$0] }
      return try editNow { (transaction: inout Transaction<Section>) throws(Error) in
        try transaction.moveItem(at: from, to: to)
      }
    }
  }
}
