// A type-checking stand-in for the parts of UIKit the skin uses (Linux has no UIKit); see .ci/uikit-typecheck.
// Signatures follow Apple's documentation. It proves the skin is well-typed Swift 6, not that UIKit agrees.
@_exported import Foundation

@MainActor open class UIView: NSObject {
  open var window: UIWindow? { nil }
  public static func performWithoutAnimation(_ actions: () -> Void) { actions() }
  open func setNeedsLayout() {}
}
@MainActor open class UIWindow: UIView {}
@MainActor open class UILabel: UIView { open var text: String? }
@MainActor open class UINib: NSObject {}

// In the SDK the data source protocols are @objc, with optional requirements. Linux has no @objc
// optionals, so the optional requirements the skin implements are plain requirements here: a misspelt
// witness then fails the type-check instead of silently never being called on iOS.
@MainActor public protocol UITableViewDataSource: NSObjectProtocol {
  func tableView(_ tableView: UITableView, numberOfRowsInSection section: Int) -> Int
  func tableView(_ tableView: UITableView, cellForRowAt indexPath: IndexPath) -> UITableViewCell
  // optional in the SDK:
  func numberOfSections(in tableView: UITableView) -> Int
  func tableView(_ tableView: UITableView, titleForHeaderInSection section: Int) -> String?
  func tableView(_ tableView: UITableView, titleForFooterInSection section: Int) -> String?
  func tableView(_ tableView: UITableView, canMoveRowAt indexPath: IndexPath) -> Bool
  func tableView(_ tableView: UITableView, moveRowAt sourceIndexPath: IndexPath, to destinationIndexPath: IndexPath)
}
@MainActor public protocol UICollectionViewDataSource: NSObjectProtocol {
  func collectionView(_ collectionView: UICollectionView, numberOfItemsInSection section: Int) -> Int
  func collectionView(_ collectionView: UICollectionView, cellForItemAt indexPath: IndexPath)
    -> UICollectionViewCell
  // optional in the SDK:
  func numberOfSections(in collectionView: UICollectionView) -> Int
  func collectionView(
    _ collectionView: UICollectionView, viewForSupplementaryElementOfKind kind: String, at indexPath: IndexPath
  ) -> UICollectionReusableView
  func collectionView(_ collectionView: UICollectionView, canMoveItemAt indexPath: IndexPath) -> Bool
  func collectionView(
    _ collectionView: UICollectionView, moveItemAt sourceIndexPath: IndexPath, to destinationIndexPath: IndexPath)
}

@MainActor open class UITableViewCell: UIView {
  public enum CellStyle: Int, Sendable { case `default`, value1, value2, subtitle }
  public init(style: CellStyle, reuseIdentifier: String?) { super.init() }
  open var textLabel: UILabel? { nil }
}
@MainActor open class UITableViewHeaderFooterView: UIView { open var textLabel: UILabel? { nil } }

@MainActor open class UITableView: UIView {
  public enum RowAnimation: Int, Sendable {
    case fade, right, left, top, bottom, none, middle
    case automatic = 100
  }
  open weak var dataSource: (any UITableViewDataSource)?
  open func reloadData() {}
  open func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) { updates?() }
  open func deleteSections(_ sections: IndexSet, with animation: RowAnimation) {}
  open func insertSections(_ sections: IndexSet, with animation: RowAnimation) {}
  open func reloadSections(_ sections: IndexSet, with animation: RowAnimation) {}
  open func moveSection(_ section: Int, toSection newSection: Int) {}
  open func deleteRows(at indexPaths: [IndexPath], with animation: RowAnimation) {}
  open func insertRows(at indexPaths: [IndexPath], with animation: RowAnimation) {}
  open func reloadRows(at indexPaths: [IndexPath], with animation: RowAnimation) {}
  open func moveRow(at indexPath: IndexPath, to newIndexPath: IndexPath) {}
  open func reconfigureRows(at indexPaths: [IndexPath]) {}
  open func register(_ cellClass: AnyClass?, forCellReuseIdentifier identifier: String) {}
  open func register(_ nib: UINib?, forCellReuseIdentifier identifier: String) {}
  open func register(_ aClass: AnyClass?, forHeaderFooterViewReuseIdentifier identifier: String) {}
  open func register(_ nib: UINib?, forHeaderFooterViewReuseIdentifier identifier: String) {}
  open func dequeueReusableCell(withIdentifier identifier: String) -> UITableViewCell? { nil }
  open func dequeueReusableCell(withIdentifier identifier: String, for indexPath: IndexPath)
    -> UITableViewCell
  { fatalError() }
  open func dequeueReusableHeaderFooterView(withIdentifier identifier: String) -> UITableViewHeaderFooterView?
  { nil }
  open func headerView(forSection section: Int) -> UITableViewHeaderFooterView? { nil }
  open func footerView(forSection section: Int) -> UITableViewHeaderFooterView? { nil }
}

@MainActor open class UICollectionReusableView: UIView {}
@MainActor open class UICollectionViewCell: UICollectionReusableView {}
@MainActor open class UICollectionView: UIView {
  open weak var dataSource: (any UICollectionViewDataSource)?
  open func reloadData() {}
  open func performBatchUpdates(_ updates: (() -> Void)?, completion: ((Bool) -> Void)? = nil) { updates?() }
  open func deleteSections(_ sections: IndexSet) {}
  open func insertSections(_ sections: IndexSet) {}
  open func reloadSections(_ sections: IndexSet) {}
  open func moveSection(_ section: Int, toSection newSection: Int) {}
  open func deleteItems(at indexPaths: [IndexPath]) {}
  open func insertItems(at indexPaths: [IndexPath]) {}
  open func reloadItems(at indexPaths: [IndexPath]) {}
  open func moveItem(at indexPath: IndexPath, to newIndexPath: IndexPath) {}
  open func reconfigureItems(at indexPaths: [IndexPath]) {}
  open func register(_ cellClass: AnyClass?, forCellWithReuseIdentifier identifier: String) {}
  open func register(_ nib: UINib?, forCellWithReuseIdentifier identifier: String) {}
  open func register(
    _ viewClass: AnyClass?, forSupplementaryViewOfKind elementKind: String,
    withReuseIdentifier identifier: String
  ) {}
  open func register(
    _ nib: UINib?, forSupplementaryViewOfKind kind: String, withReuseIdentifier identifier: String
  ) {}
  open func dequeueReusableCell(withReuseIdentifier identifier: String, for indexPath: IndexPath)
    -> UICollectionViewCell
  { fatalError() }
  open func dequeueReusableSupplementaryView(
    ofKind elementKind: String, withReuseIdentifier identifier: String, for indexPath: IndexPath
  ) -> UICollectionReusableView { fatalError() }
  open func supplementaryView(forElementKind elementKind: String, at indexPath: IndexPath)
    -> UICollectionReusableView?
  { nil }
  open func beginInteractiveMovementForItem(at indexPath: IndexPath) -> Bool { true }
  open func endInteractiveMovement() {}
  open func cancelInteractiveMovement() {}
}
