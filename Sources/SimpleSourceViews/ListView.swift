// What a view data source needs from a table or collection view, free of UIKit so it is tested on Linux.

public import SimpleSourceCore

/// A list on screen that a ``ListViewDataSource`` drives: a `UITableView`, a `UICollectionView`, or a
/// headless stand-in in tests (`SimpleSourceTesting.ReferenceListViewHost`).
///
/// The view asks its data source for what it shows (as UIKit does), so the data source swaps its data
/// inside ``performBatchUpdates(_:animated:updateData:)`` (S5). Cells and supplementary views (headers,
/// footers) are reused by reuse identifier, as UIKit reuses them; a ``ViewFactory`` registers and dequeues
/// them through this protocol, so configuration code never casts.
@MainActor
public protocol ListView: AnyObject {
  /// The base class of the view's cells (`UITableViewCell`, `UICollectionViewCell`).
  associatedtype Cell: AnyObject
  /// The base class of the view's headers, footers and other supplementary views
  /// (`UITableViewHeaderFooterView`, `UICollectionReusableView`).
  associatedtype SupplementaryView: AnyObject
  /// How the view makes a reusable view for an identifier: from a class, a nib, a storyboard prototype, a
  /// built-in style. Each kind of view defines its own.
  associatedtype ReuseMethod

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
  func performBatchUpdates(_ update: StageCalls, animated: Bool, updateData: @escaping @MainActor () -> Void)

  /// Performs one stage animated, with `animations` for each kind of change: like
  /// ``performBatchUpdates(_:animated:updateData:)``. The default performs it animated the view's own
  /// way, for views that take no animation per change (collection views).
  func performBatchUpdates(
    _ update: StageCalls, animations: ChangeAnimations, updateData: @escaping @MainActor () -> Void)

  /// Teaches the view to make cells of `cellClass` for `reuseIdentifier`.
  func registerCell(_ method: ReuseMethod, cellClass: AnyClass, reuseIdentifier: String)

  /// A cell for `reuseIdentifier` at `position`: a reused one, or a new one made as registered.
  ///
  /// While the view reconfigures an item (R5), this returns the cell that item already has.
  func dequeueCell(_ method: ReuseMethod, reuseIdentifier: String, at position: ItemPosition) -> Cell

  /// Teaches the view to make supplementary views of `viewClass` of `kind` for `reuseIdentifier`.
  func registerSupplementaryView(
    _ method: ReuseMethod, viewClass: AnyClass, kind: SupplementaryKind, reuseIdentifier: String)

  /// A supplementary view of `kind` for `reuseIdentifier` at `position`: `[section, 0]` for a section's
  /// header or footer.
  func dequeueSupplementaryView(
    _ method: ReuseMethod, kind: SupplementaryKind, reuseIdentifier: String, at position: ItemPosition
  ) -> SupplementaryView
}

extension ListView {
  /// Performs the stage animated the view's own way: `animations` are not used.
  public func performBatchUpdates(
    _ update: StageCalls, animations: ChangeAnimations, updateData: @escaping @MainActor () -> Void
  ) {
    performBatchUpdates(update, animated: true, updateData: updateData)
  }
}

/// The kind of a supplementary view: a section's header, its footer, or a kind of the layout's own.
///
/// The UIKit skin maps ``header`` and ``footer`` to table headers and footers and to
/// `UICollectionView.elementKindSectionHeader` and `elementKindSectionFooter`.
public struct SupplementaryKind: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
  /// The kind's name, as a collection view layout names it.
  public var rawValue: String

  /// Creates a kind from its name.
  public init(rawValue: String) { self.rawValue = rawValue }

  /// A section's header.
  public static let header = SupplementaryKind(rawValue: "UICollectionElementKindSectionHeader")
  /// A section's footer.
  public static let footer = SupplementaryKind(rawValue: "UICollectionElementKindSectionFooter")

  /// The name.
  public var description: String { rawValue }
}
