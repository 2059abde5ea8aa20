// A ListView that does nothing but swap the data: for benchmarks, and for tests that watch the main actor.

public import SimpleSource

/// A `ListView` that performs no UIKit work: each batch only swaps the data source's data, and cells are
/// empty objects. Time a view data source with it, or probe what runs on the main actor, without a view's
/// own work (``ReferenceListViewHost`` compares items on the main actor to check every batch).
@MainActor
public final class SilentListView: ListView {
  /// An empty cell.
  public final class Cell {
    init() {}
  }
  /// Headers and footers are empty cells too.
  public typealias SupplementaryView = Cell

  /// Creates a view.
  public init() {}

  /// Always on screen, so batches are performed, not reloaded.
  public var isOnScreen: Bool { true }
  /// Does nothing.
  public func reloadData() {}
  /// Swaps the data and nothing else.
  public func performBatchUpdates(
    _ update: StageCalls, animated: Bool, updateData: @escaping @MainActor () -> Void
  ) {
    updateData()
  }
  /// Does nothing.
  public func registerCell(_ method: Void, cellClass: AnyClass, reuseIdentifier: String) {}
  /// An empty cell.
  public func dequeueCell(_ method: Void, reuseIdentifier: String, at position: ItemPosition) -> Cell {
    Cell()
  }
  /// Does nothing.
  public func registerSupplementaryView(
    _ method: Void, viewClass: AnyClass, kind: SupplementaryKind, reuseIdentifier: String
  ) {}
  /// An empty view.
  public func dequeueSupplementaryView(
    _ method: Void, kind: SupplementaryKind, reuseIdentifier: String, at position: ItemPosition
  ) -> Cell { Cell() }
}
