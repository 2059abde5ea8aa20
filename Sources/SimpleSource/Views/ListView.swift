// What a view data source needs from a table or collection view, free of UIKit so it is tested on Linux.

/// A list on screen that a ``ListViewDataSource`` drives: a `UITableView`, a `UICollectionView`, or a
/// headless stand-in in tests.
///
/// The view asks its data source for what it shows (as UIKit does), so the data source swaps its data
/// inside ``performBatchUpdates(_:animated:updateData:)`` (S5).
@MainActor
public protocol ListView: AnyObject {
  /// Whether the view is in a window. An off-screen view is reloaded instead of animated (UIKit's
  /// `window == nil` case).
  var isOnScreen: Bool { get }

  /// Discards every cell and asks the data source again.
  func reloadData()

  /// Performs one batch: calls `updateData` inside the update block, then makes the calls of `update`.
  /// - Parameters:
  ///   - update: The calls, in UIKit's coordinates.
  ///   - animated: Whether to animate.
  ///   - updateData: Sets the data source to the state after the batch; called exactly once.
  func performBatchUpdates(_ update: BatchUpdate, animated: Bool, updateData: () -> Void)
}
