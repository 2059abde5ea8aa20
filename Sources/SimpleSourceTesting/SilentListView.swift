// A ListView that does nothing but swap the data: for benchmarks, and for tests that watch the main actor.

package import SimpleSource

/// A `ListView` that performs no UIKit work: each batch only swaps the data source's data, and cells are
/// empty objects. Time a view data source with it, or probe what runs on the main actor, without a view's
/// own work (``ReferenceListViewHost`` compares items on the main actor to check every batch).
@MainActor
package final class SilentListView: ListView {
  /// An empty cell.
  package final class Cell {
    init() {}
  }
  /// Headers and footers are empty cells too.
  package typealias SupplementaryView = Cell

  /// Creates a view.
  package init() {}

  /// Always on screen, so batches are performed, not reloaded.
  package var isOnScreen: Bool { true }
  /// Does nothing.
  package func reloadData() {}
  /// Swaps the data and nothing else.
  package func performBatchUpdates(
    _ update: StageCalls, animated: Bool, updateData: @escaping @MainActor () -> Void
  ) {
    updateData()
  }
  /// Does nothing.
  package func registerCell(_ method: Void, cellClass: AnyClass, reuseIdentifier: String) {}
  /// An empty cell.
  package func dequeueCell(_ method: Void, reuseIdentifier: String, at position: ItemPosition) -> Cell {
    Cell()
  }
  /// Does nothing.
  package func registerSupplementaryView(
    _ method: Void, viewClass: AnyClass, kind: SupplementaryKind, reuseIdentifier: String
  ) {}
  /// An empty view.
  package func dequeueSupplementaryView(
    _ method: Void, kind: SupplementaryKind, reuseIdentifier: String, at position: ItemPosition
  ) -> Cell { Cell() }
}
