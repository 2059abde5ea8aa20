// What a view data source calls to apply a move the user made; BasicDataSource is one.

public import SimpleSourceCore

/// Applies the moves users make in views to the data: set one as a view data source's
/// ``ListViewDataSource/reorderingDelegate`` to enable interactive reordering.
///
/// `BasicDataSource` is one, so enabling reordering is one line:
///
/// ```swift
/// viewDataSource.reorderingDelegate = employees   // a BasicDataSource
/// ```
///
/// Bring your own for other sources: make the change that puts the item where the move says (use
/// ``InteractiveMove/resolve(in:)-(Snapshot<Section>)``), and return a version of your source that includes it.
public protocol ReorderingDelegate<Section>: Sendable {
  /// The section type of the data.
  associatedtype Section: SectionType

  /// Applies a move the user made.
  /// - Returns: A version of the source the view follows that includes the move. Until the view receives
  ///   it, the view keeps showing the move over every batch it applies, so the item does not jump back and
  ///   forth. A version of another counter is taken as a failure (``VersionError``): the view could never
  ///   tell when it arrived.
  /// - Throws: Any error; the view then shows the source as it is, without the move.
  func reorder(_ move: InteractiveMove<Section>) async throws -> Version
}

/// `BasicDataSource` applies moves with ``BasicDataSource/reorder(_:)``.
extension BasicDataSource: ReorderingDelegate {
  /// Moves the item where `move` says, resolved against the current data
  /// (``InteractiveMove/resolve(in:)-(Snapshot<Section>)``), in the write's turn: behind a prepared
  /// write, against the state it leaves.
  /// - Returns: The version that includes the move (the current one if the item is already there).
  /// - Throws: ``DataSourceError`` if the item or its destination section is gone; nothing changes then.
  /// - Complexity: O(log *n*): lookups in the source's index, plus the move itself.
  @discardableResult
  public func reorder(_ move: InteractiveMove<Section>) async throws(Error) -> Version {
    try await transaction { (transaction: inout Transaction<Section>) throws(Error) in
      let (from, to) = try move.resolve(in: transaction.snapshot)
      try transaction.moveItem(at: from, to: to)
    }
  }
}
